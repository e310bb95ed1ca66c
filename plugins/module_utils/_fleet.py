# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet GPU report: one record per GPU from the gpu_health results of many hosts, and its JSON, Markdown,
self-contained HTML and one-screen console renderings.

Used by the fleet_report filters (plugins/filter/fleet.py) on the control node. Standard library only.
Host names, error messages and check messages come from the machines: every rendering escapes them.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import html
import json
import re
from collections.abc import Mapping

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log

UNREACHABLE = 'unreachable'
# The GPU statuses, worst first, in _health's own ranking.
STATUSES = tuple(sorted(_health.SEVERITY, key=_health.SEVERITY.get, reverse=True))
DEFAULT_WINDOW = 'current boot'
NO_RESULT = 'no gpu_health result for this host'

# The console summary fits one screen: at most this many lines, each at most this wide.
CONSOLE_LINES = 25
CONSOLE_WIDTH = 160
_CONSOLE_MODELS = 5
_CONSOLE_UNREACHABLE = 5

RECORD_KEYS = ('host', 'gpu', 'uuid', 'pci_bus_id', 'model', 'architecture', 'driver', 'cuda', 'status', 'failing',
               'problems', 'ecc_corrected', 'ecc_uncorrected', 'retired_pages', 'remapped_rows', 'temperature_c',
               'temperature_margin_c', 'pcie', 'pcie_degraded', 'xid')
REPORT_KEYS = ('generated', 'xid_window', 'hosts', 'records', 'counts')

_CONTROL_RE = re.compile(r'[\x00-\x1f\x7f]+')
# The openings of Jinja2 syntax. ansible-core before 2.19 templates a plain string again when a task reads it
# through a loop item or a variable, so machine text must not carry them into the renderings.
_JINJA_RE = re.compile(r'\{(?=[{%#])')
_BRACES = {ord('{'): '&#123;', ord('}'): '&#125;'}


class FleetReportError(ValueError):
    """The input is not what the report is built from (or not a report)."""


def _type_name(value):
    """What a value is, in words (Ansible hands filters its own subclasses of dict, list and str)."""
    if value is None:
        return 'null'
    for kind, name in ((Mapping, 'a mapping'), (str, 'a string'), (bool, 'a boolean'), ((int, float), 'a number'),
                       ((list, tuple), 'a list')):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _short(value, limit=200):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + '...'


def _clean(value):
    """Text for display: None as '', control characters (newlines included) as one space."""
    if value is None:
        return ''
    return _CONTROL_RE.sub(' ', value if isinstance(value, str) else str(value)).strip()


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
        host = str(host)
        if host in seen:
            continue
        seen.add(host)
        out.append((host, _clean(error) or 'unreachable'))
    return out


def _usable(result):
    """Whether a host's result holds an evaluation (a task that failed before checking anything does not)."""
    return isinstance(result, Mapping) and not result.get('unreachable') and not result.get('skipped') and \
        ('checks' in result or 'nvidia' in result)


def _validated(host, result):
    """The parts of a gpu_health result the report reads, type-checked: ``(facts, checks, xid_events)``."""
    facts = result.get('nvidia')
    if facts is None:
        facts = {}
    if not isinstance(facts, Mapping):
        raise FleetReportError('the gpu_health result of %s has nvidia = %s: expected the gpu_facts mapping'
                               % (host, _type_name(facts)))
    gpus = facts.get('gpus') or []
    if not isinstance(gpus, (list, tuple)) or not all(isinstance(g, Mapping) for g in gpus):
        raise FleetReportError('the gpu_health result of %s has nvidia.gpus that is not a list of GPUs' % host)
    checks = result.get('checks') or []
    if not isinstance(checks, (list, tuple)):
        raise FleetReportError('the gpu_health result of %s has checks = %s: expected a list'
                               % (host, _type_name(checks)))
    for check in checks:
        if not isinstance(check, Mapping) or check.get('status') not in _health.SEVERITY:
            raise FleetReportError('the gpu_health result of %s has a check that is not {check, gpu, status, value, '
                                   'message} with status %s: %s' % (host, '/'.join(STATUSES), _short(check)))
    events = result.get('xid_events') or []
    if not isinstance(events, (list, tuple)) or not all(isinstance(e, Mapping) for e in events):
        raise FleetReportError('the gpu_health result of %s has xid_events that is not a list of events' % host)
    return facts, list(checks), list(events)


