# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet GPU report: one record per GPU from the gpu_health results of many hosts (the data; its JSON,
Markdown, HTML and console renderings are in _fleet_render.py).

Used by the fleet_report filters (plugins/filter/fleet.py) on the control node. Standard library only.
Host names, models, error messages and check messages come from the machines, so the report keeps them inert for
every rendering: text on one line, with control, bidirectional and invisible characters shown escaped
(``\\u202e``, clean_text). What a host sent is read field by field: a field of the wrong type is "unreadable" in its
record, never a traceback; a report of the wrong types is refused with FleetReportError naming the part
(check_report, which every renderer calls first).

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import math
import re
from collections.abc import Mapping

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log

UNREACHABLE = 'unreachable'
# The GPU statuses, worst first, in _health's own ranking.
STATUSES = tuple(sorted(_health.SEVERITY, key=_health.SEVERITY.get, reverse=True))
DEFAULT_WINDOW = 'current boot'
NO_RESULT = 'no gpu_health result for this host'

RECORD_KEYS = ('host', 'gpu', 'uuid', 'pci_bus_id', 'model', 'architecture', 'driver', 'cuda', 'status', 'failing',
               'problems', 'ecc_corrected', 'ecc_uncorrected', 'retired_pages', 'remapped_rows', 'temperature_c',
               'temperature_margin_c', 'pcie', 'pcie_degraded', 'xid')
REPORT_KEYS = ('generated', 'xid_window', 'hosts', 'records', 'counts')

# Characters shown escaped (as \u202e) wherever machine text is displayed: the C0 controls other than the whitespace
# ones, DEL, the C1 controls (U+0080-U+009F, U+009B CSI among them), the bidirectional marks, embeddings, overrides
# and isolates (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), and the other invisible format characters a
# terminal or a browser would act on or hide: soft hyphen, zero-width space and joiners, U+2028/U+2029, word joiner
# and invisible operators, byte order mark, interlinear annotations, lone surrogates (which UTF-8 cannot write) and
# the tag characters. One list, not the Unicode categories of the running Python, so every Python cleans alike.
_INVISIBLE_RE = re.compile('[\x00-\x08\x0e-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f'
                           '\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f]')
_WHITESPACE_RE = re.compile(r'[\t\n\v\f\r]+')
# Whole numbers beyond this are no count, index or temperature (and Python refuses to print those over 4300 digits).
_INT_LIMIT = 2 ** 63


class FleetReportError(ValueError):
    """The input is not what the report is built from (or not a report). The message is cleaned as report text is."""

    def __init__(self, message):
        super(FleetReportError, self).__init__(clean_text(message))


def _is_int(value):
    """Whether ``value`` is a whole number (not a boolean) of a sane size."""
    return isinstance(value, int) and not isinstance(value, bool) and -_INT_LIMIT < value < _INT_LIMIT


def _is_number(value):
    return _is_int(value) or (isinstance(value, float) and math.isfinite(value))


def _type_name(value):
    """What a value is, in words (Ansible hands filters its own subclasses of dict, list and str)."""
    if value is None:
        return 'null'
    for kind, name in ((Mapping, 'a mapping'), (str, 'a string'), (bool, 'a boolean'), ((int, float), 'a number'),
                       ((list, tuple), 'a list')):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _text_of(value):
    """``str(value)``, or what it is where Python cannot print it (a number of thousands of digits, deep nesting)."""
    try:
        return str(value)
    except (ValueError, RecursionError):
        return _type_name(value)


def _short(value, limit=200):
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = _type_name(value)
    return text if len(text) <= limit else text[:limit - 3] + '...'


def _escape_char(match):
    code = ord(match.group())
    return '\\u%04x' % code if code <= 0xffff else '\\U%08x' % code


def visible_text(text):
    """``text`` with whitespace controls as spaces and the characters of _INVISIBLE_RE escaped (``\\u202e``)."""
    return _INVISIBLE_RE.sub(_escape_char, _WHITESPACE_RE.sub(' ', text))


