# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet report (_fleet.build) rendered: JSON, Markdown, one self-contained HTML page, a one-screen console summary.

Used by the fleet_report filters (plugins/filter/fleet.py) on the control node. Standard library only. Each
renderer first checks the report (_fleet.check_report: FleetReportError naming the part of the wrong type). The
machine text in it stays inert: Markdown escapes its active characters and writes a word that a renderer would
autolink (a URL, www. name or e-mail address) as a code span (_md), HTML escapes its own, braces become entities
(or lose their Jinja2 meaning on the console), and the page runs only its own script (allowed by hash).

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import hashlib
import html
import json
import re
from collections.abc import Mapping

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils._fleet import (
    STATUSES, UNREACHABLE, FleetReportError, check_report, clean_text, join_text, visible_text)

# The console summary fits one screen: at most this many lines, each at most this wide.
CONSOLE_LINES = 25
CONSOLE_WIDTH = 160
_CONSOLE_MODELS = 5
_CONSOLE_UNREACHABLE = 5

# The openings of Jinja2 syntax. ansible-core before 2.19 templates a plain string again when a task reads it
# through a loop item or a variable, so machine text must not carry them into the renderings.
_JINJA_RE = re.compile(r'\{(?=[{%#])')
_BRACES = {ord('{'): '&#123;', ord('}'): '&#125;'}


# ---------------------------------------------------------------------------------------------------------------
# What every rendering shows

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
    rows = [(clean_text(model), entry if isinstance(entry, Mapping) else {'gpus': entry})
            for model, entry in by_model.items()]
    return sorted(rows, key=lambda item: (-(item[1].get('gpus') or 0), item[0]))


def _where(record):
    return 'host-wide' if record.get('gpu') is None else 'GPU %s' % record['gpu']


def _shown(value):
    return '?' if value is None else clean_text(value)


def _pair(counts):
    if not isinstance(counts, Mapping):
        return ''
    volatile, aggregate = counts.get('volatile'), counts.get('aggregate')
    if volatile is None and aggregate is None:
        return ''
    return '%s / %s' % (_shown(volatile), _shown(aggregate))


def _retired(pages):
    if not isinstance(pages, Mapping) or not pages:
        return ''
    total = pages.get('total')
    return '%s%s' % (_shown(total), ' (pending)' if pages.get('pending') else '')


def _remapped(rows):
    if not isinstance(rows, Mapping) or not rows:
        return ''
    text = 'corr %s, unc %s' % tuple(_shown(rows.get(k)) for k in ('correctable', 'uncorrectable'))
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
    check_report(report)
    try:
        return json.dumps(report, sort_keys=True, indent=2, allow_nan=False) + '\n'
    except (TypeError, ValueError) as e:
        raise FleetReportError('the report cannot be written as JSON: %s' % e)


# What Markdown acts on in a line of text or a table cell, each shown as itself with a backslash: the backslash,
# code spans, emphasis and strikethrough, link and image syntax, the table's pipes, headings, math. The HTML
# characters & < > become entities (no tag, no CommonMark <...> autolink, no entity of the text's own), braces too
# (Jinja2).
_MD_ACTIVE_RE = re.compile(r'([\\`*_~\[\]()!|#$])')
# A word (a run without spaces) that a Markdown renderer could make a link of although it holds no link syntax: the
# extended autolinks of GitHub Flavored Markdown (www., http://, https://, ftp://, e-mail addresses, mailto: and
# xmpp:; spec 0.29-gfm, section 6.9) and the protocol-relative //host of linkify-it. Escapes and entities do not stop
# them: cmark-gfm finds e-mail addresses in the text after its escapes and entities are resolved (a\@b.c is still a
# mailto: link), so such a word is written as a code span, which no renderer links. Matched in any case, wider than
# the renderers (which take www. in lower case only). A bare domain (example.com) is no GFM autolink and stays text.
_MD_LINKABLE_RE = re.compile(r'@|www\.|//|(?:https?|ftp|mailto|xmpp):', re.IGNORECASE)
# What a code span cannot hold as itself: its own delimiter, the table's pipe (GFM splits cells before code spans,
# and a \| inside one is shown with its backslash outside a table) and braces (Jinja2; an entity in a code span is
# shown as its text). Each is written outside the code span, escaped as above; none is part of what starts an
# autolink (@, www., //, scheme:), so each start lies whole in one part between them.
_MD_CODE_SPLIT_RE = re.compile(r'([`|{}]+)')
_MD_WORD_RE = re.compile(r'(\s+)')


def _md_plain(text):
    return html.escape(_MD_ACTIVE_RE.sub(r'\\\1', text), quote=False).translate(_BRACES)


def _md_word(word):
    return ''.join(_md_plain(part) if _MD_CODE_SPLIT_RE.match(part) or not _MD_LINKABLE_RE.search(part)
                   else '`%s`' % part for part in _MD_CODE_SPLIT_RE.split(word) if part)


