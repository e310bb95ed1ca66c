# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Spot notices, property-based (issue 29): whatever a metadata service answers, every parse_* function and
Poller.check() give a Notice, None, or MalformedResponse / MetadataUnreachable; never another exception.

The bodies are random bytes, random JSON, documented shapes with junk in every field, times out of datetime's range,
and nesting far past what json.loads can recurse into.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import email.message
import email.utils
import io
import json
import math
import urllib.error

from hypothesis import given, settings, strategies as st

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _spot
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import HTTPResponse

FAST = settings(max_examples=250, deadline=None, database=None)

# ---------------------------------------------------------------------------------------------------------------
# Strategies

# Any JSON value, huge and non-finite numbers included (json.dumps writes NaN and Infinity, as a broken service might).
JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-10 ** 400, max_value=10 ** 400),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)), max_leaves=12)

MONTHS = ('Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec', 'Foo')
BIG = st.one_of(st.integers(min_value=0, max_value=99), st.integers(min_value=0, max_value=10 ** 30))
ZONES = st.one_of(st.sampled_from(['GMT', 'UTC', 'Z', '', '+0000', '-2359', '+2400', 'EST']),
                  st.integers(min_value=-10 ** 25, max_value=10 ** 25).map(lambda n: '%+d' % n))
RFC1123 = st.builds(lambda wd, d, mon, y, h, mi, s, z: '%s, %s %s %s %s:%s:%s %s' % (wd, d, mon, y, h, mi, s, z),
                    st.sampled_from(['Mon', 'Sun', 'Xyz']), BIG, st.sampled_from(MONTHS), BIG, BIG, BIG, BIG, ZONES)
ISO_ZONES = st.one_of(st.sampled_from(['Z', 'z', '', '+00:00', '-23:59', '+24:00', '+08:00']),
                      st.builds(lambda h, m: '+%s:%s' % (h, m), BIG, BIG))
ISO8601 = st.builds(lambda y, mo, d, sep, h, mi, s, frac, z: '%04d-%02d-%02d%s%02d:%02d:%02d%s%s' % (
    y, mo, d, sep, h, mi, s, frac, z), BIG, BIG, BIG, st.sampled_from(['T', 't', ' ']), BIG, BIG, BIG,
    st.sampled_from(['', '.5', '.999999', '.1234567890123']), ISO_ZONES)
# Times the parsers read: any instant datetime can hold, as the services write it (and the providers' formats mixed).
INSTANTS = st.datetimes(min_value=datetime.datetime(1, 1, 2), max_value=datetime.datetime(9999, 12, 30))
GOOD_TIMES = st.one_of(
    INSTANTS.map(lambda dt: '%04d-%02d-%02dT%02d:%02d:%02dZ' % dt.timetuple()[:6]),
    INSTANTS.map(lambda dt: '%04d-%02d-%02d %02d:%02d:%02d' % dt.timetuple()[:6]),
    INSTANTS.map(lambda dt: email.utils.format_datetime(dt.replace(tzinfo=datetime.timezone.utc), usegmt=True)))
TIMES = st.one_of(GOOD_TIMES, RFC1123, ISO8601, st.text(max_size=40), st.just(''))
# A field of a documented shape: a plausible value, a time, or any JSON value at all.
FIELD = st.one_of(TIMES, JSON_VALUES, st.sampled_from(['terminate', 'stop', 'Preempt', 'Terminate', 'Scheduled',
                                                       'Started', 'fake-vm-0', 'TRUE', 'FALSE']))


def _nested(depth, opener, closer, inner=b'1', close=True):
    return opener * depth + inner + (closer * depth if close else b'')


DEEP = st.builds(_nested, st.integers(min_value=1, max_value=40000), st.sampled_from([b'[', b'{"a":', b'[{"b":[']),
                 st.sampled_from([b']', b'}', b'}]}']), st.sampled_from([b'1', b'"[[[{{"', b'']), st.booleans())
AWS_DOCS = st.one_of(
    st.fixed_dictionaries({'action': st.one_of(st.text(min_size=1, max_size=20), FIELD),
                           'time': st.one_of(GOOD_TIMES, FIELD)}, optional={'extra': JSON_VALUES}),
    st.fixed_dictionaries({}, optional={'action': FIELD, 'time': FIELD, 'extra': JSON_VALUES}))
AZURE_EVENTS = st.one_of(
    st.fixed_dictionaries({'EventId': FIELD, 'EventType': st.sampled_from(['Preempt', 'Terminate', 'Freeze']),
                           'EventStatus': st.sampled_from(['Scheduled', 'Started', 'Completed']),
                           'Resources': st.lists(st.one_of(st.just('fake-vm-0'), st.text(max_size=10)), max_size=3),
                           'NotBefore': st.one_of(GOOD_TIMES, st.just(''), FIELD)}),
    st.fixed_dictionaries({}, optional={
        'EventId': FIELD, 'EventType': FIELD, 'EventStatus': FIELD, 'Resources': st.one_of(
            FIELD, st.lists(FIELD, max_size=3)), 'NotBefore': FIELD, 'ResourceType': FIELD}))
AZURE_DOCS = st.one_of(
    st.fixed_dictionaries({'DocumentIncarnation': JSON_VALUES,
                           'Events': st.lists(st.one_of(AZURE_EVENTS, JSON_VALUES), max_size=4)}),
    st.fixed_dictionaries({}, optional={'Events': JSON_VALUES}))


