# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet report built from gpu_health results of recorded hosts, and its JSON, Markdown, HTML and console forms."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import copy
import datetime
import hashlib
import html as html_module
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _facts
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _fleet
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _fleet_render
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pci
from ansible_collections.gpuops.gpu_server.tests.support import markdown as markdown_check
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path, load_yaml, read_fixture

GENERATED = '2025-02-23T17:00:00+00:00'
HOSTILE = '<script>alert(1)</script>'


def gpu_health_result(capture=None, kernel_log='no_xid.txt', expected_gpu_count=None, no_driver=None):
    """What gpu_health (fail_on: never) registers for a host whose nvidia-smi printed ``capture`` (or failed as
    ``no_driver`` in no_driver.yml) and whose kernel log is ``kernel_log``: the module's own steps, without a process."""
    pci_ids = _pci.load_pci_ids([fixture_path('pci_ids', 'pci.ids')])[0]
    if capture:
        facts = _facts.from_report(_nvidia_smi.parse(read_fixture('nvidia_smi', capture)), [], pci_ids)
    else:
        out = load_yaml('nvidia_smi', 'no_driver.yml')[no_driver]
        facts = _facts.without_driver(_facts.nvidia_smi_failure_reason(
            ['nvidia-smi', '-q', '-x'], out['rc'], out['stdout'], out['stderr']), [])
    events = _kernel_log.parse(read_fixture('kernel_log', kernel_log))
    result = _health.evaluate(facts, events, expected_gpu_count=expected_gpu_count)
    for event in events:
        event.pop('line', None)
    return {'changed': False, 'failed': False, 'status': result['status'],
            'reaches': _health.levels_reached(result['status']), 'checks': result['checks'], 'xid_events': events,
            'kernel_log_source': 'file', 'nvidia': facts}


def fleet_results():
    """Five hosts that answered and one without a result.

    h200-hgx: the 8-GPU HGX H200, no Xid (GPU 3 near its slowdown temperature and GPU 5 on a x8 link warn, the
    other six are ok); h200-idle: a healthy single H200; h100-lost: an H100 node whose nvidia-smi lost two of eight
    GPUs; a100-ecc: uncorrectable ECC errors, a pending row remap and Xid 48/63 on GPU 1, Xid 31 on GPU 0;
    h100-xid: the same H100 capture with Xid 79 on GPU 1 (0000:3b:00) and Xids 43/62 of devices nvidia-smi does
    not describe; gone: None.
    """
    return {
        'h200-hgx': gpu_health_result('hgx_h200_8gpu_r570.xml', expected_gpu_count=8),
        'h200-idle': gpu_health_result('h200_sxm_r580_idle.xml'),
        'h100-lost': gpu_health_result('h100_lost_gpus_r535.xml', expected_gpu_count=8),
        'a100-ecc': gpu_health_result('a100_ecc_remap_r525.xml', 'dmesg_ctime.txt'),
        'h100-xid': gpu_health_result('h100_lost_gpus_r535.xml', 'journal_short.txt'),
        'gone': None,
    }


UNREACHABLE = [{'host': 'down', 'error': 'Failed to connect to the host via ssh: Connection timed out'}]


def fleet_report(**kwargs):
    kwargs.setdefault('generated', GENERATED)
    return _fleet.build(fleet_results(), UNREACHABLE, **kwargs)


def records_of(report, host):
    return dict((r['gpu'], r) for r in report['records'] if r['host'] == host)


# ---------------------------------------------------------------------------------------------------------------
# build


def test_sick_records_come_first_then_by_host_and_gpu():
    records = fleet_report()['records']
    assert [(r['status'], r['host'], r['gpu']) for r in records if r['status'] != 'ok'] == [
        ('fail', 'a100-ecc', 1), ('fail', 'h100-lost', None), ('fail', 'h100-xid', None), ('fail', 'h100-xid', 1),
        ('warn', 'a100-ecc', 0), ('warn', 'h200-hgx', 3), ('warn', 'h200-hgx', 5)]
    ranks = [_health.SEVERITY[r['status']] for r in records]
    assert ranks == sorted(ranks, reverse=True)
    ok = [(r['host'], r['gpu']) for r in records if r['status'] == 'ok']
    assert ok == sorted(ok) and len(ok) == 18


def test_one_record_per_gpu_and_a_host_wide_record_for_host_wide_findings():
    report = fleet_report()
    assert sorted(records_of(report, 'h200-hgx')) == list(range(8))
    assert sorted(records_of(report, 'h200-idle')) == [0]
    lost = records_of(report, 'h100-lost')
    assert sorted(lost, key=lambda g: -1 if g is None else g) == [None, 0, 1, 2, 3, 4, 5]
    wide = lost[None]
    assert wide['status'] == 'fail' and wide['failing'] == ['gpu_count']
    assert wide['problems'] == ['nvidia-smi describes 6 GPUs, expected 8',
                                'the driver counts 8 GPUs but nvidia-smi describes only 6']
    assert wide['model'] is None and wide['pcie'] is None and wide['pcie_degraded'] is False
    assert wide['driver'] == '535.161.08' and wide['cuda'] == '12.2'
    assert all(lost[i]['status'] == 'ok' and lost[i]['problems'] == [] for i in range(6))


def test_record_keys_and_values_come_from_the_facts():
    report = fleet_report()
    for record in report['records']:
        assert set(record) == set(_fleet.RECORD_KEYS)
    sick = records_of(report, 'a100-ecc')[1]
    assert sick['status'] == 'fail'
    assert sick['failing'] == ['ecc_uncorrectable', 'row_remapping', 'clock_slowdown', 'xid']
    assert sick['problems'][0] == 'GPU 1 (0000:af:00.0): 2 uncorrectable ECC errors since the driver loaded'
    assert len(sick['problems']) == 5
    assert (sick['model'], sick['architecture'], sick['driver'], sick['cuda']) == \
        ('NVIDIA A100-PCIE-40GB', 'Ampere', '525.85.12', '12.0')
    assert sick['pci_bus_id'] == '0000:af:00.0' and sick['uuid'].startswith('GPU-')
    assert sick['ecc_uncorrected'] == {'volatile': 2, 'aggregate': 2}
    assert sick['ecc_corrected'] == {'volatile': 15, 'aggregate': 97}
    assert sick['remapped_rows']['pending'] is True and sick['remapped_rows']['failure'] is False
    assert sick['retired_pages'] is None            # an A100 remaps rows instead
    assert sick['xid'] == [48, 63]
    assert sick['pcie'] == 'Gen4 x16 (max Gen4 x16)' and sick['pcie_degraded'] is False
    hgx = records_of(report, 'h200-hgx')
    assert hgx[5]['pcie'].endswith('x8 (max Gen5 x16)') and hgx[5]['pcie_degraded'] is True
    assert hgx[5]['failing'] == ['pcie_link_width']
    assert (hgx[3]['temperature_c'], hgx[3]['temperature_margin_c'], hgx[3]['failing']) == (84, 3, ['temperature'])
    assert hgx[0]['status'] == 'ok' and hgx[0]['failing'] == [] and hgx[0]['xid'] == []
    assert hgx[0]['architecture'] == 'Hopper' and hgx[0]['driver'] == '570.86.15' and hgx[0]['cuda'] == '12.8'