def _int_or_none(value):
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _xid_codes(events, gpus):
    """``{gpu index or None: set of Xid codes}``: each event goes to the GPU at its PCI address, else host-wide."""
    codes = {}
    for event in events:
        code = _int_or_none(event.get('code'))
        if code is None:
            continue
        where = None
        for gpu in gpus:
            if _kernel_log.matches_gpu(event.get('pci'), gpu.get('pci_bus_id')):
                where = gpu.get('index')
                break
        codes.setdefault(where, set()).add(code)
    return codes


def _pcie(gpu):
    gen, gen_max = gpu.get('pcie_gen_current'), gpu.get('pcie_gen_max')
    width, width_max = gpu.get('pcie_width_current'), gpu.get('pcie_width_max')
    if gen is None and gen_max is None and width is None and width_max is None:
        return None, False

    def link(g, w):
        return 'Gen%s x%s' % ('?' if g is None else g, '?' if w is None else w)
    degraded = width is not None and width_max is not None and width < width_max
    return '%s (max %s)' % (link(gen, width), link(gen_max, width_max)), degraded


def _temperature_margin(gpu):
    margin = gpu.get('temperature_slowdown_margin_c')
    temp, slow = gpu.get('temperature_c'), gpu.get('temperature_slowdown_c')
    if margin is None and temp is not None and slow is not None:
        margin = slow - temp              # facts from before T.Limit support, as _health judges them
    return margin


def _ecc(gpu, kind):
    ecc = gpu.get('ecc_errors') or {}
    return {'volatile': (ecc.get('volatile') or {}).get(kind), 'aggregate': (ecc.get('aggregate') or {}).get(kind)}


def _record(host, facts, row, gpu, checks, xids):
    """One record: ``gpu`` is the GPU's facts, None for the host-wide record."""
    index = row['gpu']
    problems = [_clean(c.get('message')) for c in checks if c.get('gpu') == index and c['status'] != _health.OK]
    record = dict((key, None) for key in RECORD_KEYS)
    record.update(host=host, gpu=index, driver=facts.get('driver_version'), cuda=facts.get('cuda_version'),
                  status=row['status'], failing=list(row['failing']), problems=problems,
                  xid=sorted(xids.get(index, ())), pcie_degraded=False)
    if gpu is not None:
        pcie, degraded = _pcie(gpu)
        record.update(uuid=gpu.get('uuid'), pci_bus_id=gpu.get('pci_bus_id'), model=gpu.get('name'),
                      architecture=gpu.get('architecture'), ecc_corrected=_ecc(gpu, 'corrected'),
                      ecc_uncorrected=_ecc(gpu, 'uncorrected'),
                      retired_pages=dict(gpu['retired_pages']) if gpu.get('retired_pages') else None,
                      remapped_rows=dict(gpu['remapped_rows']) if gpu.get('remapped_rows') else None,
                      temperature_c=gpu.get('temperature_c'), temperature_margin_c=_temperature_margin(gpu),
                      pcie=pcie, pcie_degraded=degraded)
    return record