def clean_text(value):
    """Text for display on one line: None as '', whitespace controls (newlines included) as one space, the other
    control, bidirectional and invisible format characters escaped (``\\u202e``), no surrounding spaces."""
    if value is None:
        return ''
    return visible_text(value if isinstance(value, str) else _text_of(value)).strip()


def join_text(values):
    """The values as clean_text, joined with ', '."""
    return ', '.join(clean_text(v) for v in values)


# ---------------------------------------------------------------------------------------------------------------
# Building the report


def _unreachable_list(unreachable):
    """``[(host, error)]`` from ``[{'host', 'error'}]`` (``msg`` also read), ``[host]`` or ``{host: error}``."""
    if unreachable is None:
        return []
    if isinstance(unreachable, Mapping):
        items = [{'host': host, 'error': error} for host, error in unreachable.items()]
    elif isinstance(unreachable, (list, tuple)):
        items = unreachable
    else:
        raise FleetReportError('the unreachable hosts must be a list of {host, error} (or a mapping of host to error), '
                               'got %s' % _type_name(unreachable))
    out, seen = [], set()
    for item in items:
        if isinstance(item, str):
            host, error = item, None
        elif isinstance(item, Mapping) and item.get('host') not in (None, ''):
            host = item['host']
            error = item.get('error') if item.get('error') is not None else item.get('msg')
        else:
            raise FleetReportError('each unreachable host must be a host name or a mapping with a host key, got %s'
                                   % _short(item))
        host = clean_text(host)
        if host in seen:
            continue
        seen.add(host)
        out.append((host, clean_text(error) or 'unreachable'))
    return out


def _usable(result):
    """Whether a host's result holds an evaluation (a task that failed before checking anything does not)."""
    return isinstance(result, Mapping) and not result.get('unreachable') and not result.get('skipped') and \
        ('checks' in result or 'nvidia' in result)


# What a host sends is read field by field. A part of the wrong type is "unreadable": left out (null in the
# record), named in the problems of its record, and the check UNREADABLE joins the record's failing checks.
# A part that holds verdicts or says which GPU is which (nvidia, nvidia.gpus, a GPU or its index, checks or one
# check) makes the host-wide record fail: what it would have said is unknown. A part that is only shown (a model,
# a temperature, an ECC count, the driver version, an Xid event) makes its record warn: gpu_health's own checks
# still judge the GPU.
UNREADABLE = 'unreadable'
DUPLICATE_INDEX = 'duplicate_gpu_index'


def _what(value):
    """A value in an 'unreadable' problem: short text as it is (quoted, cleaned), anything else by its type."""
    if isinstance(value, str):
        return _short(clean_text(value), 60)
    if value is None or isinstance(value, (bool, float)) or _is_int(value):
        return _short(value, 60)
    return _type_name(value)


def _path(path, key):
    return '%s.%s' % (path, key) if path else key


class _Reader(object):
    """Reads one host's gpu_health result; collects what is unreadable, per GPU position (None: the host)."""

    def __init__(self):
        self.notes = {}

    def note(self, where, path, value, expected, status):
        self.notes.setdefault(where, []).append((status, '%s is %s, expected %s: unreadable' % (path, _what(value),
                                                                                                expected)))

    def text(self, where, path, mapping, key):
        """Text (a number is taken as its text) or None."""
        value = mapping.get(key)
        if value is None or isinstance(value, str) or _is_number(value):
            return None if value is None else clean_text(value)
        self.note(where, _path(path, key), value, 'text', _health.WARN)
        return None

    def number(self, where, path, mapping, key, kind=_is_number, expected='a number'):
        value = mapping.get(key)
        if value is None or kind(value):
            return value
        self.note(where, _path(path, key), value, expected, _health.WARN)
        return None

    def flag(self, where, path, mapping, key):
        return self.number(where, path, mapping, key, kind=lambda v: isinstance(v, bool), expected='true or false')

    def mapping(self, where, path, mapping, key, status=_health.WARN):
        """A mapping (empty when null), or None when unreadable."""
        value = mapping.get(key)
        if value is None:
            return {}
        if isinstance(value, Mapping):
            return value
        self.note(where, _path(path, key), value, 'a mapping', status)
        return None

    def items(self, path, value, expected, status):
        """The elements of a list (none when null), each ``(position, element)`` that is a mapping."""
        if value is None:
            return []
        if not isinstance(value, (list, tuple)):
            self.note(None, path, value, 'a list of %ss' % expected, status)
            return []
        out = []
        for position, item in enumerate(value):
            if isinstance(item, Mapping):
                out.append((position, item))
            else:
                self.note(None, '%s[%d]' % (path, position), item, 'a %s mapping' % expected, status)
        return out


