# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 29: the fleet report of junk is our own error or inert renderings (Hypothesis).

Host results of random and structured junk (any Unicode with controls, bidirectional and invisible characters,
Markdown and HTML syntax, wrong types at every level, GPU indexes given twice) either make FleetReportError or a
report whose Markdown, HTML, console lines and JSON hold no C1 control, no bidirectional character, no link or
image of their own and no tag but the page's own.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re
from html.parser import HTMLParser

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _fleet
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _fleet_render
from ansible_collections.gpuops.gpu_server.tests.support import markdown as markdown_check

GENERATED = '2025-02-23T17:00:00+00:00'
SETTINGS = settings(max_examples=60, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

C1 = [chr(c) for c in range(0x80, 0xa0)]
BIDI = ['\u061c', '\u200e', '\u200f'] + [chr(c) for c in range(0x202a, 0x202f)] + [chr(c) for c in range(0x2066, 0x206a)]
# Must appear in no rendering: C1 and bidi, the other C0 controls (Markdown and HTML keep their own newlines), the
# line separators, zero-width characters and lone surrogates.
NEVER = frozenset(C1 + BIDI + [chr(c) for c in range(0x20) if c != 0x0a] +
                  ['\x7f', '\u2028', '\u2029', '\u200b', '\ufeff', '\ud800', '\udfff'])
SNIPPETS = ['[click](http://evil)', '![x](http://evil/track.png)', '](', '![', '[', ']', '(', ')', '!', '\\', '`',
            '*', '_', '~', '|', '#', '$', '<', '>', '&', '&amp;', '&#91;', '<script>alert(1)</script>', '</td>',
            '<img src=x onerror=alert(1)>', '"', "'", '{{ x }}', '{%', '\n', '\r\n', '\t', ' ', 'http://evil',
            '<http://e>', '[1]: http://evil', '\\[', '\\]', 'www.evil.example', 'https://e.example', 'ops@e.example',
            'mailto:a@b.c', 'xmpp:a@b.c', '@', 'www.', '//']
JUNK_CHARS = sorted(NEVER | {'\xad', '\u2060', '\U000e0041', '\u0085', '\u009b'})

text = st.lists(st.one_of(st.text(st.characters(exclude_categories=()), max_size=3), st.sampled_from(SNIPPETS),
                          st.sampled_from(JUNK_CHARS)), max_size=5).map(''.join)
scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), text)
junk = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
                    max_leaves=6)


def maybe(good, odds=3):
    """Mostly the right type (``odds`` to one), sometimes anything at all (one_of would weigh them alike)."""
    return st.sampled_from([True] * odds + [False]).flatmap(lambda pick: good if pick else junk)


def maybe8(good):
    return maybe(good, 8)


count = st.one_of(st.none(), st.integers(0, 5000))
pci = st.sampled_from(['0000:18:00.0', '0000:3b:00.0', '0000:af:00.0'])
gpu = st.fixed_dictionaries({
    'index': maybe8(st.integers(0, 2)),                       # four GPUs at most, three indexes: often twice
    'name': maybe8(st.one_of(text, st.just('NVIDIA H200'))), 'uuid': maybe8(text), 'architecture': maybe8(text),
    'pci_bus_id': maybe8(st.one_of(pci, text)),
    'temperature_c': maybe8(st.one_of(st.none(), st.integers(20, 100))),
    'temperature_slowdown_c': maybe8(st.one_of(st.none(), st.integers(80, 95))),
    'temperature_slowdown_margin_c': maybe8(st.one_of(st.none(), st.integers(-5, 40))),
    'pcie_gen_current': maybe8(st.integers(1, 5)), 'pcie_gen_max': maybe8(st.integers(1, 5)),
    'pcie_width_current': maybe8(st.sampled_from([8, 16])), 'pcie_width_max': maybe8(st.just(16)),
    'ecc_errors': maybe8(st.fixed_dictionaries(dict(
        (kind, maybe8(st.fixed_dictionaries({'corrected': maybe8(count), 'uncorrected': maybe8(count)})))
        for kind in ('volatile', 'aggregate')))),
    'retired_pages': maybe8(st.one_of(st.none(), st.fixed_dictionaries({
        'single_bit_ecc': maybe8(count), 'double_bit_ecc': maybe8(count), 'total': maybe8(count),
        'pending': maybe8(st.booleans())}))),
    'remapped_rows': maybe8(st.one_of(st.none(), st.fixed_dictionaries({
        'correctable': maybe8(count), 'uncorrectable': maybe8(count), 'pending': maybe8(st.booleans()),
        'failure': maybe8(st.booleans())}))),
})
check = st.fixed_dictionaries({
    'check': maybe(st.one_of(st.sampled_from(['xid', 'temperature', 'gpu_count']), text)),
    'gpu': maybe(st.one_of(st.none(), st.integers(0, 2))),
    'status': maybe(st.sampled_from(['ok', 'warn', 'fail'])),
    'message': maybe(text),
})
event = st.fixed_dictionaries({'code': maybe(st.integers(0, 200)), 'pci': maybe(st.sampled_from(['0000:18:00', '0000:3b:00']))})
rarely = st.sampled_from([False, False, False, True])
result = st.fixed_dictionaries(
    {'nvidia': maybe(st.fixed_dictionaries({'gpus': maybe(st.lists(maybe(gpu, 6), min_size=1, max_size=3), 6)},
                                           optional={'driver_version': maybe(text), 'cuda_version': maybe(text)}), 6),
     'checks': maybe(st.lists(maybe(check, 6), max_size=3), 6)},
    optional={'xid_events': maybe(st.lists(maybe(event), max_size=3)),
              'msg': junk, 'failed': rarely, 'unreachable': rarely, 'skipped': rarely})