def _host_records(host, result):
    facts, checks, events = _validated(host, result)
    gpus = list(facts.get('gpus') or [])
    # The rows of _health.summary (the same verdicts as health_table), on a result whose overall status is
    # recomputed from its checks, so that a host without GPUs never gets a status outside ok/warn/fail.
    rows = _health.summary({'status': _health.worst(c['status'] for c in checks), 'checks': checks,
                            'nvidia': {'gpus': gpus}})
    xids = _xid_codes(events, gpus)
    if None in xids and not any(row['gpu'] is None for row in rows):
        wide = [c['status'] for c in checks if c.get('gpu') is None and c['status'] != _health.OK]
        rows.insert(0, {'gpu': None, 'name': None, 'status': _health.worst(wide), 'failing': []})
    by_index = dict((g.get('index'), g) for g in gpus)
    return [_record(host, facts, row, by_index.get(row['gpu']) if row['gpu'] is not None else None, checks, xids)
            for row in rows]


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
    """
    if not isinstance(results, Mapping):
        raise FleetReportError('expected a mapping of host name to gpu_health result, got %s' % _type_name(results))
    if window is not None and not isinstance(window, (str, int, float)):
        raise FleetReportError('window must be text such as -24h, got %s' % _type_name(window))
    lost = _unreachable_list(unreachable)
    lost_hosts = set(item[0] for item in lost)
    records, reporting = [], 0
    for key in sorted(results, key=str):
        host, result = str(key), results[key]
        if host in lost_hosts:
            continue
        if result is not None and not isinstance(result, Mapping):
            raise FleetReportError('the result of %s is not a gpu_health result: %s' % (host, _type_name(result)))
        if not _usable(result):
            lost.append((host, _clean((result or {}).get('msg')) or NO_RESULT))
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
        'generated': _generated(generated),
        'xid_window': DEFAULT_WINDOW if window is None or window == '' else str(window),
        'hosts': {'total': reporting + len(lost), 'reporting': reporting,
                  'unreachable': [{'host': host, 'error': error} for host, error in lost]},
        'records': records,
        'counts': {'gpus': gpu_count, 'by_status': by_status, 'by_model': by_model},
    }


# ---------------------------------------------------------------------------------------------------------------
# Renderings


def check_report(report):
    """Refuse anything but a report as :func:`build` returns it (also after a JSON round trip)."""
    if not isinstance(report, Mapping) or any(key not in report for key in REPORT_KEYS):
        raise FleetReportError('expected the report that fleet_report returns (a mapping with %s), got %s'
                               % (', '.join(REPORT_KEYS), _type_name(report) if not isinstance(report, Mapping)
                                  else 'a mapping without ' + ', '.join(k for k in REPORT_KEYS if k not in report)))
    records, hosts, counts = report['records'], report['hosts'], report['counts']
    if not isinstance(records, (list, tuple)) or not all(isinstance(r, Mapping) and 'status' in r and 'host' in r
                                                         for r in records):
        raise FleetReportError('the report has records that are not a list of GPU records')
    if not isinstance(hosts, Mapping) or not isinstance(hosts.get('unreachable') or [], (list, tuple)):
        raise FleetReportError('the report has hosts that is not {total, reporting, unreachable}')
    if not isinstance(counts, Mapping) or not isinstance(counts.get('by_status') or {}, Mapping) or \
            not isinstance(counts.get('by_model') or {}, Mapping):
        raise FleetReportError('the report has counts that is not {by_status, by_model}')
    return report


def _sick(report):
    return [r for r in report['records'] if r['status'] != _health.OK]


def _gpu_records(report):
    return [r for r in report['records'] if r.get('gpu') is not None]


def _status_counts(report):
    """``[(status, count)]``, worst first, unreachable last, then any other status the report names."""
    by_status = report['counts'].get('by_status') or {}
    order = list(STATUSES) + [UNREACHABLE]
    return [(s, by_status.get(s, 0)) for s in order] + sorted((s, n) for s, n in by_status.items() if s not in order)


def _model_counts(report):
    """``[(model, {'gpus', 'fail', 'warn', 'ok'})]``, the most numerous model first."""
    by_model = report['counts'].get('by_model') or {}
    rows = [(str(model), entry if isinstance(entry, Mapping) else {'gpus': entry}) for model, entry in by_model.items()]
    return sorted(rows, key=lambda item: (-(item[1].get('gpus') or 0), item[0]))


def _where(record):
    return 'host-wide' if record.get('gpu') is None else 'GPU %s' % record['gpu']


def _pair(counts):
    if not isinstance(counts, Mapping):
        return ''
    volatile, aggregate = counts.get('volatile'), counts.get('aggregate')
    if volatile is None and aggregate is None:
        return ''
    return '%s / %s' % ('?' if volatile is None else volatile, '?' if aggregate is None else aggregate)


def _retired(pages):
    if not isinstance(pages, Mapping) or not pages:
        return ''
    total = pages.get('total')
    return '%s%s' % ('?' if total is None else total, ' (pending)' if pages.get('pending') else '')


def _remapped(rows):
    if not isinstance(rows, Mapping) or not rows:
        return ''
    text = 'corr %s, unc %s' % tuple('?' if rows.get(k) is None else rows.get(k) for k in ('correctable', 'uncorrectable'))
    if rows.get('failure'):
        text += ', FAILED'
    elif rows.get('pending'):
        text += ', pending'
    return text


def _plural(count, word):
    return '%d %s%s' % (count, word, '' if count == 1 else 's')


def _headline(report):
    hosts = report['hosts']
    return '%s on %s (%d reporting, %d unreachable)' % (
        _plural(len(_gpu_records(report)), 'GPU'), _plural(hosts.get('total') or 0, 'host'),
        hosts.get('reporting') or 0, len(hosts.get('unreachable') or []))


def to_json(report):
    """The report as JSON text: sorted keys, indent 2, ASCII only, ending with a newline."""
    return json.dumps(check_report(report), sort_keys=True, indent=2) + '\n'


def _md(value):
    """A Markdown table cell: HTML-escaped (braces too), pipes escaped, on one line."""
    text = html.escape(_clean(value), quote=False).translate(_BRACES)
    return text.replace('\\', '\\\\').replace('|', '\\|') or '-'


def to_markdown(report):
    """A Markdown summary: counts by status and by model, the unreachable hosts, the GPUs that are not ok."""
    check_report(report)
    hosts = report['hosts']
    lines = ['# GPU fleet report', '',
             'Generated %s; Xid window: %s.' % (_md(report['generated']), _md(report['xid_window'])),
             '%s.' % _headline(report), '',
             '## By status', '', '| Status | Count |', '| --- | ---: |']
    lines.extend('| %s | %s |' % (_md(s), _md(n)) for s, n in _status_counts(report))
    lines.extend(['', 'GPU records and host-wide records by status; unreachable counts hosts.', '',
                  '## By model', ''])
    models = _model_counts(report)
    if models:
        lines.extend(['| Model | GPUs | %s |' % ' | '.join(STATUSES), '| --- | ---: |%s' % (' ---: |' * len(STATUSES))])
        lines.extend('| %s | %s | %s |' % (_md(model), entry.get('gpus', 0),
                                           ' | '.join(str(entry.get(s, 0)) for s in STATUSES))
                     for model, entry in models)
    else:
        lines.append('No GPU described.')
    lines.extend(['', '## Unreachable hosts', ''])
    lost = hosts.get('unreachable') or []
    if lost:
        lines.extend(['| Host | Error |', '| --- | --- |'])
        lines.extend('| %s | %s |' % (_md(h.get('host')), _md(h.get('error'))) for h in lost)
    else:
        lines.append('None.')
    lines.extend(['', '## GPUs that are not ok', ''])
    sick = _sick(report)
    if sick:
        lines.extend(['| Status | Host | GPU | Model | PCI bus id | Failing checks | Problems | Xid |',
                      '| --- | --- | ---: | --- | --- | --- | --- | --- |'])
        for r in sick:
            lines.append('| %s | %s | %s | %s | %s | %s | %s | %s |' % (
                _md(r['status']), _md(r['host']), '-' if r.get('gpu') is None else _md(r['gpu']), _md(r.get('model')),
                _md(r.get('pci_bus_id')), _md(', '.join(str(c) for c in r.get('failing') or [])),
                '<br>'.join(_md(p) for p in r.get('problems') or []) or '-',
                _md(', '.join(str(x) for x in r.get('xid') or []))))
    else:
        lines.append('None.')
    gpus = _gpu_records(report)
    ok = len([r for r in gpus if r['status'] == _health.OK])
    lines.extend(['', '%d of %s are ok.' % (ok, _plural(len(gpus), 'GPU')), ''])
    return '\n'.join(lines)


_CSS = '''
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em;color:#1d2329;background:#fff}
h1{font-size:1.5em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.4em 0 .4em}
p.meta{color:#4a5561;margin:.2em 0}
.counts{display:flex;flex-wrap:wrap;gap:2em;align-items:flex-start}
table{border-collapse:collapse;margin:.3em 0}
caption{text-align:left;font-weight:600;padding:.2em 0}
th,td{border:1px solid #d0d6dc;padding:.25em .5em;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}
thead th{background:#eef1f4;position:sticky;top:0}
#gpus thead th{cursor:pointer;user-select:none;white-space:nowrap}
#gpus thead th:focus{outline:2px solid #3b7dd8}
#gpus thead th[aria-sort=ascending]::after{content:" \\25B2";font-size:.75em}
#gpus thead th[aria-sort=descending]::after{content:" \\25BC";font-size:.75em}
tr.s-fail td{background:#fde2e1}tr.s-warn td{background:#fff3d1}
tr.s-unreachable td{background:#e9e4f5}
.badge{display:inline-block;min-width:3.5em;text-align:center;border-radius:3px;padding:0 .4em;font-weight:600;color:#fff}
.badge.fail{background:#c62828}.badge.warn{background:#b26a00}.badge.ok{background:#2e7d32}
.badge.unreachable{background:#5e35b1}
td.degraded{color:#b26a00;font-weight:600}
td.problems div+div{margin-top:.2em}
.hint{color:#4a5561;font-size:.9em}
'''

# Sorts #gpus when a header is clicked (or Enter/Space on it): numbers numerically, text numeric-aware,
# a second click reverses; equal keys keep the report's order (sick first). data-sort holds a cell's key
# where the text is not it (status rank, plain numbers).
_JS = '''
(function () {
  'use strict';
  var table = document.getElementById('gpus');
  if (!table || !table.tHead || !table.tBodies.length) { return; }
  var headers = table.tHead.rows[0].cells;
  function key(row, i) {
    var cell = row.cells[i];
    var k = cell.getAttribute('data-sort');
    return (k === null ? cell.textContent : k).trim();
  }
  function isNum(v) { return v !== '' && isFinite(Number(v)); }
  function compare(a, b) {
    var an = isNum(a), bn = isNum(b);
    if (an && bn) { return Number(a) - Number(b); }
    if (an !== bn) { return an ? -1 : 1; }
    return a.localeCompare(b, undefined, {numeric: true, sensitivity: 'base'});
  }
  function sortBy(th, i) {
    var ascending = th.getAttribute('aria-sort') !== 'ascending';
    Array.prototype.forEach.call(headers, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var c = compare(key(r1, i), key(r2, i));
      if (c !== 0) { return ascending ? c : -c; }
      return Number(r1.getAttribute('data-order')) - Number(r2.getAttribute('data-order'));
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(headers, function (th, i) {
    th.tabIndex = 0;
    th.addEventListener('click', function () { sortBy(th, i); });
    th.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(th, i); }
    });
  });
}());
'''

_DASH = '&#8212;'
_COLUMNS = ('Status', 'Host', 'GPU', 'Model', 'Architecture', 'Driver', 'CUDA', 'Temp &#176;C', 'Margin &#176;C',
            'ECC corrected (vol / agg)', 'ECC uncorrected (vol / agg)', 'Retired pages', 'Remapped rows', 'PCIe', 'Xid',
            'Problems')


def _h(value):
    """Escaped text for an HTML element or attribute (braces too)."""
    return html.escape(_clean(value), quote=True).translate(_BRACES)


def _td(value, sort=None, numeric=False, css=None):
    text = _h(value)
    classes = ' '.join(c for c in ('n' if numeric else None, css) if c)
    attrs = (' class="%s"' % classes if classes else '') + ('' if sort is None else ' data-sort="%s"' % _h(sort))
    return '<td%s>%s</td>' % (attrs, text or _DASH)


def _badge(status):
    return '<span class="badge %s">%s</span>' % (_h(status), _h(status))


def _first_known(counts):
    if not isinstance(counts, Mapping):
        return None
    return counts.get('volatile') if counts.get('volatile') is not None else counts.get('aggregate')


def _row_html(order, record):
    status = _clean(record['status'])
    # The sort key of the status cell: 0 for the worst status, so that ascending order is the sick first.
    rank = _health.SEVERITY[STATUSES[0]] - _health.SEVERITY.get(status, _health.SEVERITY[STATUSES[0]] + 1)
    pages, remap = record.get('retired_pages'), record.get('remapped_rows')
    pages_total = pages.get('total') if isinstance(pages, Mapping) else None
    remap_total = sum(v for v in (remap.get('correctable'), remap.get('uncorrectable')) if isinstance(v, int)) \
        if isinstance(remap, Mapping) else None
    problems = record.get('problems') or []
    failing = ', '.join(str(c) for c in record.get('failing') or [])
    cells = [
        '<td data-sort="%d">%s</td>' % (rank, _badge(status)),
        _td(record['host']),
        _td(record.get('gpu') if record.get('gpu') is not None else 'host', sort=-1 if record.get('gpu') is None
            else record.get('gpu'), numeric=True),
        _td(record.get('model')),
        _td(record.get('architecture')),
        _td(record.get('driver')),
        _td(record.get('cuda')),
        _td(record.get('temperature_c'), numeric=True),
        _td(record.get('temperature_margin_c'), numeric=True),
        _td(_pair(record.get('ecc_corrected')), sort=_first_known(record.get('ecc_corrected')), numeric=True),
        _td(_pair(record.get('ecc_uncorrected')), sort=_first_known(record.get('ecc_uncorrected')), numeric=True),
        _td(_retired(pages), sort=pages_total, numeric=True),
        _td(_remapped(remap), sort=remap_total),
        _td(record.get('pcie'), css='degraded' if record.get('pcie_degraded') else None),
        _td(', '.join(str(x) for x in record.get('xid') or [])),
        '<td class="problems" data-sort="%s">%s</td>' % (
            _h(failing), ''.join('<div>%s</div>' % _h(p) for p in problems) or _DASH),
    ]
    return '<tr data-status="%s" data-order="%d" class="s-%s">%s</tr>' % (_h(status), order, _h(status), ''.join(cells))


def to_html(report):
    """One self-contained HTML5 page: inline CSS and script, no external resource, every value escaped."""
    check_report(report)
    hosts = report['hosts']
    out = ['<!DOCTYPE html>', '<html lang="en">', '<head>', '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
           'script-src \'unsafe-inline\'">',
           '<title>GPU fleet report</title>', '<style>%s</style>' % _CSS, '</head>', '<body>',
           '<h1>GPU fleet report</h1>',
           '<p class="meta">Generated %s &#183; Xid window: %s</p>' % (_h(report['generated']), _h(report['xid_window'])),
           '<p class="meta">%s</p>' % _h(_headline(report)),
           '<section class="counts">',
           '<table id="by-status"><caption>By status</caption>',
           '<thead><tr><th>Status</th><th>Count</th></tr></thead><tbody>']
    out.extend('<tr class="s-%s"><td>%s</td><td class="n">%s</td></tr>' % (_h(s), _badge(s), _h(n))
               for s, n in _status_counts(report))
    out.extend(['</tbody></table>', '<table id="by-model"><caption>By model</caption>',
                '<thead><tr><th>Model</th><th>GPUs</th>%s</tr></thead><tbody>'
                % ''.join('<th>%s</th>' % _h(s) for s in STATUSES)])
    out.extend('<tr><td>%s</td><td class="n">%s</td>%s</tr>' % (
        _h(model), _h(entry.get('gpus', 0)), ''.join('<td class="n">%s</td>' % _h(entry.get(s, 0)) for s in STATUSES))
        for model, entry in _model_counts(report))
    out.extend(['</tbody></table>', '</section>', '<h2>Unreachable hosts</h2>'])
    lost = hosts.get('unreachable') or []
    if lost:
        out.append('<table id="unreachable"><thead><tr><th>Host</th><th>Error</th></tr></thead><tbody>')
        out.extend('<tr class="s-unreachable"><td>%s</td><td>%s</td></tr>' % (_h(h.get('host')), _h(h.get('error')))
                   for h in lost)
        out.append('</tbody></table>')
    else:
        out.append('<p>None.</p>')
    out.extend(['<h2>GPUs</h2>',
                '<p class="hint">The GPUs that are not ok come first. Click a column header to sort by it; '
                'click again to reverse.</p>',
                '<table id="gpus">', '<thead><tr>%s</tr></thead>' % ''.join(
                    '<th scope="col"%s>%s</th>' % (' aria-sort="ascending"' if i == 0 else '', name)
                    for i, name in enumerate(_COLUMNS)), '<tbody>'])
    out.extend(_row_html(i, r) for i, r in enumerate(report['records']))
    out.extend(['</tbody>', '</table>', '<script>%s</script>' % _JS, '</body>', '</html>', ''])
    return '\n'.join(out)


def _cut(line):
    line = _JINJA_RE.sub('{ ', line)
    return line if len(line) <= CONSOLE_WIDTH else line[:CONSOLE_WIDTH - 3] + '...'


def console_summary(report):
    """At most CONSOLE_LINES lines: totals, counts, the GPUs that are not ok (first problem each), unreachable hosts."""
    check_report(report)
    lines = ['GPU fleet report: %s; Xid window: %s' % (_headline(report), _clean(report['xid_window'])),
             'Status: %s' % ', '.join('%s %s' % (n, s) for s, n in _status_counts(report))]
    models = _model_counts(report)
    for model, entry in models[:_CONSOLE_MODELS]:
        split = ', '.join('%d %s' % (entry.get(s, 0), s) for s in STATUSES if entry.get(s))
        lines.append('  %s: %s%s' % (_clean(model), _plural(entry.get('gpus') or 0, 'GPU'),
                                     ' (%s)' % split if split else ''))
    if len(models) > _CONSOLE_MODELS:
        lines.append('  ... %d more models' % (len(models) - _CONSOLE_MODELS))
    lost = report['hosts'].get('unreachable') or []
    tail = []
    if lost:
        tail.append('Unreachable hosts (%d):' % len(lost))
        tail.extend('  %s: %s' % (_clean(h.get('host')), _clean(h.get('error'))) for h in lost[:_CONSOLE_UNREACHABLE])
        if len(lost) > _CONSOLE_UNREACHABLE:
            tail.append('  ... %d more unreachable hosts' % (len(lost) - _CONSOLE_UNREACHABLE))
    sick = _sick(report)
    if sick:
        room = CONSOLE_LINES - len(lines) - len(tail) - 1
        shown = sick if len(sick) <= room else sick[:max(room - 1, 0)]
        lines.append('Not ok (%d):' % len(sick))
        for r in shown:
            problems = r.get('problems') or []
            first = _clean(problems[0]) if problems else ', '.join(str(c) for c in r.get('failing') or [])
            more = ' (+%d more)' % (len(problems) - 1) if len(problems) > 1 else ''
            lines.append('  %s %s %s: %s%s' % (_clean(r['status']).upper(), _clean(r['host']), _where(r), first, more))
        if len(shown) < len(sick):
            lines.append('  ... %d more not ok: see the report' % (len(sick) - len(shown)))
    else:
        count = len(_gpu_records(report))
        lines.append('No GPU reported.' if not count else '1 GPU, ok.' if count == 1 else 'All %d GPUs are ok.' % count)
    return [_cut(line) for line in lines + tail]