def test_xid_codes_go_to_the_gpu_at_their_pci_address():
    report = fleet_report()
    xid = records_of(report, 'h100-xid')
    assert xid[1]['pci_bus_id'] == '0000:3b:00.0'
    assert (xid[1]['status'], xid[1]['xid'], xid[1]['failing']) == ('fail', [79], ['xid'])
    assert all(xid[i]['xid'] == [] and xid[i]['status'] == 'ok' for i in (0, 2, 3, 4, 5))
    # Devices nvidia-smi does not describe: on the host-wide record.
    assert xid[None]['xid'] == [43, 62] and xid[None]['failing'] == ['gpu_count', 'xid']
    a100 = records_of(report, 'a100-ecc')
    assert (a100[0]['xid'], a100[1]['xid']) == ([31], [48, 63])
    assert None not in a100


def test_repeated_xid_codes_are_listed_once():
    result = gpu_health_result('a100_ecc_remap_r525.xml', 'dmesg_raw.txt')      # Xid 13, 13, 43 on 0000:18:00
    records = records_of(_fleet.build({'a100': result}), 'a100')
    assert records[None]['xid'] == [13, 43] and records[0]['xid'] == [79]


def test_counts_by_status_and_by_model():
    report = fleet_report()
    assert report['counts']['by_status'] == {'fail': 4, 'warn': 3, 'ok': 18, 'unreachable': 2}
    assert report['counts']['gpus'] == 23
    assert report['counts']['by_model'] == {
        'NVIDIA H200': {'gpus': 9, 'fail': 0, 'warn': 2, 'ok': 7},
        'NVIDIA H100 80GB HBM3': {'gpus': 12, 'fail': 1, 'warn': 0, 'ok': 11},
        'NVIDIA A100-PCIE-40GB': {'gpus': 2, 'fail': 1, 'warn': 1, 'ok': 0},
    }
    assert report['hosts']['total'] == 7 and report['hosts']['reporting'] == 5


def test_unreachable_hosts_are_listed_not_dropped():
    report = fleet_report()
    assert report['hosts']['unreachable'] == [
        {'host': 'down', 'error': 'Failed to connect to the host via ssh: Connection timed out'},
        {'host': 'gone', 'error': _fleet.NO_RESULT}]
    assert not [r for r in report['records'] if r['host'] in ('down', 'gone')]
    assert all(r['status'] in _health.SEVERITY for r in report['records'])


def test_forms_of_the_unreachable_list_and_failed_results():
    healthy = gpu_health_result('h200_sxm_r580_idle.xml')
    results = {'a': healthy, 'b': healthy, 'c': {'failed': True, 'msg': 'nvidia-smi -q -x did not finish within 30 seconds'},
               'd': {'unreachable': True, 'msg': 'Data could not be sent to remote host "d".'},
               'e': {'skipped': True, 'skip_reason': 'Conditional result was False'}}
    report = _fleet.build(results, ['b', 'x', {'host': 'y', 'msg': 'timed\nout'}, 'x'])
    assert report['hosts']['unreachable'] == [
        {'host': 'b', 'error': 'unreachable'},
        {'host': 'c', 'error': 'nvidia-smi -q -x did not finish within 30 seconds'},
        {'host': 'd', 'error': 'Data could not be sent to remote host "d".'},
        {'host': 'e', 'error': _fleet.NO_RESULT},
        {'host': 'x', 'error': 'unreachable'},
        {'host': 'y', 'error': 'timed out'}]
    assert [r['host'] for r in report['records']] == ['a']
    assert (report['hosts']['total'], report['hosts']['reporting']) == (7, 1)
    assert _fleet.build({}, {'z': 'no route to host'})['hosts']['unreachable'] == [{'host': 'z', 'error': 'no route to host'}]


def test_a_failed_gpu_health_run_with_checks_is_still_reported():
    result = dict(gpu_health_result('h100_lost_gpus_r535.xml', expected_gpu_count=8), failed=True,
                  msg='GPU health is fail: nvidia-smi describes 6 GPUs, expected 8')
    report = _fleet.build({'h100': result})
    assert report['hosts']['reporting'] == 1 and report['records'][0]['status'] == 'fail'


def test_a_host_without_a_driver_gets_one_host_wide_record():
    report = _fleet.build({'ws': gpu_health_result(no_driver='driver_not_loaded')})
    [record] = report['records']
    assert (record['gpu'], record['status'], record['failing'], record['model']) == (None, 'fail', ['driver_loaded'], None)
    assert record['problems'][0].startswith('NVIDIA driver not usable: nvidia-smi could not communicate')
    assert report['counts']['gpus'] == 0 and report['counts']['by_model'] == {}
    assert report['counts']['by_status'] == {'fail': 1, 'warn': 0, 'ok': 0, 'unreachable': 0}


def test_generated_and_window():
    report = _fleet.build({})
    when = datetime.datetime.fromisoformat(report['generated'])
    assert when.utcoffset() == datetime.timedelta(0)
    assert report['xid_window'] == 'current boot'
    assert _fleet.build({}, window='-24h', generated=datetime.datetime(2025, 2, 23, 17, 0))['xid_window'] == '-24h'
    assert _fleet.build({}, generated=datetime.datetime(2025, 2, 23, 17, 0))['generated'] == '2025-02-23T17:00:00'
    assert report['records'] == [] and report['hosts'] == {'total': 0, 'reporting': 0, 'unreachable': []}


