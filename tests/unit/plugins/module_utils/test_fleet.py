# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet report built from gpu_health results of recorded hosts, and its JSON, Markdown, HTML and console forms."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _facts
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _fleet
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pci
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


@pytest.mark.parametrize('args, message', [
    (([],), 'expected a mapping of host name to gpu_health result, got a list'),
    (({'h': 'ok'},), 'the result of h is not a gpu_health result: a string'),
    (({'h': {'checks': 'ok'}},), 'has checks = a string: expected a list'),
    (({'h': {'checks': [{'check': 'xid', 'gpu': 0, 'status': 'bad'}]}},), 'has a check that is not'),
    (({'h': {'checks': [], 'nvidia': []}},), 'has nvidia = a list: expected the gpu_facts mapping'),
    (({'h': {'checks': [], 'nvidia': {'gpus': 'x'}}},), 'nvidia.gpus'),
    (({'h': {'checks': [], 'xid_events': [1]}},), 'xid_events'),
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
    text = _fleet.to_json(report)
    assert json.loads(text) == report
    assert text.endswith('\n') and text.index('"counts"') < text.index('"generated"') < text.index('"records"')
    assert '\n  "counts": {\n' in text
    again = json.loads(text)
    assert _fleet.to_markdown(again) == _fleet.to_markdown(report)
    assert _fleet.to_html(again) == _fleet.to_html(report)
    assert _fleet.console_summary(again) == _fleet.console_summary(report)


def test_markdown_has_the_tables():
    text = _fleet.to_markdown(fleet_report())
    lines = text.splitlines()
    assert lines[0] == '# GPU fleet report'
    assert 'Generated 2025-02-23T17:00:00+00:00; Xid window: current boot.' in lines
    assert '23 GPUs on 7 hosts (5 reporting, 2 unreachable).' in lines
    for row in ('| Status | Count |', '| fail | 4 |', '| warn | 3 |', '| ok | 18 |', '| unreachable | 2 |',
                '| Model | GPUs | fail | warn | ok |', '| NVIDIA H100 80GB HBM3 | 12 | 1 | 0 | 11 |',
                '| NVIDIA H200 | 9 | 0 | 2 | 7 |', '| NVIDIA A100-PCIE-40GB | 2 | 1 | 1 | 0 |',
                '| Host | Error |', '| down | Failed to connect to the host via ssh: Connection timed out |',
                '| gone | %s |' % _fleet.NO_RESULT):
        assert row in lines, row
    sick = [line for line in lines[lines.index('## GPUs that are not ok'):] if line.startswith('| fail') or
            line.startswith('| warn')]
    assert len(sick) == 7
    assert sick[0].startswith('| fail | a100-ecc | 1 | NVIDIA A100-PCIE-40GB | 0000:af:00.0 | ecc_uncorrectable, ')
    assert sick[0].endswith('| 48, 63 |') and '<br>GPU 1 (0000:af:00.0): a row remap is pending' in sick[0]
    assert sick[1].startswith('| fail | h100-lost | - | - | - | gpu_count | nvidia-smi describes 6 GPUs, expected 8<br>')
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
    text = _fleet.to_markdown(_fleet.build({HOSTILE: result, 'p|q': None}))
    assert '<script>' not in text and '<img' not in text and '{{' not in text
    assert '&lt;script&gt;alert(1)&lt;/script&gt;' in text and 'a\\|b &lt;img src=x&gt; &#123;&#123; lookup' in text
    assert '| p\\|q | %s |' % _fleet.NO_RESULT in text
    assert 'id") &#125;&#125; next |' in text


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
    page = _fleet.to_html(report)
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
    page = _fleet.to_html(fleet_report())
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
    page = _fleet.to_html(_fleet.build({HOSTILE: result}, [{'host': '<iframe>', 'error': '</td></tr></table>'}],
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
    page = _fleet.to_html(fleet_report())
    cells = re.findall(r'<tr data-status="(\w+)"[^>]*><td data-sort="(-?\d+)">', page)
    assert len(cells) == 25 and cells[0] == ('fail', '0')
    assert sorted(set(cells)) == [('fail', '0'), ('ok', '2'), ('warn', '1')]
    ranks = [int(rank) for status, rank in cells]
    assert ranks == sorted(ranks)       # the report's order is the ascending order of the status column
    headers = [a for t, a in parse_page(page).tags if t == 'th' and a.get('scope') == 'col']
    assert headers[0].get('aria-sort') == 'ascending' and len(headers) == len(_fleet._COLUMNS)


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
    page = _fleet.to_html(fleet_report())
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
    lines = _fleet.console_summary(fleet_report())
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
    lines = _fleet.console_summary(_fleet.build(results, lost))
    assert len(lines) <= 25 and all(len(line) <= 160 for line in lines)
    assert '  ... 3 more models' in lines
    assert '  ... 7 more unreachable hosts' in lines
    assert [line for line in lines if line.startswith('  ... ') and line.endswith(' more not ok: see the report')]
    assert not [line for line in lines if '{{' in line]


def test_console_summary_when_all_is_well():
    report = _fleet.build({'h200-idle': gpu_health_result('h200_sxm_r580_idle.xml')})
    assert _fleet.console_summary(report) == [
        'GPU fleet report: 1 GPU on 1 host (1 reporting, 0 unreachable); Xid window: current boot',
        'Status: 0 fail, 0 warn, 1 ok, 0 unreachable',
        '  NVIDIA H200: 1 GPU (1 ok)',
        '1 GPU, ok.',
    ]


NOT_REPORTS = [None, [], 'report', {'h': {}}, dict(records=[1], hosts={}, counts={}, generated='', xid_window=''),
               dict(records=[], hosts=[], counts={}, generated='', xid_window='')]


@pytest.mark.parametrize('render', [_fleet.to_json, _fleet.to_markdown, _fleet.to_html, _fleet.console_summary])
@pytest.mark.parametrize('value', NOT_REPORTS)
def test_renderings_refuse_what_is_not_a_report(render, value):
    with pytest.raises(_fleet.FleetReportError, match='report'):
        render(value)


def test_retired_pages_in_the_record_and_on_the_page():
    report = _fleet.build({'v100': gpu_health_result('v100_retired_pages_r470.xml')})
    pending = [r for r in report['records'] if (r['retired_pages'] or {}).get('pending')]
    assert pending and pending[0]['status'] == 'warn' and 'retired_pages' in pending[0]['failing']
    assert pending[0]['remapped_rows'] is None and pending[0]['model'] == 'Tesla V100-SXM2-32GB'
    page = _fleet.to_html(report)
    assert '<td class="n" data-sort="%d">%d (pending)</td>' % ((pending[0]['retired_pages']['total'],) * 2) in page