def _read_gpus(reader, facts):
    """``[(position, gpu)]``: the GPUs of the facts whose index is readable."""
    gpus = []
    for position, gpu in reader.items('nvidia.gpus', facts.get('gpus'), 'GPU', _health.FAIL):
        index = gpu.get('index')
        if _is_int(index) and index >= 0:
            gpus.append((position, gpu))
        else:
            reader.note(None, 'nvidia.gpus[%d].index' % position, index, 'a GPU index (a whole number from 0)',
                        _health.FAIL)
    return gpus


def _read_checks(reader, checks):
    """The checks as ``{'check', 'gpu', 'status', 'message'}``, texts cleaned; the unreadable ones left out."""
    out = []
    for position, check in reader.items('checks', checks, 'check', _health.FAIL):
        path = 'checks[%d]' % position
        name, gpu, status = check.get('check'), check.get('gpu'), check.get('status')
        if not isinstance(status, str) or status not in _health.SEVERITY:
            reader.note(None, path + '.status', status, '/'.join(STATUSES), _health.FAIL)
        elif not (gpu is None or (_is_int(gpu) and gpu >= 0)):
            reader.note(None, path + '.gpu', gpu, 'null or a GPU index', _health.FAIL)
        elif not isinstance(name, str) or not clean_text(name):
            reader.note(None, path + '.check', name, 'the name of a check', _health.FAIL)
        else:
            message = check.get('message')
            if not (message is None or isinstance(message, str) or _is_number(message)):
                message = '%s: the message is %s (unreadable)' % (name, _type_name(message))
            out.append({'check': clean_text(name), 'gpu': gpu, 'status': status, 'message': clean_text(message)})
    return out


def _xid_codes(reader, events, gpus):
    """``{GPU position or None: set of Xid codes}``: each event goes to the GPU at its PCI address, else host-wide."""
    codes = {}
    for position, event in reader.items('xid_events', events, 'Xid event', _health.WARN):
        path = 'xid_events[%d]' % position
        code = event.get('code')
        if isinstance(code, str) and code.strip().isdigit() and len(code.strip()) < 10:
            code = int(code)
        if not _is_int(code) or code < 0:
            reader.note(None, path + '.code', code, 'an Xid code', _health.WARN)
            continue
        pci = event.get('pci')
        if pci is not None and not isinstance(pci, str):
            reader.note(None, path + '.pci', pci, 'a PCI address', _health.WARN)
            pci = None
        where = None
        for gpu_position, gpu in gpus:
            bus_id = gpu.get('pci_bus_id')
            if isinstance(bus_id, str) and _kernel_log.matches_gpu(pci, bus_id):
                where = gpu_position
                break
        codes.setdefault(where, set()).add(code)
    return codes


def _pcie(reader, where, path, gpu):
    gen, gen_max, width, width_max = (reader.number(where, path, gpu, key) for key in (
        'pcie_gen_current', 'pcie_gen_max', 'pcie_width_current', 'pcie_width_max'))
    if gen is None and gen_max is None and width is None and width_max is None:
        return None, False

    def link(g, w):
        return 'Gen%s x%s' % ('?' if g is None else g, '?' if w is None else w)
    degraded = width is not None and width_max is not None and width < width_max
    return '%s (max %s)' % (link(gen, width), link(gen_max, width_max)), degraded


def _temperature_margin(reader, where, path, gpu):
    margin = reader.number(where, path, gpu, 'temperature_slowdown_margin_c')
    temp = reader.number(where, path, gpu, 'temperature_c')
    slow = reader.number(where, path, gpu, 'temperature_slowdown_c')
    if margin is None and temp is not None and slow is not None:
        margin = slow - temp              # facts from before T.Limit support, as _health judges them
    return temp, margin