# What the caller passes is refused; what a host sent is read field by field (see Unreadable parts below).
@pytest.mark.parametrize('args, message', [
    (([],), 'expected a mapping of host name to gpu_health result, got a list'),
    (({'h': 'ok'},), 'the result of h is not a gpu_health result: a string'),
    (({'h\u202e\x9b': ['ok']},), 'the result of h\\u202e\\u009b is not a gpu_health result: a list'),
    (({}, 5), 'the unreachable hosts must be a list'),
    (({}, [5]), 'each unreachable host must be'),
    (({}, [{'error': 'x'}]), 'each unreachable host must be'),
])
def test_build_refuses(args, message):
    with pytest.raises(_fleet.FleetReportError, match=re.escape(message)):
        _fleet.build(*args)


def test_build_refuses_a_window_or_time_of_the_wrong_type():
    with pytest.raises(_fleet.FleetReportError, match='window'):
        _fleet.build({}, window={'since': '-1h'})
    with pytest.raises(_fleet.FleetReportError, match='generated'):
        _fleet.build({}, generated=12)


# ---------------------------------------------------------------------------------------------------------------
# JSON and Markdown


def test_json_round_trips_and_the_renderings_read_the_round_tripped_report():
    report = fleet_report()
    text = _fleet_render.to_json(report)
    assert json.loads(text) == report
    assert text.endswith('\n') and text.index('"counts"') < text.index('"generated"') < text.index('"records"')
    assert '\n  "counts": {\n' in text
    again = json.loads(text)
    assert _fleet_render.to_markdown(again) == _fleet_render.to_markdown(report)
    assert _fleet_render.to_html(again) == _fleet_render.to_html(report)
    assert _fleet_render.console_summary(again) == _fleet_render.console_summary(report)


def test_markdown_has_the_tables():
    text = _fleet_render.to_markdown(fleet_report())
    lines = text.splitlines()
    assert lines[0] == '# GPU fleet report'
    assert 'Generated 2025-02-23T17:00:00+00:00; Xid window: current boot.' in lines
    assert '23 GPUs on 7 hosts (5 reporting, 2 unreachable).' in lines
    for row in ('| Status | Count |', '| fail | 4 |', '| warn | 3 |', '| ok | 18 |', '| unreachable | 2 |',
                '| Model | GPUs | fail | warn | ok |', '| NVIDIA H100 80GB HBM3 | 12 | 1 | 0 | 11 |',
                '| NVIDIA H200 | 9 | 0 | 2 | 7 |', '| NVIDIA A100-PCIE-40GB | 2 | 1 | 1 | 0 |',
                '| Host | Error |', '| down | Failed to connect to the host via ssh: Connection timed out |',
                '| gone | no gpu\\_health result for this host |'):
        assert row in lines, row
    sick = [line for line in lines[lines.index('## GPUs that are not ok'):] if line.startswith('| fail') or
            line.startswith('| warn')]
    assert len(sick) == 7
    assert sick[0].startswith('| fail | a100-ecc | 1 | NVIDIA A100-PCIE-40GB | 0000:af:00.0 | ecc\\_uncorrectable, ')
    assert sick[0].endswith('| 48, 63 |') and '<br>GPU 1 \\(0000:af:00.0\\): a row remap is pending' in sick[0]
    assert sick[1].startswith('| fail | h100-lost | - | - | - | gpu\\_count | nvidia-smi describes 6 GPUs, expected 8<br>')
    assert lines[-1] == '18 of 23 GPUs are ok.'
    # Every row of a table has as many cells as its header (escaped pipes are text).
    blocks, block = [], []
    for line in lines + ['']:
        if line.startswith('|'):
            block.append(len(re.findall(r'(?<!\\)\|', line)))
        elif block:
            blocks.append(block)
            block = []
    assert len(blocks) == 4 and all(len(set(b)) == 1 for b in blocks), blocks


def test_markdown_escapes_machine_text():
    result = gpu_health_result('h200_sxm_r580_idle.xml')
    result['checks'].append({'check': 'xid', 'gpu': 0, 'status': 'warn', 'value': 13,
                             'message': 'a|b <img src=x> {{ lookup("pipe", "id") }}\nnext'})
    text = _fleet_render.to_markdown(_fleet.build({HOSTILE: result, 'p|q': None}))
    assert '<script>' not in text and '<img' not in text and '{{' not in text
    assert '&lt;script&gt;alert\\(1\\)&lt;/script&gt;' in text and 'a\\|b &lt;img src=x&gt; &#123;&#123; lookup' in text
    assert '| p\\|q | no gpu\\_health result for this host |' in text
    assert 'id"\\) &#125;&#125; next |' in text


# ---------------------------------------------------------------------------------------------------------------
# HTML

