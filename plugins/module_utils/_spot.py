# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Spot/preemptible interruption notices: which cloud this is, and whether its metadata service announces a reclaim.

Used by the spot role's watcher service (roles/spot/files/gpuops-spot.py), which calls ``Poller.check()`` every
few seconds. Standard library only; Python 3.8+.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import collections
import datetime
import email.utils
import functools
import http.client
import json
import os
import re
import socket
import time
import urllib.error
import urllib.request

from ansible_collections.gpuops.gpu_server.plugins.module_utils._json_text import too_deep

PROVIDERS = ('aws', 'gcp', 'azure', 'alibaba', 'tencent')

DEFAULT_BASE_URLS = {
    'aws': 'http://169.254.169.254',
    'gcp': 'http://metadata.google.internal',
    'azure': 'http://169.254.169.254',
    'alibaba': 'http://100.100.100.200',
    'tencent': 'http://metadata.tencentyun.com',
}

# Documented time from the notice appearing to the instance being reclaimed, in seconds.
NOTICE_WINDOW_SECONDS = {
    # "A Spot Instance interruption notice is a warning that is issued two minutes before Amazon EC2 stops or
    # terminates your Spot Instance" (hibernation gets the notice but no two minutes: it starts at once).
    # https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html
    'aws': 120,
    # Preemption notice, then 30 seconds to the ACPI G2 soft-off / hard stop.
    # https://cloud.google.com/compute/docs/instances/spot#preemption-process
    'gcp': 30,
    # Scheduled Events: Preempt has a minimum NotBefore of 30 seconds.
    # https://learn.microsoft.com/azure/virtual-machines/linux/scheduled-events
    'azure': 30,
    # "automatic interruption and release are triggered, and the instance will be released 5 minutes later"
    # (the instance sits in the To Be Recycled / locked state meanwhile).
    # https://www.alibabacloud.com/help/en/ecs/user-guide/what-is-a-spot-instance
    'alibaba': 300,
    # NOT CONFIRMED. Tencent's page on the reclaim notice (https://www.tencentcloud.com/document/product/213/32487,
    # "Querying the Reclamation Status of a Spot Instance") documents the path and the body but states no lead time,
    # and no other Tencent page found says one. Conservative stand-in: the shortest window any provider here
    # documents (30 s). The real deadline comes from the termination-time body; this figure only matters where no
    # deadline is given (and for the fake metadata server used in tests).
    'tencent': 30,
}

# The chassis asset tag every Azure VM carries (ASCII codes of "MSFT AZURE VM"); cloud-init's ds-identify keys
# Azure on it alone, and a local Hyper-V guest (also "Microsoft Corporation" / "Virtual Machine") lacks it.
AZURE_CHASSIS_ASSET_TAG = '7783-7084-3265-9085-8269-3286-77'

# The /sys/class/dmi/id files read_dmi() reads (all world-readable; product_serial/uuid are root-only, not used).
DMI_KEYS = ('sys_vendor', 'product_name', 'product_version', 'bios_vendor', 'bios_version', 'board_vendor',
            'chassis_asset_tag')

# No metadata answer this module reads is more than a few hundred bytes; more is broken or hostile.
MAX_BODY_BYTES = 64 * 1024
# The deepest document read here (Azure: object, Events array, event object, Resources array) nests 4 levels. Deeper
# JSON is refused before json.loads, which recurses once per level and would raise RecursionError near 1000.
MAX_JSON_DEPTH = 32

AWS_TOKEN_TTL_SECONDS = 21600
# Refresh a cached session token this long before it expires, so a request never carries one that just lapsed.
TOKEN_REFRESH_MARGIN_SECONDS = 60