results = st.dictionaries(text, maybe(maybe(result, 12), 12), min_size=1, max_size=3)
unreachable = maybe(st.one_of(st.none(), st.lists(st.one_of(text, st.fixed_dictionaries(
    {'host': text.filter(bool)}, optional={'error': junk, 'msg': junk})), max_size=3), st.dictionaries(text, junk, max_size=2)), 8)
window = maybe(st.one_of(st.none(), text, st.integers(), st.floats()), 8)

MARKDOWN_TAGS = {'h1', 'h2', 'p', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'br'}
PAGE_TAGS = {'html', 'head', 'meta', 'title', 'style', 'body', 'h1', 'h2', 'p', 'section', 'table', 'caption', 'thead',
             'tbody', 'tr', 'th', 'td', 'span', 'div', 'script'}
PAGE_ATTRS = {'lang', 'charset', 'name', 'content', 'http-equiv', 'class', 'id', 'scope', 'aria-sort', 'data-sort',
              'data-status', 'data-order'}


class Page(HTMLParser):
    """The tags and attributes of a page, the text of its script and style, the cells of each table's body rows."""

    def __init__(self):
        HTMLParser.__init__(self, convert_charrefs=True)
        self.tags, self.attrs, self.inline, self.rows = set(), set(), {}, {}
        self.table = self.open = None

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.update(name for name, value in attrs)
        if tag == 'table':
            self.table = dict(attrs).get('id')
            self.rows[self.table] = []
        if tag == 'tr':
            self.rows[self.table].append(0)
        if tag == 'td':
            self.rows[self.table][-1] += 1
        if tag in ('script', 'style'):
            self.open = tag
            self.inline.setdefault(tag, []).append('')

    def handle_endtag(self, tag):
        self.open = None

    def handle_data(self, data):
        if self.open:
            self.inline[self.open][-1] += data


def assert_clean(name, output):
    bad = sorted(set(output) & NEVER)
    assert not bad, (name, bad, output)
    output.encode('utf-8')


def assert_markdown_inert(markdown):
    assert_clean('markdown', markdown)
    plain = markdown_check.plain(markdown)             # escaped characters and code spans of addresses are text
    assert '](' not in plain and '![' not in plain and '[' not in plain and ']' not in plain, markdown
    assert not re.search(r'<(?!br>)', plain), markdown
    assert '`' not in plain and '*' not in plain and '{{' not in markdown
    found = markdown_check.assert_renders_inert(markdown, MARKDOWN_TAGS)
    assert not found.tags & {'a', 'img', 'em', 'strong', 'del'}, markdown
    # Every row of a table has as many cells as its header.
    cells = []
    for line in markdown.splitlines() + ['']:
        if line.startswith('|'):
            cells.append(len(re.findall(r'(?<!\\)\|', re.sub(r'\\\\', '', line))))
        elif cells:
            assert len(set(cells)) == 1, (cells, markdown)
            cells = []


def assert_page_inert(page, report):
    assert_clean('html', page)
    parser = Page()
    parser.feed(page)
    parser.close()
    assert parser.tags <= PAGE_TAGS, parser.tags - PAGE_TAGS
    assert parser.attrs <= PAGE_ATTRS, parser.attrs - PAGE_ATTRS
    assert parser.inline == {'style': [_fleet_render._CSS], 'script': [_fleet_render._JS]}
    assert parser.rows['gpus'] == [0] + [len(_fleet_render._COLUMNS)] * len(report['records'])
    assert parser.rows.get('unreachable', [0])[1:] == [2] * len(report['hosts']['unreachable'])
    assert parser.rows['by-model'][1:] == [2 + len(_fleet.STATUSES)] * len(report['counts']['by_model'])
    assert '{{' not in page and '{%' not in page


def assert_console_inert(lines):
    assert isinstance(lines, list) and len(lines) <= _fleet_render.CONSOLE_LINES
    for line in lines:
        assert isinstance(line, str) and len(line) <= _fleet_render.CONSOLE_WIDTH and '\n' not in line
        assert_clean('console', line)
        assert '{{' not in line and '{%' not in line