def _md(value):
    """Markdown text for a table cell or a line, on one line, inert: no link, autolink, image, emphasis, code, HTML,
    heading or pipe of its own (``[x](http://e)`` stays text; a word a renderer would autolink, such as
    ``www.example.com``, ``https://e`` or ``root@10.0.0.5``, is a code span); '-' when empty. The one escaper of
    every value in the Markdown report."""
    return ''.join(_md_word(word) for word in _MD_WORD_RE.split(clean_text(value)) if word) or '-'


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
                _md(r.get('pci_bus_id')), _md(join_text(r.get('failing') or [])),
                '<br>'.join(_md(p) for p in r.get('problems') or []) or '-', _md(join_text(r.get('xid') or []))))
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


def _csp_source(text):
    """The CSP source that allows one inline element whose text is ``text``: the base64 of its SHA-256."""
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(text.encode('utf-8')).digest()).decode('ascii')


# The page loads nothing and runs only its own script and style, each allowed by the hash of its exact text: a
# value that escaped its escaping could neither run a script, nor style the page, nor send a form anywhere.
CSP = ("default-src 'none'; script-src %s; style-src %s; base-uri 'none'; form-action 'none'"
       % (_csp_source(_JS), _csp_source(_CSS)))

_DASH = '&#8212;'
_COLUMNS = ('Status', 'Host', 'GPU', 'Model', 'Architecture', 'Driver', 'CUDA', 'Temp &#176;C', 'Margin &#176;C',
            'ECC corrected (vol / agg)', 'ECC uncorrected (vol / agg)', 'Retired pages', 'Remapped rows', 'PCIe', 'Xid',
            'Problems')


def _h(value):
    """Escaped text for an HTML element or attribute (braces too)."""
    return html.escape(clean_text(value), quote=True).translate(_BRACES)


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
    status = clean_text(record['status'])
    # The sort key of the status cell: 0 for the worst status, so that ascending order is the sick first.
    rank = _health.SEVERITY[STATUSES[0]] - _health.SEVERITY.get(status, _health.SEVERITY[STATUSES[0]] + 1)
    pages, remap = record.get('retired_pages'), record.get('remapped_rows')
    pages_total = pages.get('total') if isinstance(pages, Mapping) else None
    remap_total = sum(v for v in (remap.get('correctable'), remap.get('uncorrectable')) if isinstance(v, int)) \
        if isinstance(remap, Mapping) else None
    problems = record.get('problems') or []
    failing = join_text(record.get('failing') or [])
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
        _td(join_text(record.get('xid') or [])),
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
           '<meta http-equiv="Content-Security-Policy" content="%s">' % CSP,
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
    line = _JINJA_RE.sub('{ ', visible_text(line))
    return line if len(line) <= CONSOLE_WIDTH else line[:CONSOLE_WIDTH - 3] + '...'


def console_summary(report):
    """At most CONSOLE_LINES lines: totals, counts, the GPUs that are not ok (first problem each), unreachable hosts."""
    check_report(report)
    lines = ['GPU fleet report: %s; Xid window: %s' % (_headline(report), clean_text(report['xid_window'])),
             'Status: %s' % ', '.join('%s %s' % (n, s) for s, n in _status_counts(report))]
    models = _model_counts(report)
    for model, entry in models[:_CONSOLE_MODELS]:
        split = ', '.join('%d %s' % (entry.get(s, 0), s) for s in STATUSES if entry.get(s))
        lines.append('  %s: %s%s' % (clean_text(model), _plural(entry.get('gpus') or 0, 'GPU'),
                                     ' (%s)' % split if split else ''))
    if len(models) > _CONSOLE_MODELS:
        lines.append('  ... %d more models' % (len(models) - _CONSOLE_MODELS))
    lost = report['hosts'].get('unreachable') or []
    tail = []
    if lost:
        tail.append('Unreachable hosts (%d):' % len(lost))
        tail.extend('  %s: %s' % (clean_text(h.get('host')), clean_text(h.get('error')))
                    for h in lost[:_CONSOLE_UNREACHABLE])
        if len(lost) > _CONSOLE_UNREACHABLE:
            tail.append('  ... %d more unreachable hosts' % (len(lost) - _CONSOLE_UNREACHABLE))
    sick = _sick(report)
    if sick:
        room = CONSOLE_LINES - len(lines) - len(tail) - 1
        shown = sick if len(sick) <= room else sick[:max(room - 1, 0)]
        lines.append('Not ok (%d):' % len(sick))
        for r in shown:
            problems = r.get('problems') or []
            first = clean_text(problems[0]) if problems else join_text(r.get('failing') or [])
            more = ' (+%d more)' % (len(problems) - 1) if len(problems) > 1 else ''
            lines.append('  %s %s %s: %s%s' % (clean_text(r['status']).upper(), clean_text(r['host']), _where(r),
                                               first, more))
        if len(shown) < len(sick):
            lines.append('  ... %d more not ok: see the report' % (len(sick) - len(shown)))
    else:
        count = len(_gpu_records(report))
        lines.append('No GPU reported.' if not count else '1 GPU, ok.' if count == 1 else 'All %d GPUs are ok.' % count)
    return [_cut(line) for line in lines + tail]