PATHS = {
    'aws': '/latest/meta-data/spot/instance-action',
    'gcp': '/computeMetadata/v1/instance/preempted',
    'azure': '/metadata/scheduledevents?api-version=2020-07-01',
    'alibaba': '/latest/meta-data/instance/spot/termination-time',
    'tencent': '/latest/meta-data/spot/termination-time',
}
TOKEN_PATH = '/latest/api/token'
# A session token as the services issue it (base64-like): visible ASCII, nothing a header could not carry.
_TOKEN = re.compile(r'[!-~]{1,4096}\Z')
# (header asking for a token with this TTL, header carrying the token) for the services with session tokens.
_TOKEN_HEADERS = {
    'aws': ('X-aws-ec2-metadata-token-ttl-seconds', 'X-aws-ec2-metadata-token'),
    # Alibaba's "security hardening mode": optional unless the instance sets HttpTokens=required, when a request
    # without a token is refused. Asked for only after such a refusal.
    'alibaba': ('X-aliyun-ecs-metadata-token-ttl-seconds', 'X-aliyun-ecs-metadata-token'),
}

AWS_ACTIONS = ('terminate', 'stop', 'hibernate')
# Azure event types that mean this VM goes away at NotBefore. Preempt is the Spot eviction. Terminate is a
# deletion with Terminate Notification enabled (scale-in or a user delete): not a Spot eviction, but the VM and its
# GPU jobs are gone all the same, so it counts too, as action 'terminate'. Reboot, Redeploy and Freeze leave the VM
# in place and do not count.
AZURE_EVENT_ACTIONS = {'Preempt': 'preempt', 'Terminate': 'terminate'}
# Scheduled: starts at NotBefore. Started: already under way (NotBefore is then empty). Completed and Canceled
# events are over and do not count.
AZURE_ACTIVE_STATUSES = ('Scheduled', 'Started')

# Tencent's doc: the termination time is given "in UTC+8", as e.g. "2018-08-18 12:05:33" (no zone in the text).
TENCENT_TZ = datetime.timezone(datetime.timedelta(hours=8))

Notice = collections.namedtuple('Notice', ['provider', 'action', 'deadline', 'detail'])
Notice.__doc__ = """An announced reclaim.

``provider``: one of PROVIDERS. ``action``: 'terminate', 'stop', 'hibernate' (AWS), 'preempt' (GCP, Azure Preempt)
or 'terminate' (Azure Terminate, Alibaba, Tencent). ``deadline``: epoch seconds (float) when the instance goes, or
None when unknown. ``detail``: a short text for the log.
"""


class MetadataUnreachable(Exception):
    """The metadata service gave no usable answer: refused, timed out, not resolvable, 5xx or an unexpected status."""

    def __init__(self, url, reason):
        self.url = url
        self.reason = reason
        super(MetadataUnreachable, self).__init__('Metadata service %s: %s' % (url, reason))


class MalformedResponse(MetadataUnreachable, ValueError):
    """The service answered with a body that is not the documented format, or a status the parser does not expect.

    Raised by every parse_* function (``url`` is then the provider's path, as the parsers know no host) and by
    Poller.check() (the full URL, and the start of the body). A MetadataUnreachable, so a watcher that retries on
    those keeps running, and a ValueError.
    """


# ---------------------------------------------------------------------------------------------------------------
# Which cloud


def read_dmi(root='/sys/class/dmi/id'):
    """``{key: value}`` for the DMI_KEYS files under ``root`` that exist and can be read, values stripped."""
    dmi = {}
    for key in DMI_KEYS:
        try:
            with open(os.path.join(root, key), 'rb') as f:
                raw = f.read(4096)
        except (OSError, IOError):
            continue
        dmi[key] = raw.decode('utf-8', errors='replace').replace('\x00', '').strip()
    return dmi