def _ecc(reader, where, path, gpu):
    """``(corrected, uncorrected)``, each ``{'volatile', 'aggregate'}``."""
    ecc = reader.mapping(where, path, gpu, 'ecc_errors') or {}
    blocks = dict((kind, reader.mapping(where, path + '.ecc_errors', ecc, kind) or {})
                  for kind in ('volatile', 'aggregate'))
    return tuple(dict((kind, reader.number(where, '%s.ecc_errors.%s' % (path, kind), blocks[kind], count,
                                           expected='a count'))
                      for kind in ('volatile', 'aggregate'))
                 for count in ('corrected', 'uncorrected'))


def _counters(reader, where, path, gpu, key, counts, flags):
    """The retired pages or remapped rows of a GPU: its counts and flags, or None where it has none."""
    block = reader.mapping(where, path, gpu, key)
    if not block:
        return None
    out = dict((name, reader.number(where, _path(path, key), block, name, expected='a count')) for name in counts)
    out.update((name, reader.flag(where, _path(path, key), block, name)) for name in flags)
    return out


def _record(host, host_fields, row, problems, xids, gpu=None, where=None, reader=None):
    """One record from a row of _health.summary: ``gpu`` is the GPU's facts (at ``where`` in nvidia.gpus), None for
    the host-wide record."""
    record = dict((key, None) for key in RECORD_KEYS)
    record.update(host_fields)
    record.update(host=host, gpu=row['gpu'], status=row['status'], failing=list(row['failing']), problems=problems,
                  xid=sorted(xids.get(where, ())), pcie_degraded=False)
    if gpu is not None:
        path = 'nvidia.gpus[%d]' % where
        pcie, degraded = _pcie(reader, where, path, gpu)
        temperature, margin = _temperature_margin(reader, where, path, gpu)
        corrected, uncorrected = _ecc(reader, where, path, gpu)
        record.update(uuid=reader.text(where, path, gpu, 'uuid'), pci_bus_id=reader.text(where, path, gpu, 'pci_bus_id'),
                      model=reader.text(where, path, gpu, 'name'),
                      architecture=reader.text(where, path, gpu, 'architecture'),
                      ecc_corrected=corrected, ecc_uncorrected=uncorrected,
                      retired_pages=_counters(reader, where, path, gpu, 'retired_pages',
                                              ('single_bit_ecc', 'double_bit_ecc', 'total'), ('pending',)),
                      remapped_rows=_counters(reader, where, path, gpu, 'remapped_rows',
                                              ('correctable', 'uncorrectable'), ('pending', 'failure')),
                      temperature_c=temperature, temperature_margin_c=margin, pcie=pcie, pcie_degraded=degraded)
    return record


def _flag_unreadable(record, notes):
    """Add the unreadable parts of ``notes`` to the record: its problems, UNREADABLE failing, its status raised."""
    if not notes:
        return record
    record['problems'].extend(message for status, message in notes)
    if UNREADABLE not in record['failing']:
        record['failing'].append(UNREADABLE)
    record['status'] = _health.worst([record['status']] + [status for status, message in notes])
    return record