def _dumps(value):
    return json.dumps(value).encode('utf-8')


def _text_bodies(strategy):
    return st.one_of(strategy.map(lambda t: t.encode('utf-8', 'surrogatepass')), strategy)


ANY_BODY = st.one_of(st.binary(max_size=300), _text_bodies(st.text(max_size=200)), JSON_VALUES.map(_dumps), DEEP,
                     st.none())
# Each: junk of any kind, or the documented shape with junk in it (twice as likely, so that notices come out too).
BODIES = {
    'aws': st.one_of(ANY_BODY, AWS_DOCS.map(_dumps), AWS_DOCS.map(_dumps)),
    'gcp': st.one_of(ANY_BODY, st.sampled_from([b'TRUE', b'FALSE', b' true\n', b'TRUE\xff', 'FALSE\u2028'])),
    'azure': st.one_of(ANY_BODY, AZURE_DOCS.map(_dumps), AZURE_DOCS.map(_dumps)),
    'alibaba': st.one_of(ANY_BODY, _text_bodies(TIMES), _text_bodies(GOOD_TIMES)),
    'tencent': st.one_of(ANY_BODY, _text_bodies(TIMES), _text_bodies(GOOD_TIMES)),
}
STATUSES = st.one_of(st.just(200), st.sampled_from([200, 404]), st.integers(min_value=100, max_value=599))


# ---------------------------------------------------------------------------------------------------------------
# What may come out

def assert_notice(provider, result):
    """None, or a Notice of this provider with a finite deadline and a one-line detail."""
    if result is None:
        return
    assert isinstance(result, _spot.Notice), result
    assert result.provider == provider
    assert isinstance(result.action, str) and result.action and result.action.isprintable()
    assert isinstance(result.deadline, float) and math.isfinite(result.deadline)
    assert isinstance(result.detail, str) and result.detail.isprintable()


def assert_parser_outcome(provider, call):
    try:
        result = call()
    except _spot.MalformedResponse as e:
        assert isinstance(e, ValueError)
        assert str(e).isprintable(), str(e)
        return
    assert_notice(provider, result)


def _parse(provider, status, body):
    if provider == 'azure':
        return lambda: _spot.parse_azure(status, body, now=1000.0, vm_name='fake-vm-0')
    return lambda: _spot.PARSERS[provider](status, body, now=1000.0)


# ---------------------------------------------------------------------------------------------------------------
# One property per parser

@FAST
@given(status=STATUSES, body=BODIES['aws'])
def test_parse_aws_never_raises_past_its_boundary(status, body):
    assert_parser_outcome('aws', _parse('aws', status, body))


@FAST
@given(status=STATUSES, body=BODIES['gcp'])
def test_parse_gcp_never_raises_past_its_boundary(status, body):
    assert_parser_outcome('gcp', _parse('gcp', status, body))


@FAST
@given(status=STATUSES, body=BODIES['azure'], vm_name=st.sampled_from([None, 'fake-vm-0']))
def test_parse_azure_never_raises_past_its_boundary(status, body, vm_name):
    assert_parser_outcome('azure', lambda: _spot.parse_azure(status, body, now=1000.0, vm_name=vm_name))


@FAST
@given(status=STATUSES, body=BODIES['alibaba'])
def test_parse_alibaba_never_raises_past_its_boundary(status, body):
    assert_parser_outcome('alibaba', _parse('alibaba', status, body))


@FAST
@given(status=STATUSES, body=BODIES['tencent'])
def test_parse_tencent_never_raises_past_its_boundary(status, body):
    assert_parser_outcome('tencent', _parse('tencent', status, body))


# ---------------------------------------------------------------------------------------------------------------
# Poller.check() behind a fake opener: tokens and notice bodies both junk

class JunkOpener(object):
    """Answers each request with the next (status, body) of a list; 404 and nothing once the list is used up."""

    def __init__(self, answers):
        self.answers = list(answers)

    def open(self, request, timeout=None):
        request.header_items()     # as urllib would: the headers must be there
        status, body = self.answers.pop(0) if self.answers else (404, b'')
        if status >= 400:
            raise urllib.error.HTTPError(request.full_url, status, 'error', email.message.Message(), io.BytesIO(body))
        return HTTPResponse(status, body)


def _answers(provider):
    body = BODIES[provider].map(lambda b: b.encode('utf-8', 'surrogatepass') if isinstance(b, str) else (b or b''))
    token = st.one_of(st.binary(max_size=40), st.sampled_from([b'TOKEN', b'T\r\nX: 1', 'T\u00e9'.encode('utf-8')]))
    return st.lists(st.tuples(STATUSES, st.one_of(body, token)), max_size=5)


@settings(max_examples=100, deadline=None, database=None)
@given(data=st.data(), provider=st.sampled_from(_spot.PROVIDERS))
def test_poller_check_never_raises_past_its_boundary(data, provider):
    answers = data.draw(_answers(provider))
    poller = _spot.Poller(provider, base_url='http://md', vm_name='fake-vm-0', opener=JunkOpener(answers))
    for _attempt in range(2):           # twice: a cached (junk) token is used again
        try:
            result = poller.check()
        except _spot.MetadataUnreachable as e:   # MalformedResponse included
            assert str(e).startswith('Metadata service http://md/')
            assert str(e).isprintable(), str(e)
            continue
        assert_notice(provider, result)