def detect_provider(dmi):
    """The provider (one of PROVIDERS) that the DMI strings in ``dmi`` identify, or None.

    Keys as read_dmi() returns them; any may be missing. Matching is case-insensitive on stripped values.
    """
    def get(key):
        return str(dmi.get(key) or '').strip().casefold()

    sys_vendor, product_name = get('sys_vendor'), get('product_name')
    bios_vendor, board_vendor = get('bios_vendor'), get('board_vendor')
    # Nitro instances (and metal): "Amazon EC2" as system, BIOS and board vendor; product_name is the instance type.
    if 'amazon ec2' in (sys_vendor, bios_vendor, board_vendor):
        return 'aws'
    # Xen instances: sys_vendor "Xen", product_name "HVM domU", product/BIOS version like "4.11.amazon".
    if 'amazon' in get('product_version') or 'amazon' in get('bios_version'):
        return 'aws'
    # GCE: "Google" / "Google Compute Engine", BIOS vendor "Google". A Chromebook is also sys_vendor "Google" (with
    # a coreboot BIOS), hence not sys_vendor alone.
    if product_name == 'google compute engine' or (sys_vendor == 'google' and bios_vendor == 'google'):
        return 'gcp'
    if get('chassis_asset_tag') == AZURE_CHASSIS_ASSET_TAG:
        return 'azure'
    # ECS: sys_vendor "Alibaba Cloud", product_name "Alibaba Cloud ECS" (cloud-init's ds-identify keys on the latter).
    if sys_vendor == 'alibaba cloud' or product_name == 'alibaba cloud ecs':
        return 'alibaba'
    # CVM: sys_vendor "Tencent Cloud", product_name "CVM"; cloud-init's DataSourceTencentCloud expects the product
    # name "Tencent Cloud CVM".
    if sys_vendor == 'tencent cloud' or product_name == 'tencent cloud cvm':
        return 'tencent'
    return None


# ---------------------------------------------------------------------------------------------------------------
# Parsers: (HTTP status, body) -> Notice or None; MalformedResponse for anything else.
#
# No parser raises past its boundary: whatever the body holds (any bytes, JSON of any shape and depth, times out of
# datetime's range), the answer is a Notice, None or MalformedResponse. Inside, the helpers raise ValueError with a
# message; _parser() turns it, and the errors of the standard library's readers that bad input can cause, into
# MalformedResponse.

# What the standard library's readers (json, datetime, email.utils) raise on input they cannot read.
_READER_ERRORS = (ValueError, TypeError, OverflowError, OSError, RecursionError)


def _parser(provider):
    """Decorator: the parser's errors become MalformedResponse(PATHS[provider], message)."""
    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            except MalformedResponse:
                raise
            except _READER_ERRORS as e:
                message = str(e) if isinstance(e, ValueError) else '%s: %s: %s' % (provider, type(e).__name__, e)
                raise MalformedResponse(PATHS[provider], _printable(message, 600))
        return wrapper
    return decorate


def _printable(text, limit=200):
    """``text`` on one line, control characters replaced by '?', at most ``limit`` characters (then '...')."""
    text = ''.join(c if c.isprintable() else '?' for c in text[:limit + 1])
    return text[:limit] + '...' if len(text) > limit else text


def _short(value, limit=200):
    """repr() of a value from a body, cut to ``limit`` characters (the nesting is bounded, so repr() is safe)."""
    text = repr(value)
    return text[:limit] + '...' if len(text) > limit else text


def _now(now):
    return time.time() if now is None else float(now)


def _text(provider, body):
    """The body as text; bytes must be UTF-8 (as JSON and the plain-text answers are)."""
    if body is None:
        return ''
    if isinstance(body, (bytes, bytearray)):
        try:
            return bytes(body).decode('utf-8')
        except UnicodeDecodeError as e:
            raise ValueError('%s: the answer is not UTF-8 text (byte %d: %s)' % (provider, e.start, e.reason))
    if not isinstance(body, str):
        raise ValueError('%s: the answer is a %s, not text' % (provider, type(body).__name__))
    return body