def _host_records(host, result):
    reader = _Reader()
    facts = reader.mapping(None, '', result, 'nvidia', status=_health.FAIL)
    facts = facts if facts is not None else {}
    gpus = _read_gpus(reader, facts)
    checks = _read_checks(reader, result.get('checks'))
    host_fields = {'driver': reader.text(None, 'nvidia', facts, 'driver_version'),
                   'cuda': reader.text(None, 'nvidia', facts, 'cuda_version')}
    # The rows of _health.summary (the same verdicts as health_table), on a result whose overall status is
    # recomputed from its checks, so that a host without GPUs never gets a status outside ok/warn/fail. Its GPU
    # rows follow nvidia.gpus: they are paired with the GPUs by position, since an index may be given twice.
    rows = _health.summary({'status': _health.worst(c['status'] for c in checks), 'checks': checks,
                            'nvidia': {'gpus': [gpu for position, gpu in gpus]}})
    wide_row = ([row for row in rows if row['gpu'] is None] or [None])[0]
    gpu_rows = [row for row in rows if row['gpu'] is not None]
    xids = _xid_codes(reader, result.get('xid_events'), gpus)
    records = []
    for (position, gpu), row in zip(gpus, gpu_rows):
        index = row['gpu']
        problems = [c['message'] for c in checks if c['gpu'] == index and c['status'] != _health.OK]
        record = _record(host, host_fields, row, problems, xids, gpu, position, reader)
        twins = [p for p, g in gpus if g['index'] == index]
        if len(twins) > 1:
            record['failing'].append(DUPLICATE_INDEX)
            record['problems'].append('nvidia-smi describes %d GPUs with index %d (%s): their checks cannot be told '
                                      'apart' % (len(twins), index, ', '.join('nvidia.gpus[%d]' % p for p in twins)))
            record['status'] = _health.FAIL
        records.append(_flag_unreadable(record, reader.notes.get(position)))
    wide_notes = reader.notes.get(None)
    if wide_row is not None or None in xids or wide_notes:
        if wide_row is None:
            wide = [c['status'] for c in checks if c['gpu'] is None and c['status'] != _health.OK]
            wide_row = {'gpu': None, 'status': _health.worst(wide), 'failing': []}
        problems = [c['message'] for c in checks if c['gpu'] is None and c['status'] != _health.OK]
        records.insert(0, _flag_unreadable(_record(host, host_fields, wide_row, problems, xids), wide_notes))
    return records


def _record_order(record):
    gpu = record['gpu']
    return (-_health.SEVERITY[record['status']], record['host'], gpu is not None, gpu if isinstance(gpu, int) else -1)


def _generated(generated):
    if generated is None:
        generated = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    if isinstance(generated, (datetime.datetime, datetime.date)):
        return generated.isoformat()
    if isinstance(generated, str):
        return generated
    raise FleetReportError('generated must be a time (datetime or ISO text), got %s' % _type_name(generated))


def build(results, unreachable=None, generated=None, window=None):
    """The report from ``{host: gpu_health result}`` and the hosts that gave none.

    ``unreachable``: ``[{'host', 'error'}]`` (or ``[host]``, or ``{host: error}``). A host whose result is None, an
    unreachable or skipped task, or a failed task without checks joins them (its ``msg`` as the error); a host in
    both is listed as unreachable only. ``generated``: when (datetime or ISO text; default now, UTC). ``window``:
    the Xid window in words (default ``current boot``). Returns ``{'generated', 'xid_window', 'hosts': {'total',
    'reporting', 'unreachable': [{'host', 'error'}]}, 'records', 'counts': {'gpus', 'by_status', 'by_model'}}``.

    Raises FleetReportError for what the caller passes (``results`` or a host's result that is not a mapping, a bad
    ``unreachable``, ``window`` or ``generated``). What a host sent never raises: see _Reader and UNREADABLE; two
    GPUs with one index are both kept and flagged DUPLICATE_INDEX.
    """
    if not isinstance(results, Mapping):
        raise FleetReportError('expected a mapping of host name to gpu_health result, got %s' % _type_name(results))
    if window is not None and not isinstance(window, (str, int, float)):
        raise FleetReportError('window must be text such as -24h, got %s' % _type_name(window))
    lost = _unreachable_list(unreachable)
    lost_hosts = set(item[0] for item in lost)
    records, reporting = [], 0
    for key in sorted(results, key=_text_of):
        host, result = clean_text(key), results[key]
        if host in lost_hosts:
            continue
        if result is not None and not isinstance(result, Mapping):
            raise FleetReportError('the result of %s is not a gpu_health result: %s' % (host, _type_name(result)))
        if not _usable(result):
            lost.append((host, clean_text((result or {}).get('msg')) or NO_RESULT))
            lost_hosts.add(host)
            continue
        reporting += 1
        records.extend(_host_records(host, result))
    records.sort(key=_record_order)
    lost.sort()
    by_status = dict((status, 0) for status in STATUSES)
    by_model = {}
    gpu_count = 0
    for record in records:
        by_status[record['status']] += 1
        if record['gpu'] is None:
            continue
        gpu_count += 1
        entry = by_model.setdefault(record['model'] or 'unknown', dict([('gpus', 0)] + [(s, 0) for s in STATUSES]))
        entry['gpus'] += 1
        entry[record['status']] += 1
    by_status[UNREACHABLE] = len(lost)
    return {
        'generated': clean_text(_generated(generated)),
        'xid_window': clean_text(window) or DEFAULT_WINDOW,
        'hosts': {'total': reporting + len(lost), 'reporting': reporting,
                  'unreachable': [{'host': host, 'error': error} for host, error in lost]},
        'records': records,
        'counts': {'gpus': gpu_count, 'by_status': by_status, 'by_model': by_model},
    }