VOID = frozenset(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr'])


class PageParser(HTMLParser):
    """Checks that every element is closed in order; collects the tags and the rows of table#gpus."""

    def __init__(self):
        HTMLParser.__init__(self, convert_charrefs=True)
        self.stack, self.tags, self.errors, self.rows = [], [], [], []
        self.doctype, self.in_gpus, self.in_body = None, False, False
        self.text = []

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == 'table' and attrs.get('id') == 'gpus':
            self.in_gpus = True
        if self.in_gpus and tag == 'tbody':
            self.in_body = True
        if self.in_body and tag == 'tr':
            self.rows.append(attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append('</%s> closes <%s>' % (tag, self.stack[-1] if self.stack else None))
            return
        self.stack.pop()
        if tag == 'tbody':
            self.in_body = False
        if tag == 'table':
            self.in_gpus = False

    def handle_data(self, data):
        self.text.append(data)


def parse_page(page):
    parser = PageParser()
    parser.feed(page)
    parser.close()
    assert parser.errors == [] and parser.stack == [], (parser.errors, parser.stack)
    return parser


def test_html_is_one_well_formed_page_with_the_sick_gpus_first():
    report = fleet_report()
    page = _fleet_render.to_html(report)
    parser = parse_page(page)
    assert parser.doctype.lower() == 'doctype html'
    assert [t for t, a in parser.tags].count('html') == 1 and ('table', {'id': 'gpus'}) in parser.tags
    assert [row['data-status'] for row in parser.rows] == [r['status'] for r in report['records']]
    assert parser.rows[0]['data-status'] == 'fail' and parser.rows[0]['class'] == 's-fail'
    assert [int(row['data-order']) for row in parser.rows] == list(range(len(report['records'])))
    text = ' '.join(parser.text)
    for fragment in ('By status', 'By model', 'NVIDIA H100 80GB HBM3', 'Unreachable hosts', 'down', 'gone',
                     'Failed to connect to the host via ssh', 'GPU 1 (0000:af:00.0): a row remap is pending'):
        assert fragment in text, fragment
    assert ('table', {'id': 'by-status'}) in [(t, a) for t, a in parser.tags if t == 'table' and a.get('id')]
    assert ('table', {'id': 'by-model'}) in [(t, a) for t, a in parser.tags if t == 'table' and a.get('id')]
    assert ('table', {'id': 'unreachable'}) in [(t, a) for t, a in parser.tags if t == 'table' and a.get('id')]


def test_html_loads_nothing_from_outside():
    page = _fleet_render.to_html(fleet_report())
    low = page.lower()
    for needle in ('http://', 'https://', 'src=', 'href=', '@import', 'url(', '//cdn', '@font-face'):
        assert needle not in low, needle
    tags = [t for t, a in parse_page(page).tags]
    assert not set(tags) & {'link', 'img', 'iframe', 'object', 'embed', 'base', 'form'}
    assert tags.count('script') == 1 and tags.count('style') == 1
    assert "default-src 'none'" in page


def test_html_escapes_machine_text():
    result = gpu_health_result('h200_sxm_r580_idle.xml')
    result['checks'].append({'check': 'xid', 'gpu': 0, 'status': 'fail', 'value': 79,
                             'message': '"><img src=x onerror=alert(2)> {{ lookup("pipe", "id") }} {% if %}'})
    result['nvidia']['gpus'][0]['name'] = '<b onmouseover=alert(3)>H200</b>'
    page = _fleet_render.to_html(_fleet.build({HOSTILE: result}, [{'host': '<iframe>', 'error': '</td></tr></table>'}],
                                              window='"><script>'))
    parser = parse_page(page)
    tags = [t for t, a in parser.tags]
    assert tags.count('script') == 1 and 'img' not in tags and 'iframe' not in tags and 'b' not in tags
    assert '<script>alert(1)' not in page and '&lt;script&gt;alert(1)&lt;/script&gt;' in page
    assert 'onerror' not in ''.join(''.join(a.keys()) for t, a in parser.tags)
    assert '{{' not in page and '{%' not in page and '{#' not in page
    text = ' '.join(parser.text)
    assert HOSTILE in text and '</td></tr></table>' in text and '<iframe>' in text


def test_html_status_cells_sort_sick_first():
    page = _fleet_render.to_html(fleet_report())
    cells = re.findall(r'<tr data-status="(\w+)"[^>]*><td data-sort="(-?\d+)">', page)
    assert len(cells) == 25 and cells[0] == ('fail', '0')
    assert sorted(set(cells)) == [('fail', '0'), ('ok', '2'), ('warn', '1')]
    ranks = [int(rank) for status, rank in cells]
    assert ranks == sorted(ranks)       # the report's order is the ascending order of the status column
    headers = [a for t, a in parse_page(page).tags if t == 'th' and a.get('scope') == 'col']
    assert headers[0].get('aria-sort') == 'ascending' and len(headers) == len(_fleet_render._COLUMNS)


NODE = shutil.which('node')

# A stand-in for the few DOM calls the page's script makes: one table of three columns.
_FAKE_DOM = r'''
function cell(text, sort) { return {textContent: text, getAttribute: function (n) {
  return n === 'data-sort' && sort !== undefined ? String(sort) : null; }}; }
function row(order, cells) { return {cells: cells, getAttribute: function (n) {
  return n === 'data-order' ? String(order) : null; }}; }
var body = {rows: [], appendChild: function (r) { this.rows.splice(this.rows.indexOf(r), 1); this.rows.push(r); }};
body.rows = [row(0, [cell('fail', 2), cell('node10'), cell('1', 1)]), row(1, [cell('warn', 1), cell('node2'), cell('-', -1)]),
             row(2, [cell('ok', 0), cell('node9'), cell('12', 12)]), row(3, [cell('ok', 0), cell('node2'), cell('3', 3)])];
var click = [];
function th(i) { var a = {}; return {setAttribute: function (k, v) { a[k] = v; }, getAttribute: function (k) {
  return k in a ? a[k] : null; }, removeAttribute: function (k) { delete a[k]; },
  addEventListener: function (e, f) { if (e === 'click') { click[i] = f; } }}; }
var table = {tHead: {rows: [{cells: [th(0), th(1), th(2)]}]}, tBodies: [body]};
var document = {getElementById: function () { return table; }};
'''
_FAKE_DOM_END = r'''
function order() { return body.rows.map(function (r) { return r.cells[1].textContent + '/' + r.cells[2].textContent; }).join(' '); }
var seen = [];
click[1](); seen.push(order()); click[1](); seen.push(order()); click[2](); seen.push(order());
console.log(JSON.stringify(seen));
'''


@pytest.mark.skipif(NODE is None, reason='node is not installed')
def test_the_page_script_sorts_numbers_as_numbers(tmp_path):
    page = _fleet_render.to_html(fleet_report())
    script = re.search(r'<script>(.*?)</script>', page, re.S).group(1)
    path = tmp_path / 'sort.js'
    path.write_text(_FAKE_DOM + script + _FAKE_DOM_END)
    proc = subprocess.run([NODE, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                          universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [
        'node2/- node2/3 node9/12 node10/1',         # host names in numeric order, ties in report order
        'node10/1 node9/12 node2/- node2/3',         # a second click reverses
        'node2/- node10/1 node2/3 node9/12',         # GPU indices as numbers (data-sort), host-wide first
    ]


# ---------------------------------------------------------------------------------------------------------------
# Console


def test_console_summary_fits_one_screen():
    lines = _fleet_render.console_summary(fleet_report())
    assert len(lines) <= 25
    assert lines[0] == 'GPU fleet report: 23 GPUs on 7 hosts (5 reporting, 2 unreachable); Xid window: current boot'
    assert lines[1] == 'Status: 4 fail, 3 warn, 18 ok, 2 unreachable'
    assert '  NVIDIA H200: 9 GPUs (2 warn, 7 ok)' in lines
    assert 'Not ok (7):' in lines
    assert '  FAIL a100-ecc GPU 1: GPU 1 (0000:af:00.0): 2 uncorrectable ECC errors since the driver loaded (+4 more)' \
        in lines
    assert '  FAIL h100-lost host-wide: nvidia-smi describes 6 GPUs, expected 8 (+1 more)' in lines
    assert lines[-3:] == ['Unreachable hosts (2):', '  down: Failed to connect to the host via ssh: Connection timed out',
                          '  gone: %s' % _fleet.NO_RESULT]


def test_console_summary_of_a_large_sick_fleet_is_cut():
    sick = gpu_health_result('a100_ecc_remap_r525.xml', 'dmesg_ctime.txt')
    results = dict(('node%03d' % i, sick) for i in range(40))
    results[HOSTILE + ' {{ x }}'] = sick
    models = dict(('m%d' % i, gpu_health_result('h200_sxm_r580_idle.xml')) for i in range(7))
    for i, (host, result) in enumerate(sorted(models.items())):
        result['nvidia']['gpus'][0]['name'] = 'Model %d' % i
        results[host] = result
    lost = [{'host': 'down%02d' % i, 'error': 'x' * 400} for i in range(12)]
    lines = _fleet_render.console_summary(_fleet.build(results, lost))
    assert len(lines) <= 25 and all(len(line) <= 160 for line in lines)
    assert '  ... 3 more models' in lines
    assert '  ... 7 more unreachable hosts' in lines
    assert [line for line in lines if line.startswith('  ... ') and line.endswith(' more not ok: see the report')]
    assert not [line for line in lines if '{{' in line]


def test_console_summary_when_all_is_well():
    report = _fleet.build({'h200-idle': gpu_health_result('h200_sxm_r580_idle.xml')})
    assert _fleet_render.console_summary(report) == [
        'GPU fleet report: 1 GPU on 1 host (1 reporting, 0 unreachable); Xid window: current boot',
        'Status: 0 fail, 0 warn, 1 ok, 0 unreachable',
        '  NVIDIA H200: 1 GPU (1 ok)',
        '1 GPU, ok.',
    ]


NOT_REPORTS = [None, [], 'report', {'h': {}}, dict(records=[1], hosts={}, counts={}, generated='', xid_window=''),
               dict(records=[], hosts=[], counts={}, generated='', xid_window='')]


@pytest.mark.parametrize('render', [_fleet_render.to_json, _fleet_render.to_markdown, _fleet_render.to_html, _fleet_render.console_summary])
@pytest.mark.parametrize('value', NOT_REPORTS)
def test_renderings_refuse_what_is_not_a_report(render, value):
    with pytest.raises(_fleet.FleetReportError, match='report'):
        render(value)


def test_retired_pages_in_the_record_and_on_the_page():
    report = _fleet.build({'v100': gpu_health_result('v100_retired_pages_r470.xml')})
    pending = [r for r in report['records'] if (r['retired_pages'] or {}).get('pending')]
    assert pending and pending[0]['status'] == 'warn' and 'retired_pages' in pending[0]['failing']
    assert pending[0]['remapped_rows'] is None and pending[0]['model'] == 'Tesla V100-SXM2-32GB'
    page = _fleet_render.to_html(report)
    assert '<td class="n" data-sort="%d">%d (pending)</td>' % ((pending[0]['retired_pages']['total'],) * 2) in page


# ---------------------------------------------------------------------------------------------------------------
# Issue 29: the reports are inert. Machine text cannot add a link, an image, markup, a terminal control or a
# direction change to a rendering; wrong types from a host are named, never a traceback; one index given to two
# GPUs is a problem of its own; the page runs only its own script.

MARKDOWN_ACTIVE = ['[click](http://evil)', '![x](http://evil/track.png)', '[x][1]', '[1]: http://evil', '<http://evil>',
                   '\\[x\\](http://evil)', '\\![x](http://evil/y.png)', '`code` **bold** _it_ ~~gone~~ $x$',
                   '# heading', '| a | b |', '<img src=x onerror=alert(1)>', '&lt;b&gt;', '&#91;x&#93;(http://evil)']
# C1 controls (U+009B is CSI, U+0085 NEL) and the bidirectional marks, embeddings, overrides and isolates.
C1_AND_BIDI = ['\x80', '\x85', '\x9b', '\x9f', '\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d',
               '\u202e', '\u2066', '\u2067', '\u2068', '\u2069']
OTHER_INVISIBLE = ['\x00', '\x1b', '\x7f', '\xad', '\u200b', '\u2028', '\u2029', '\u2060', '\ufeff', '\ud800',
                   '\U000e0041']
MARKDOWN_TAGS = {'h1', 'h2', 'p', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'br'}


def hostile_report(text):
    """A report with ``text`` wherever a host's words reach it: host name, GPU model, architecture, driver, check
    name and message, Xid window, an unreachable host and its error."""
    result = gpu_health_result('h200_sxm_r580_idle.xml')
    result['nvidia']['gpus'][0]['name'] = 'H200 %s end' % text
    result['nvidia']['gpus'][0]['architecture'] = text
    result['nvidia']['driver_version'] = '580 %s' % text
    result['checks'].append({'check': 'xid%s' % text, 'gpu': 0, 'status': 'fail', 'value': 79,
                             'message': 'Xid 79 %s fallen off the bus' % text})
    return _fleet.build({'gpu %s 01' % text: result}, [{'host': 'down %s' % text, 'error': 'ssh: %s refused' % text}],
                        generated=GENERATED, window='-1h %s' % text)


def renderings(report):
    return {'markdown': _fleet_render.to_markdown(report), 'html': _fleet_render.to_html(report),
            'console': '\n'.join(_fleet_render.console_summary(report)), 'json': _fleet_render.to_json(report),
            'records': json.dumps(report, ensure_ascii=False)}


@pytest.mark.parametrize('text', MARKDOWN_ACTIVE)
def test_markdown_keeps_link_and_image_syntax_as_text(text):
    markdown = _fleet_render.to_markdown(hostile_report(text))
    plain = markdown_check.plain(markdown)
    assert '](' not in plain and '![' not in plain and '][' not in plain, markdown
    for char in '[]`*_~!$':
        assert char not in plain, (char, markdown)
    assert not re.search(r'<(?!br>)', plain), markdown       # no tag but the report's own <br>
    assert not [line for line in markdown.splitlines() if line.startswith('#') and not line.startswith(('# GPU', '## '))]
    found = markdown_check.assert_renders_inert(markdown, MARKDOWN_TAGS)
    assert not found.tags & {'a', 'img', 'em', 'strong', 'del'}, markdown


def test_markdown_shows_the_text_as_it_was():
    """Rendered, every escaped value reads as it came, the link syntax included (as text)."""
    text = '[click](http://evil) ![x](http://e/t.png) a_b *c* `d` | \\ # root@10.0.0.5: www.e.com {{ x }}'
    html = markdown_check.gfm(_fleet_render.to_markdown(hostile_report(text)))
    shown = ''.join(markdown_check.elements(html).text)
    assert 'H200 %s end' % text in shown
    assert 'gpu %s 01' % text in shown


# What GitHub Flavored Markdown links without any link syntax (spec 0.29-gfm, 6.9 "Autolinks (extension)"), and
# CommonMark's <...> autolinks, alone and among the characters that an escaper must keep outside a code span.
AUTOLINKS = ['www.evil.example', 'www.evil.example/a?b=c', '(www.evil.example)', '*www.evil.example*',
             'WWW.evil.example', 'http://evil.example', 'https://evil.example/x', 'HTTPS://EVIL.EXAMPLE',
             'ftp://evil.example/f',
             'ops@evil.example', 'a.b+c-d_e@evil.example', 'root@10.0.0.5:',
             'ssh: root@gpu01.example: Permission denied',
             'mailto:ops@evil.example', 'xmpp:ops@evil.example/resource', '<http://evil.example>', '<ops@evil.example>',
             '//evil.example/x', 'a|https://evil.example|b', 'x{{www.evil.example}}y', '`https://evil.example`',
             'http://evil.example/\\', 'www.evil.example\\|x', 'https://evil.example/<script>',
             'http://evil.example/&amp;', 'ops\\@evil.example', 'ops&#64;evil.example', 'http&#58;//evil.example',
             'go to\u00a0https://evil.example\u3000now', 'https://evil.example\u202e/x', 'a@b.c\n| injected | row |']


def autolink_report(text):
    """hostile_report with ``text`` also as a problem of a second check, so a cell holds two problems."""
    report = hostile_report(text)
    sick = [r for r in report['records'] if r['gpu'] == 0][0]
    sick['problems'].append('second %s problem' % text)
    return report


def markdown_cells(markdown):
    """The number of cells of each table row, per table (an escaped pipe is text)."""
    tables, table = [], []
    for line in markdown.splitlines() + ['']:
        if line.startswith('|'):
            table.append(len(re.findall(r'(?<!\\)\|', re.sub(r'\\\\', '', line))))
        elif table:
            tables.append(table)
            table = []
    return tables


def assert_no_autolink(text):
    markdown = _fleet_render.to_markdown(autolink_report(text))
    found = markdown_check.assert_renders_inert(markdown, MARKDOWN_TAGS)
    assert 'a' not in found.tags, markdown
    assert all(len(set(cells)) == 1 for cells in markdown_cells(markdown)), markdown
    shown = ''.join(found.text)
    assert _fleet.clean_text('H200 %s end' % text) in shown, (shown, markdown)


@pytest.mark.parametrize('text', AUTOLINKS)
def test_markdown_never_autolinks_machine_text(text):
    """GitHub's own renderer makes no link of a bare URL, www. name or e-mail address in any value, nor of a <...>
    autolink; the tables keep their columns; the text reads as it came."""
    assert_no_autolink(text)


def test_negative_control_the_escapes_alone_let_github_autolink(monkeypatch):
    """The check above catches the old escaper (backslash escapes and entities only): cmark-gfm finds an e-mail
    address after they are resolved, and www. names and URLs hold nothing to escape."""
    def old_md(value):
        text = _fleet_render._MD_ACTIVE_RE.sub(r'\\\1', _fleet.clean_text(value))
        return html_module.escape(text, quote=False).translate(_fleet_render._BRACES) or '-'
    monkeypatch.setattr(_fleet_render, '_md', old_md)
    caught = []
    for text in AUTOLINKS:
        try:
            assert_no_autolink(text)
        except AssertionError:
            caught.append(text)
    # GitHub links each of these when only escaped (an e-mail address even with its @ escaped or as an entity).
    assert set(caught) >= {'www.evil.example', 'www.evil.example/a?b=c', '(www.evil.example)', '*www.evil.example*',
                           'http://evil.example', 'https://evil.example/x', 'HTTPS://EVIL.EXAMPLE',
                           'ftp://evil.example/f', 'ops@evil.example', 'a.b+c-d_e@evil.example',
                           'ssh: root@gpu01.example: Permission denied', 'mailto:ops@evil.example',
                           'xmpp:ops@evil.example/resource', '<ops@evil.example>', 'a|https://evil.example|b',
                           '`https://evil.example`', 'a@b.c\n| injected | row |'}, caught
    # Why a code span: escaping the @, or writing it as an entity, still makes a link on GitHub.
    for spelling in ('ops\\@evil.example', 'ops&#64;evil.example', 'ops\\@evil\\.example'):
        assert '<a href="mailto:ops@evil.example">' in markdown_check.gfm(spelling), spelling


def test_markdown_escapes_in_one_function():
    """Every value in the Markdown report goes through _md: a value with an address is a code span wherever it is,
    and the words around it stay escaped text."""
    assert _fleet_render._md('ssh: root@10.0.0.5: refused_x') == 'ssh: `root@10.0.0.5:` refused\\_x'
    assert _fleet_render._md('a|b@c.d{x}`') == 'a\\|`b@c.d`&#123;x&#125;\\`'
    assert _fleet_render._md('<x@y.z>') == '`<x@y.z>`' and _fleet_render._md('**www.e.com**') == '`**www.e.com**`'
    assert _fleet_render._md('0000:3b:00.0 example.com') == '0000:3b:00.0 example.com'     # no autolink: text
    assert _fleet_render._md('') == '-' and _fleet_render._md(None) == '-'


@pytest.mark.parametrize('char', C1_AND_BIDI + OTHER_INVISIBLE, ids=lambda c: 'U+%04X' % ord(c))
def test_control_and_bidi_characters_are_shown_escaped(char):
    escaped = '\\u%04x' % ord(char) if ord(char) <= 0xffff else '\\U%08x' % ord(char)
    report = hostile_report('a%sb' % char)
    outputs = renderings(report)
    for name, text in outputs.items():
        assert char not in text, name
        text.encode('utf-8')                    # a lone surrogate could not be written
    assert escaped in outputs['console'] and escaped in outputs['html']
    assert escaped in outputs['markdown'].replace('\\\\', '\\')
    record = [r for r in report['records'] if r['gpu'] == 0][0]
    assert record['model'] == 'H200 a%sb end' % escaped and record['host'] == 'gpu a%sb 01' % escaped


def test_whitespace_controls_are_one_space():
    report = hostile_report('a\r\n\tb')
    assert [r['model'] for r in report['records']] == ['H200 a b end']
    assert '  down a b: ssh: a b refused' in _fleet_render.console_summary(report)


# ---------------------------------------------------------------------------------------------------------------
# Unreadable parts of a host's result


def put(result, path, value):
    """Set ``path`` (dotted; list positions as numbers, '+' appends) in a copy of ``result``."""
    result = copy.deepcopy(result)
    *parents, last = path.split('.')
    node = result
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if last == '+':
        node.append(value)
    else:
        node[int(last) if isinstance(node, list) else last] = value
    return result


# (path, value, the record that names it (GPU index or None), its status, the problem)
UNREADABLE = [
    ('nvidia.gpus.0.name', ['H200'], 0, 'warn', 'nvidia.gpus[0].name is a list, expected text: unreadable'),
    ('nvidia.gpus.0.uuid', {'id': 1}, 0, 'warn', 'nvidia.gpus[0].uuid is a mapping, expected text'),
    ('nvidia.gpus.0.temperature_c', {'c': 80}, 0, 'warn', 'nvidia.gpus[0].temperature_c is a mapping, expected a number'),
    ('nvidia.gpus.0.temperature_slowdown_margin_c', 'hot', 0, 'warn', "temperature_slowdown_margin_c is 'hot'"),
    ('nvidia.gpus.0.temperature_slowdown_margin_c', float('nan'), 0, 'warn', 'temperature_slowdown_margin_c is nan'),
    ('nvidia.gpus.0.pcie_width_current', 'x16', 0, 'warn', "nvidia.gpus[0].pcie_width_current is 'x16', expected a number"),
    ('nvidia.gpus.0.pcie_gen_max', True, 0, 'warn', 'nvidia.gpus[0].pcie_gen_max is True, expected a number'),
    ('nvidia.gpus.0.ecc_errors', ['x'], 0, 'warn', 'nvidia.gpus[0].ecc_errors is a list, expected a mapping'),
    ('nvidia.gpus.0.ecc_errors.volatile', 7, 0, 'warn', 'nvidia.gpus[0].ecc_errors.volatile is 7, expected a mapping'),
    ('nvidia.gpus.0.ecc_errors.aggregate.corrected', '12', 0, 'warn', "ecc_errors.aggregate.corrected is '12', expected a count"),
    ('nvidia.gpus.0.retired_pages', 'none', 0, 'warn', "nvidia.gpus[0].retired_pages is 'none', expected a mapping"),
    ('nvidia.gpus.0.remapped_rows', [1, 2], 0, 'warn', 'nvidia.gpus[0].remapped_rows is a list, expected a mapping'),
    ('nvidia.gpus.0.remapped_rows', {'pending': 'yes'}, 0, 'warn', "remapped_rows.pending is 'yes', expected true or false"),
    ('nvidia.gpus.0.pci_bus_id', ['0000:18:00.0'], 0, 'warn', 'nvidia.gpus[0].pci_bus_id is a list, expected text'),
    ('nvidia.gpus.0.index', [0], None, 'fail', 'nvidia.gpus[0].index is a list, expected a GPU index'),
    ('nvidia.gpus.0.index', True, None, 'fail', 'nvidia.gpus[0].index is True, expected a GPU index'),
    ('nvidia.gpus.0.index', 10 ** 5000, None, 'fail', 'nvidia.gpus[0].index is a number, expected a GPU index'),
    ('nvidia.gpus.0', 'GPU0', None, 'fail', "nvidia.gpus[0] is 'GPU0', expected a GPU mapping"),
    ('nvidia.gpus', 'x', None, 'fail', "nvidia.gpus is 'x', expected a list of GPUs"),
    ('nvidia', [], None, 'fail', 'nvidia is a list, expected a mapping'),
    ('nvidia.driver_version', {'v': 1}, None, 'warn', 'nvidia.driver_version is a mapping, expected text'),
    ('checks', 'ok', None, 'fail', "checks is 'ok', expected a list of checks"),
    ('checks.+', 'fail', None, 'fail', "checks[{n}] is 'fail', expected a check mapping"),
    ('checks.+', {'check': 'xid', 'gpu': 0, 'status': ['fail']}, None, 'fail', 'checks[{n}].status is a list, expected fail/warn/ok'),
    ('checks.+', {'check': 'xid', 'gpu': 0, 'status': 'FAIL'}, None, 'fail', "checks[{n}].status is 'FAIL', expected fail/warn/ok"),
    ('checks.+', {'gpu': 0, 'status': 'fail', 'message': 'm'}, None, 'fail', 'checks[{n}].check is None, expected the name'),
    ('checks.+', {'check': 'xid', 'gpu': '0', 'status': 'fail'}, None, 'fail', "checks[{n}].gpu is '0', expected null or a GPU index"),
    ('checks.+', {'check': 'xid', 'gpu': 0, 'status': 'warn', 'message': {'m': 1}}, 0, 'warn',
     'xid: the message is a mapping (unreadable)'),
    ('xid_events', 'x', None, 'warn', "xid_events is 'x', expected a list of Xid events"),
    ('xid_events.+', 79, None, 'warn', 'xid_events[0] is 79, expected a Xid event mapping'),
    ('xid_events.+', {'code': [79]}, None, 'warn', 'xid_events[0].code is a list, expected an Xid code'),
    ('xid_events.+', {'code': 79, 'pci': ['0000:18:00']}, None, 'warn', 'xid_events[0].pci is a list, expected a PCI address'),
]


@pytest.mark.parametrize('path, value, gpu, status, problem', UNREADABLE, ids=[u[0] + '-' + type(u[1]).__name__ for u in UNREADABLE])
def test_a_wrong_type_from_a_host_is_unreadable_and_the_report_goes_on(path, value, gpu, status, problem):
    result = gpu_health_result('h200_sxm_r580_idle.xml')
    assert result['xid_events'] == []
    problem = problem.replace('{n}', str(len(result['checks'])))
    result = put(result, path, value)
    if path == 'nvidia.gpus.0.pci_bus_id':
        result['xid_events'] = [{'code': 79, 'pci': '0000:18:00', 'status': 'fail'}]
    report = _fleet.build({'odd': result, 'fine': gpu_health_result('h200_sxm_r580_idle.xml')}, generated=GENERATED)
    odd = records_of(report, 'odd')
    assert gpu in odd, odd
    record = odd[gpu]
    assert [p for p in record['problems'] if problem in p], record['problems']
    assert record['status'] == status
    if 'message' not in problem:
        assert 'unreadable' in record['failing']
    assert records_of(report, 'fine')[0]['status'] == 'ok' and report['hosts']['reporting'] == 2
    for r in report['records']:
        assert set(r) == set(_fleet.RECORD_KEYS)
    outputs = renderings(report)
    assert json.loads(outputs['json']) == report
    assert problem.split(':')[0].replace('_', '\\_').replace('[', '\\[').replace(']', '\\]') in outputs['markdown']


@pytest.mark.parametrize('path, value, field', [
    ('records.0.failing', 5, 'records[0].failing = 5: expected a list'),
    ('records.0.problems', 7, 'records[0].problems = 7: expected a list'),
    ('records.0.xid', 79, 'records[0].xid = 79: expected a list'),
    ('records.0.gpu', 'x', "records[0].gpu = 'x': expected null or a GPU index"),
    ('records.0.status', ['fail'], 'records[0].status = a list: expected fail/warn/ok'),
    ('records.0.host', 5, 'records[0].host = 5: expected text'),
    ('hosts.total', 'many', "hosts.total = 'many': expected a count"),
    ('hosts.reporting', -1, 'hosts.reporting = -1: expected a count'),
    ('hosts.unreachable.0', 'down', "hosts.unreachable[0] = 'down': expected {host, error}"),
    ('counts.by_status.fail', 'x', "counts.by_status.fail = 'x': expected a count"),
    ('counts.by_status.2', 3, 'counts.by_status key = 2: expected text'),
    ('counts.by_model.NVIDIA H200', [1], "counts.by_model['NVIDIA H200'] = a list: expected a count or {gpus"),
    ('counts.by_model.NVIDIA H200.gpus', 'x', "counts.by_model['NVIDIA H200'].gpus = 'x': expected a count"),
])
@pytest.mark.parametrize('render', [_fleet_render.to_json, _fleet_render.to_markdown, _fleet_render.to_html, _fleet_render.console_summary])
def test_the_renderings_refuse_a_report_of_the_wrong_types_naming_the_field(render, path, value, field):
    report = fleet_report()
    if path == 'counts.by_status.2':
        report['counts']['by_status'][2] = 3
    else:
        *parents, last = path.split('.')
        node = report
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
    with pytest.raises(_fleet.FleetReportError) as e:
        render(report)
    assert str(e.value) == 'the report has ' + field or str(e.value).startswith('the report has ' + field), str(e.value)


# ---------------------------------------------------------------------------------------------------------------
# Duplicate GPU indexes


def test_two_gpus_with_one_index_are_both_kept_and_flagged():
    result = gpu_health_result('hgx_h200_8gpu_r570.xml', expected_gpu_count=8)
    gpus = result['nvidia']['gpus']
    gpus[0]['name'], gpus[3]['name'], gpus[3]['index'] = 'NVIDIA H200 first', 'NVIDIA H200 second', 0
    report = _fleet.build({'hgx': result}, generated=GENERATED)
    twins = [r for r in report['records'] if r['gpu'] == 0]
    assert sorted((r['model'], r['pci_bus_id']) for r in twins) == [
        ('NVIDIA H200 first', gpus[0]['pci_bus_id']), ('NVIDIA H200 second', gpus[3]['pci_bus_id'])]
    for record in twins:
        assert record['status'] == 'fail' and 'duplicate_gpu_index' in record['failing']
        assert 'nvidia-smi describes 2 GPUs with index 0 (nvidia.gpus[0], nvidia.gpus[3]): their checks cannot be ' \
               'told apart' in record['problems']
    assert report['counts']['gpus'] == 8 and report['counts']['by_model']['NVIDIA H200 second']['fail'] == 1
    markdown = _fleet_render.to_markdown(report)
    assert 'NVIDIA H200 first | %s | duplicate\\_gpu\\_index' % gpus[0]['pci_bus_id'] in markdown
    assert 'NVIDIA H200 second | %s | duplicate\\_gpu\\_index' % gpus[3]['pci_bus_id'] in markdown
    text = ' '.join(parse_page(_fleet_render.to_html(report)).text)
    assert 'NVIDIA H200 first' in text and 'NVIDIA H200 second' in text
    assert len([line for line in _fleet_render.console_summary(report) if 'GPU 0: nvidia-smi describes 2 GPUs' in line]) == 2


def test_xid_codes_follow_the_pci_address_when_indexes_repeat():
    result = gpu_health_result('hgx_h200_8gpu_r570.xml', expected_gpu_count=8)
    gpus = result['nvidia']['gpus']
    gpus[3]['index'] = 0
    result['xid_events'] = [{'code': 79, 'pci': gpus[3]['pci_bus_id'][:-2]}]
    twins = dict((r['pci_bus_id'], r) for r in _fleet.build({'hgx': result})['records'] if r['gpu'] == 0)
    assert twins[gpus[3]['pci_bus_id']]['xid'] == [79] and twins[gpus[0]['pci_bus_id']]['xid'] == []


# ---------------------------------------------------------------------------------------------------------------
# The page's Content-Security-Policy


class Inline(HTMLParser):
    """The page's CSP and the text of each inline script and style."""

    def __init__(self):
        HTMLParser.__init__(self, convert_charrefs=False)
        self.csp, self.inline, self.open = [], [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == 'meta' and (attrs.get('http-equiv') or '').lower() == 'content-security-policy':
            self.csp.append(attrs['content'])
        if tag in ('script', 'style'):
            self.open = [tag, '']
            self.inline.append(self.open)

    def handle_data(self, data):
        if self.open:
            self.open[1] += data

    def handle_endtag(self, tag):
        self.open = None


def csp_of(page):
    parser = Inline()
    parser.feed(page)
    parser.close()
    assert len(parser.csp) == 1, parser.csp
    directives = dict((d.split()[0], d.split()[1:]) for d in parser.csp[0].split(';') if d.strip())
    return directives, parser.inline


def test_the_page_allows_its_own_script_and_style_by_hash_and_nothing_else():
    page = _fleet_render.to_html(hostile_report('"><script>alert(1)</script><style>*{}</style>'))
    csp, inline = csp_of(page)
    assert csp['default-src'] == ["'none'"] and csp['base-uri'] == ["'none'"] and csp['form-action'] == ["'none'"]
    assert [tag for tag, text in inline] == ['style', 'script']
    for tag, text in inline:
        digest = "'sha256-%s'" % base64.b64encode(hashlib.sha256(text.encode('utf-8')).digest()).decode('ascii')
        assert csp[tag + '-src'] == [digest], (tag, csp)
    for sources in csp.values():
        assert not set(sources) & {"'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", '*', 'data:', 'blob:'}
    assert csp['script-src'] != csp['style-src']