def _load_json(provider, what, text):
    """json.loads(text), refusing documents nested deeper than MAX_JSON_DEPTH before parsing them."""
    pos = too_deep(text, MAX_JSON_DEPTH)
    if pos is not None:
        raise ValueError('%s: %s nests deeper than %d levels (at character %d): %r'
                         % (provider, what, MAX_JSON_DEPTH, pos, text[:80]))
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError('%s: %s is not JSON: %r' % (provider, what, text[:200]))


def _expect_status(provider, status, allowed):
    if status not in allowed:
        raise ValueError('%s: unexpected HTTP status %r' % (provider, status))


def _epoch(dt, assume_tz=datetime.timezone.utc):
    """Epoch seconds of ``dt`` (``assume_tz`` when naive); ValueError when it falls outside what Python can count."""
    try:
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=assume_tz)
        return dt.timestamp()
    except (ValueError, OverflowError, OSError) as e:
        raise ValueError('the time %s is out of range (%s)' % (dt.isoformat(), e))


def _parse_iso8601(text, assume_tz=datetime.timezone.utc):
    """Epoch seconds for "2017-09-18T08:22:00Z" (fractions and numeric offsets allowed; no zone means ``assume_tz``)."""
    value = text.strip()
    if value[-1:] in ('Z', 'z'):
        value = value[:-1] + '+00:00'
    if 'T' not in value and 't' not in value:
        raise ValueError('not an ISO 8601 date and time: %r' % (text[:200],))
    try:
        dt = datetime.datetime.fromisoformat(value)
    except (ValueError, OverflowError):
        raise ValueError('not an ISO 8601 time: %r' % (text[:200],))
    return _epoch(dt, assume_tz)


@_parser('aws')
def parse_aws(status, body, now=None):
    """GET /latest/meta-data/spot/instance-action: 404 = no notice; 200 = {"action": ..., "time": "...Z"}.

    ``action`` is documented as terminate, stop or hibernate; another non-empty string is kept as given (lower
    case) rather than dropping what is still a notice. ``now`` is unused: the body carries the time.
    """
    del now
    _expect_status('aws', status, (200, 404))
    if status == 404:
        return None
    text = _text('aws', body)
    doc = _load_json('aws', 'instance-action', text)
    if not isinstance(doc, dict):
        raise ValueError('aws: instance-action is not a JSON object: %r' % (text[:200],))
    action, when = doc.get('action'), doc.get('time')
    if not isinstance(action, str) or not action.strip():
        raise ValueError('aws: instance-action has no action: %r' % (text[:200],))
    if not isinstance(when, str) or not when.strip():
        raise ValueError('aws: instance-action has no time: %r' % (text[:200],))
    action = _printable(action.strip().lower(), 64)
    try:
        deadline = _parse_iso8601(when)
    except ValueError as e:
        raise ValueError('aws: instance-action time: %s' % (e,))
    return Notice('aws', action, deadline, 'instance-action %s at %s' % (action, _printable(when.strip())))


@_parser('gcp')
def parse_gcp(status, body, now=None):
    """GET /computeMetadata/v1/instance/preempted: "TRUE" or "FALSE". The deadline is ``now`` + the 30 s window."""
    _expect_status('gcp', status, (200,))
    text = _text('gcp', body)
    value = text.strip().upper()
    if value == 'FALSE':
        return None
    if value != 'TRUE':
        raise ValueError('gcp: instance/preempted is neither TRUE nor FALSE: %r' % (text[:200],))
    return Notice('gcp', 'preempt', _now(now) + NOTICE_WINDOW_SECONDS['gcp'], 'instance/preempted is TRUE')


def _parse_rfc1123(text):
    try:
        dt = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):   # Python < 3.10 raises TypeError on garbage
        dt = None
    if dt is None:
        raise ValueError('not an RFC 1123 time: %r' % (text[:200],))
    return _epoch(dt)


