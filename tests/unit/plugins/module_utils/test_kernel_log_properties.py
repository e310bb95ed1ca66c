# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 29, property-based: any kernel log text gives a list of Xid events, never an exception.

Lines are built from the pieces of real Xid lines (every timestamp format, PCI ids, codes) with junk in each
place: codes of thousands of digits, non-ASCII digits, long blanks. The events must be well-formed and go through
gpu_health's judgement (_health.evaluate) and JSON without raising.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re

from hypothesis import given, settings, strategies as st

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _facts
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log as kl
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi as nvsmi
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import read_fixture

SETTINGS = settings(max_examples=200, deadline=None, database=None)
LINES_SETTINGS = settings(SETTINGS, max_examples=150)

FACTS = _facts.from_report(nvsmi.parse(read_fixture('nvidia_smi', 'hgx_h200_8gpu_r570.xml')), [], pci_ids={})
LOGS = [read_fixture('kernel_log', name) for name in ('dmesg_ctime.txt', 'dmesg_decode_iso.txt', 'dmesg_raw.txt',
                                                      'journal_short.txt', 'journal_short_iso.txt', 'no_xid.txt')]
PCI_RE = re.compile(r'[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\Z')

headers = st.one_of(
    st.sampled_from(['', '[  123.456789] ', '[Sun Feb 23 16:24:18 2025] ', '2025-02-23T16:24:18+0000 gpu01 kernel: ',
                     'Feb 23 16:24:18 gpu01 kernel: ', 'kern  :warn  : [  1.5] ', '[\u0661\u0662.\u0663] ',
                     '\uff12\uff10\uff12\uff15-02-23T16:24:18Z h kernel: ']),
    st.text(max_size=30))
pcis = st.one_of(st.sampled_from(['PCI:0000:3b:00', '0000:03:00', 'PCI:00000000:3B:00.0', 'PCI:0000:18:00.0',
                                  'PCI:ffffffff:ff:ff.7', 'PCI:0000:3b', 'PCI:\u0660\u0660\u0660\u0660:3b:00']),
                 st.from_regex(r'(PCI:)?[0-9a-fA-F]{1,9}:[0-9a-fA-F]{1,3}:[0-9a-fA-F]{1,3}(\.[0-9])?', fullmatch=True),
                 st.text(max_size=12))
codes = st.one_of(st.integers(0, 200).map(str), st.integers(0, 10 ** 12).map(str),
                  st.integers(4290, 6000).map(lambda n: '7' * n), st.integers(1, 30).map(lambda n: '0' * n + '79'),
                  st.sampled_from(['\u0667\u0669', '\uff17\uff19', '7\u0669', '-79', '+79', '79.5', '', ' 79', '1e3']),
                  st.text(max_size=6))
tails = st.one_of(st.sampled_from([', pid=1234, name=python3, GPU has fallen off the bus.', ', 0003 00000000 0000a1c0',
                                   '', ',', ' ' * 5000 + 'tail' + ' ' * 5000]),
                  st.text(max_size=40))


@st.composite
def xid_line(draw):
    return '%sNVRM: Xid (%s): %s%s' % (draw(headers), draw(pcis), draw(codes), draw(tails))


def _check_events(events):
    assert isinstance(events, list)
    for event in events:
        assert sorted(event) == ['code', 'description', 'host', 'line', 'pci', 'status', 'text', 'time']
        code = event['code']
        assert code is None or (isinstance(code, int) and not isinstance(code, bool) and 0 <= code < 10 ** kl.XID_CODE_MAX_DIGITS)
        assert event['status'] in ('ok', 'warn', 'fail')
        assert (code is None) <= (event['status'] == 'warn')
        # A device above 1f is no PCI address: the event is kept, with no device (host-wide).
        assert PCI_RE.match(event['pci']) if event['pci'] is not None else \
            re.search(r'Xid \((?:PCI:)?[0-9a-fA-F]+:[0-9a-fA-F]{2}:[2-9a-fA-F]', event['line']), event
        for key in ('time', 'host'):
            assert event[key] is None or isinstance(event[key], str)
        assert isinstance(event['text'], str) and event['text'] == event['text'].strip()
        assert isinstance(event['description'], str)
    result = _health.evaluate(FACTS, events)
    assert result['status'] in ('ok', 'warn', 'fail')
    json.dumps(result, allow_nan=False)


@LINES_SETTINGS
@given(st.lists(xid_line(), min_size=1, max_size=6), st.sampled_from(LOGS), st.sampled_from(['\n', '\r\n', '\u2028']))
def test_xid_lines_with_junk_give_well_formed_events(lines, log, newline):
    text = newline.join(lines) + newline + log
    _check_events(kl.parse(text))


@SETTINGS
@given(st.one_of(st.text(max_size=400), st.binary(max_size=400),
                 st.builds(lambda a, b: a + 'NVRM: Xid (' + b, st.text(max_size=40), st.text(max_size=80))))
def test_any_text_gives_events(text):
    _check_events(kl.parse(text))


@SETTINGS
@given(codes)
def test_a_code_is_read_from_ascii_digits_only(code):
    events = kl.parse('NVRM: Xid (PCI:0000:3b:00): %s, x' % code)
    if events and events[0]['code'] is not None:
        digits = re.match(r'\s*([0-9]+)', code, re.ASCII).group(1)
        assert events[0]['code'] == int(digits)