def assert_inert(report):
    assert set(report) == set(_fleet.REPORT_KEYS)
    for record in report['records']:
        assert set(record) == set(_fleet.RECORD_KEYS) and record['status'] in _fleet.STATUSES
        for key in ('host', 'model', 'uuid', 'pci_bus_id', 'architecture', 'driver', 'cuda', 'pcie'):
            assert record[key] is None or isinstance(record[key], str)
            assert_clean(key, record[key] or '')
        for problem in record['problems'] + record['failing']:
            assert_clean('problem', problem)
    assert_markdown_inert(_fleet_render.to_markdown(report))
    assert_page_inert(_fleet_render.to_html(report), report)
    assert_console_inert(_fleet_render.console_summary(report))
    text = _fleet_render.to_json(report)
    assert_clean('json', text)
    again = json.loads(text)
    assert again == report and _fleet_render.to_html(again) == _fleet_render.to_html(report)


@SETTINGS
@given(results=results, unreachable=unreachable, window=window)
def test_junk_host_results_give_our_error_or_an_inert_report(results, unreachable, window):
    try:
        report = _fleet.build(results, unreachable, generated=GENERATED, window=window)
    except _fleet.FleetReportError as e:
        assert_clean('error', str(e))
        return
    assert_inert(report)
    # A junk result never drops its host: it has records, or it is listed as unreachable. Two names that differ only in
    # whitespace controls ('' and '\r', found by this test) are shown alike, so the total may exceed the names shown.
    named = set(r['host'] for r in report['records']) | set(h['host'] for h in report['hosts']['unreachable'])
    assert set(_fleet.clean_text(host) for host in results) <= named and report['hosts']['total'] >= len(named)


record = st.fixed_dictionaries({'host': maybe8(text), 'status': maybe8(st.sampled_from(['ok', 'warn', 'fail'])),
                                'gpu': maybe8(st.one_of(st.none(), st.integers(0, 7)))},
                               optional=dict((key, junk) for key in _fleet.RECORD_KEYS if key not in ('host', 'status', 'gpu')))
counts_of = st.dictionaries(text, maybe8(st.integers(0, 9)), max_size=3)
report = st.fixed_dictionaries({
    'generated': junk, 'xid_window': junk, 'records': maybe8(st.lists(record, max_size=3)),
    'hosts': maybe8(st.fixed_dictionaries({'total': maybe8(st.integers(0, 9)), 'reporting': maybe8(st.integers(0, 9)),
                                          'unreachable': maybe8(st.lists(maybe8(st.fixed_dictionaries(
                                              {'host': junk, 'error': junk})), max_size=3))})),
    'counts': maybe8(st.fixed_dictionaries({'gpus': junk, 'by_status': maybe8(counts_of),
                                           'by_model': maybe8(st.dictionaries(text, maybe8(counts_of), max_size=3))})),
})


@SETTINGS
@given(report=report)
def test_the_renderings_of_a_junk_report_are_our_error_or_inert(report):
    for render in (_fleet_render.to_markdown, _fleet_render.to_html, _fleet_render.console_summary, _fleet_render.to_json):
        try:
            out = render(report)
        except _fleet.FleetReportError as e:
            assert_clean('error', str(e))
            continue
        if render is _fleet_render.to_markdown:
            assert_markdown_inert(out)
        elif render is _fleet_render.to_html:
            assert_clean('html', out)
            parser = Page()
            parser.feed(out)
            assert parser.tags <= PAGE_TAGS and parser.attrs <= PAGE_ATTRS
            assert parser.inline == {'style': [_fleet_render._CSS], 'script': [_fleet_render._JS]}
            assert parser.rows['gpus'] == [0] + [len(_fleet_render._COLUMNS)] * len(report['records'])
        elif render is _fleet_render.console_summary:
            assert_console_inert(out)
        else:
            assert_clean('json', out)


CELL_TEXT = st.lists(st.one_of(st.sampled_from(SNIPPETS + ['a', 'b.c', ':', '.', '-', '+', 'http', 'mailto', 'xmpp',
                                                           'ftp', 'ww', '{', '}', '\\u00a0', '\\\\']),
                               st.text(st.characters(codec='utf-8'), max_size=2)), max_size=8).map(''.join)


@settings(max_examples=400, deadline=None, database=None)
@given(value=CELL_TEXT)
def test_a_markdown_cell_is_inert_and_reads_as_it_came(value):
    """Issue 52: any value, alone in a table cell of its own between two others, renders (cmark-gfm as GitHub, and
    markdown-it-py) as its cleaned text exactly: no link, autolink, tag or extra cell."""
    cell = _fleet_render._md(value)
    markdown = '| a | b | c |\n| --- | --- | --- |\n| x | %s | y |\n' % cell
    for render in (markdown_check.gfm, markdown_check.commonmark):
        found = markdown_check.elements(render(markdown))
        assert found.cells == ['a', 'b', 'c', 'x', _fleet.clean_text(value) or '-', 'y'], (value, cell, render)
    markdown_check.assert_renders_inert(markdown, {'table', 'thead', 'tbody', 'tr', 'th', 'td'})