def _azure_event_notice(event, wanted, now):
    """The Notice one scheduled event announces for this VM, None when it announces none; ValueError when an event
    that could count has fields of the wrong type or a time that cannot be read."""
    if not isinstance(event, dict):
        raise ValueError('an event is not a JSON object: %s' % (_short(event),))
    event_type, status_ = event.get('EventType'), event.get('EventStatus')
    if not isinstance(event_type, str) or not isinstance(status_, str):
        raise ValueError('EventType and EventStatus must be strings: %s' % (_short(event),))
    action = AZURE_EVENT_ACTIONS.get(event_type)
    if action is None or status_ not in AZURE_ACTIVE_STATUSES:
        return None
    resources = event.get('Resources') or []
    if not isinstance(resources, list) or not all(isinstance(r, str) for r in resources):
        raise ValueError('Resources is not a list of names: %s' % (_short(event),))
    if wanted is not None and wanted not in [r.casefold() for r in resources]:
        return None
    not_before = event.get('NotBefore') or ''
    if not isinstance(not_before, str):
        raise ValueError('NotBefore is not a string: %s' % (_short(event),))
    # Empty once the event has started: it is happening now.
    deadline = _parse_rfc1123(not_before) if not_before.strip() else _now(now)
    event_id = event.get('EventId', '?')
    detail = '%s event %s %s, NotBefore %s, resources %s' % (
        event_type, event_id if isinstance(event_id, str) else _short(event_id, 80), status_,
        not_before.strip() or '(now)', ','.join(resources) or '(none)')
    return Notice('azure', action, deadline, _printable(detail, 400))


@_parser('azure')
def parse_azure(status, body, now=None, vm_name=None):
    """GET /metadata/scheduledevents: the earliest active Preempt (or Terminate) event, or None.

    ``vm_name``: count only events whose Resources name this VM (case-insensitive). Scheduled events for every VM
    of an availability set or scale-set placement group reach every member, so a watcher should pass it.

    An event that is not an object, has a non-string EventType or EventStatus, or (when it is an active Preempt or
    Terminate) a Resources or NotBefore that cannot be read, is malformed. A notice found in the other events is
    still returned (a broken neighbour must not hide an eviction); without one, the body is MalformedResponse.
    """
    _expect_status('azure', status, (200,))
    text = _text('azure', body)
    doc = _load_json('azure', 'scheduledevents', text)
    if not isinstance(doc, dict):
        raise ValueError('azure: scheduledevents is not a JSON object: %r' % (text[:200],))
    events = doc.get('Events', [])
    if not isinstance(events, list):
        raise ValueError('azure: Events is not a list: %r' % (text[:200],))
    wanted = vm_name.casefold() if vm_name else None
    best, problems = None, []
    for index, event in enumerate(events):
        try:
            notice = _azure_event_notice(event, wanted, now)
        except ValueError as e:
            problems.append('event %d: %s' % (index, e))
            continue
        if notice is not None and (best is None or notice.deadline < best.deadline):
            best = notice
    if best is None and problems:
        more = ' (and %d more)' % (len(problems) - 3) if len(problems) > 3 else ''
        raise ValueError('azure: %s%s' % ('; '.join(problems[:3]), more))
    return best


def _parse_termination_time(provider, status, body):
    _expect_status(provider, status, (200, 404))
    if status == 404:
        return None
    text = _text(provider, body).strip()
    if not text:
        raise ValueError('%s: empty termination-time' % provider)
    return text


@_parser('alibaba')
def parse_alibaba(status, body, now=None):
    """GET /latest/meta-data/instance/spot/termination-time: 404 = none; 200 = a UTC time like "2015-01-05T18:02:00Z"."""
    del now   # the body carries the time
    text = _parse_termination_time('alibaba', status, body)
    if text is None:
        return None
    try:
        deadline = _parse_iso8601(text)
    except ValueError:
        raise ValueError('alibaba: termination-time is not a time: %r' % (text[:200],))
    return Notice('alibaba', 'terminate', deadline, 'termination-time %s' % _printable(text))