# ---------------------------------------------------------------------------------------------------------------
# Checking a report before it is rendered (_fleet_render.py), which may have travelled through a file or a variable

def _refuse(field, value, expected):
    raise FleetReportError('the report has %s = %s: expected %s' % (field, _what(value), expected))


def _check_counts(field, counts, keys=None):
    """A mapping of text to counts (whole numbers from 0); ``keys``, when given, the only keys read."""
    if counts is None:
        return
    if not isinstance(counts, Mapping):
        _refuse(field, counts, 'a mapping')
    for key, count in counts.items():
        if not isinstance(key, str):
            _refuse(field + ' key', key, 'text')
        if (keys is None or key in keys) and count is not None and not (_is_int(count) and count >= 0):
            _refuse('%s.%s' % (field, clean_text(key)), count, 'a count')


def check_report(report):
    """Refuse anything but a report as :func:`build` returns it (also after a JSON round trip): every part the
    renderings read is type-checked, so that a wrong one is this error, naming it, never a TypeError."""
    if not isinstance(report, Mapping) or any(key not in report for key in REPORT_KEYS):
        raise FleetReportError('expected the report that fleet_report returns (a mapping with %s), got %s'
                               % (', '.join(REPORT_KEYS), _type_name(report) if not isinstance(report, Mapping)
                                  else 'a mapping without ' + ', '.join(k for k in REPORT_KEYS if k not in report)))
    records, hosts, counts = report['records'], report['hosts'], report['counts']
    if not isinstance(records, (list, tuple)) or not all(isinstance(r, Mapping) and 'status' in r and 'host' in r
                                                         for r in records):
        raise FleetReportError('the report has records that are not a list of GPU records')
    for i, record in enumerate(records):
        field = 'records[%d]' % i
        if not isinstance(record['status'], str) or record['status'] not in _health.SEVERITY:
            _refuse(field + '.status', record['status'], '/'.join(STATUSES))
        if not isinstance(record['host'], str):
            _refuse(field + '.host', record['host'], 'text')
        if not (record.get('gpu') is None or _is_int(record['gpu'])):
            _refuse(field + '.gpu', record['gpu'], 'null or a GPU index')
        for key in ('failing', 'problems', 'xid'):
            if not isinstance(record.get(key) or [], (list, tuple)):
                _refuse('%s.%s' % (field, key), record[key], 'a list')
    if not isinstance(hosts, Mapping) or not isinstance(hosts.get('unreachable') or [], (list, tuple)):
        raise FleetReportError('the report has hosts that is not {total, reporting, unreachable}')
    _check_counts('hosts', hosts, ('total', 'reporting'))
    for i, host in enumerate(hosts.get('unreachable') or []):
        if not isinstance(host, Mapping):
            _refuse('hosts.unreachable[%d]' % i, host, '{host, error}')
    if not isinstance(counts, Mapping) or not isinstance(counts.get('by_status') or {}, Mapping) or \
            not isinstance(counts.get('by_model') or {}, Mapping):
        raise FleetReportError('the report has counts that is not {by_status, by_model}')
    _check_counts('counts.by_status', counts.get('by_status'))
    for model, entry in (counts.get('by_model') or {}).items():
        field = 'counts.by_model[%s]' % _short(clean_text(model), 60)
        if isinstance(entry, Mapping):
            _check_counts(field, entry, ('gpus',) + STATUSES)
        elif entry is not None and not (_is_int(entry) and entry >= 0):
            _refuse(field, entry, 'a count or {gpus, %s}' % ', '.join(STATUSES))
    return report