@_parser('tencent')
def parse_tencent(status, body, now=None):
    """GET /latest/meta-data/spot/termination-time: 404 = none; 200 = "2018-08-18 12:05:33", in UTC+8 per the doc.

    An ISO 8601 time with a zone (should Tencent ever send one) is read with that zone. ``now`` is unused.
    """
    del now
    text = _parse_termination_time('tencent', status, body)
    if text is None:
        return None
    try:
        try:
            dt = datetime.datetime.strptime(text, '%Y-%m-%d %H:%M:%S')
        except ValueError:
            deadline = _parse_iso8601(text, assume_tz=TENCENT_TZ)
        else:
            deadline = _epoch(dt, assume_tz=TENCENT_TZ)
    except ValueError:
        raise ValueError('tencent: termination-time is not a time: %r' % (text[:200],))
    return Notice('tencent', 'terminate', deadline, 'termination-time %s (UTC+8)' % _printable(text))


PARSERS = {
    'aws': parse_aws,
    'gcp': parse_gcp,
    'azure': parse_azure,
    'alibaba': parse_alibaba,
    'tencent': parse_tencent,
}


# ---------------------------------------------------------------------------------------------------------------
# Polling


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A metadata service never redirects; a redirect (say, a captive proxy) is an error, not something to follow."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def build_opener():
    """An opener that never uses a proxy (http_proxy and friends are ignored) and never follows redirects."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def _read_capped(url, response):
    try:
        data = response.read(MAX_BODY_BYTES + 1)
    except (socket.timeout, OSError, http.client.HTTPException) as e:
        raise MetadataUnreachable(url, 'reading the response failed: %s' % (_reason(e),))
    if data is None:
        data = b''
    if len(data) > MAX_BODY_BYTES:
        raise MetadataUnreachable(url, 'response body larger than %d bytes' % MAX_BODY_BYTES)
    return data


def _reason(error):
    if isinstance(error, urllib.error.URLError) and not isinstance(error, urllib.error.HTTPError):
        error = error.reason
    if isinstance(error, socket.timeout):
        return 'timed out'
    if isinstance(error, socket.gaierror):
        return 'name resolution failed (%s)' % (error.strerror or error,)
    if isinstance(error, ConnectionRefusedError):
        return 'connection refused'
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or error.__class__.__name__


class Poller(object):
    """Asks one provider's metadata service whether a reclaim is announced.

    ``check()`` -> Notice or None. Raises MetadataUnreachable when the service gives no usable answer (refused,
    timed out, DNS failure, 5xx, an unexpected status, an oversized body), and its subclass MalformedResponse (also
    a ValueError) when it answers 200 with a body that is not the documented format. Name resolution (gcp and
    tencent default to host names) is the system resolver's and not bounded by ``timeout``.

    Every request carries ``timeout``; no request goes through a proxy. On AWS an IMDSv2 session token is fetched
    with PUT /latest/api/token, cached until shortly before its TTL and refreshed once on a 401. On Alibaba a token
    is fetched only once the service refuses a request without one (security hardening mode).
    ``opener``: anything with ``open(request, timeout=...)`` (default: build_opener()).
    """

    _monotonic = staticmethod(time.monotonic)

    def __init__(self, provider, base_url=None, timeout=2.0, vm_name=None, opener=None):
        if provider not in PROVIDERS:
            raise ValueError('unknown provider %r, expected one of %s' % (provider, ', '.join(PROVIDERS)))
        if timeout is None or timeout <= 0:
            raise ValueError('timeout must be a positive number of seconds, got %r' % (timeout,))
        self.provider = provider
        self.base_url = (base_url or DEFAULT_BASE_URLS[provider]).rstrip('/')
        self.timeout = timeout
        self.vm_name = vm_name
        self.opener = opener if opener is not None else build_opener()
        self._token = None
        self._token_expires = 0.0

    @property
    def url(self):
        """The URL ``check()`` reads."""
        return self.base_url + PATHS[self.provider]

    def check(self):
        """Notice or None; see the class docstring for what it raises."""
        headers = {}
        if self.provider == 'gcp':
            headers['Metadata-Flavor'] = 'Google'
        elif self.provider == 'azure':
            headers['Metadata'] = 'true'
        if self.provider == 'aws':
            status, body = self._get_with_token(headers, refuse=(401,), token_first=True)
        elif self.provider == 'alibaba':
            status, body = self._get_with_token(headers, refuse=(401, 403), token_first=self._token is not None)
        else:
            status, body = self._request('GET', self.url, headers)
        allowed = (200,) if self.provider in ('gcp', 'azure') else (200, 404)
        if status not in allowed:
            raise MetadataUnreachable(self.url, 'unexpected HTTP status %d%s' % (status, _snippet(body)))
        try:
            if self.provider == 'azure':
                return parse_azure(status, body, vm_name=self.vm_name)
            return PARSERS[self.provider](status, body)
        except ValueError as e:   # MalformedResponse from the parser (the path only): again, with the URL and body
            reason = e.reason if isinstance(e, MalformedResponse) else str(e)
            raise MalformedResponse(self.url, '%s%s' % (reason, _snippet(body)))

    def _get_with_token(self, headers, refuse, token_first):
        """GET the notice path with a session token; on a refusal get a fresh token and try once more."""
        token_header = _TOKEN_HEADERS[self.provider][1]
        if token_first:
            headers[token_header] = self._session_token()
        status, body = self._request('GET', self.url, headers)
        if status in refuse:
            headers[token_header] = self._session_token(refresh=True)
            status, body = self._request('GET', self.url, headers)
            if status in refuse:
                raise MetadataUnreachable(self.url, 'HTTP %d even with a fresh session token' % status)
        return status, body

    def _session_token(self, refresh=False):
        if not refresh and self._token is not None and self._monotonic() < self._token_expires:
            return self._token
        self._token = None
        ttl_header = _TOKEN_HEADERS[self.provider][0]
        url = self.base_url + TOKEN_PATH
        started = self._monotonic()
        status, body = self._request('PUT', url, {ttl_header: str(AWS_TOKEN_TTL_SECONDS)})
        token = body.decode('utf-8', errors='replace').strip()
        if status != 200 or not token:
            raise MetadataUnreachable(url, 'no session token: HTTP %d%s' % (status, _snippet(body)))
        if not _TOKEN.match(token):
            # It goes into a header: a line break or a non-ASCII character would break (or forge) the request.
            raise MalformedResponse(url, 'the session token is not printable ASCII%s' % (_snippet(body),))
        self._token = token
        self._token_expires = started + AWS_TOKEN_TTL_SECONDS - TOKEN_REFRESH_MARGIN_SECONDS
        return token

    def _request(self, method, url, headers):
        """``(status, body bytes)`` for any HTTP answer below 500; MetadataUnreachable for everything else."""
        request = urllib.request.Request(url, data=b'' if method == 'PUT' else None, headers=dict(headers),
                                         method=method)
        try:
            response = self.opener.open(request, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            status = e.code
            try:
                body = _read_capped(url, e) if e.fp is not None else b''
            finally:
                e.close()
        except (urllib.error.URLError, socket.timeout, OSError, http.client.HTTPException, ValueError) as e:
            raise MetadataUnreachable(url, _reason(e))
        else:
            try:
                status = response.getcode()
                body = _read_capped(url, response)
            finally:
                response.close()
        if status is None or status >= 500:
            raise MetadataUnreachable(url, 'HTTP %s%s' % (status, _snippet(body)))
        return status, body


def _snippet(body):
    """`` (the start of the body)`` on one line, for a message; '' for an empty body."""
    text = body.decode('utf-8', errors='replace').strip() if isinstance(body, bytes) else str(body or '').strip()
    if not text:
        return ''
    return ' (%s)' % (_printable(text, 120),)
