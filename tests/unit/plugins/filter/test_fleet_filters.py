# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet_report filters over gpu_health results built from the recorded captures."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
from html.parser import HTMLParser

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import fleet
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _facts
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _fleet
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pci
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path, read_fixture

FILTERS = fleet.FilterModule().filters()
NAMES = ('fleet_report', 'fleet_report_markdown', 'fleet_report_html', 'fleet_report_summary')
FILTER_DIR = os.path.dirname(os.path.abspath(fleet.__file__))


def gpu_health_result(capture, kernel_log='no_xid.txt', expected_gpu_count=None):
    """gpu_health's registered result (fail_on: never) for a host whose nvidia-smi printed ``capture``."""
    pci_ids = _pci.load_pci_ids([fixture_path('pci_ids', 'pci.ids')])[0]
    facts = _facts.from_report(_nvidia_smi.parse(read_fixture('nvidia_smi', capture)), [], pci_ids)
    events = _kernel_log.parse(read_fixture('kernel_log', kernel_log))
    result = _health.evaluate(facts, events, expected_gpu_count=expected_gpu_count)
    for event in events:
        event.pop('line', None)
    return {'changed': False, 'failed': False, 'status': result['status'], 'checks': result['checks'],
            'xid_events': events, 'kernel_log_source': 'file', 'nvidia': facts}


def results():
    return {
        'h200-hgx': gpu_health_result('hgx_h200_8gpu_r570.xml', expected_gpu_count=8),
        'h100-lost': gpu_health_result('h100_lost_gpus_r535.xml', expected_gpu_count=8),
        'a100-ecc': gpu_health_result('a100_ecc_remap_r525.xml', 'dmesg_ctime.txt'),
        'h100-xid': gpu_health_result('h100_lost_gpus_r535.xml', 'journal_short.txt'),
        '<script>alert(1)</script>': None,
    }


# What playbooks/fleet_report.yml passes for the hosts that did not answer.
LOST = [{'host': 'gpu-down-03', 'error': 'Failed to connect to the host via ssh: connect to host 127.0.0.1 port 1'}]


def test_the_four_filters_and_their_documentation():
    assert sorted(FILTERS) == sorted(NAMES)
    for name in NAMES:
        with open(os.path.join(FILTER_DIR, name + '.yml')) as f:
            doc = yaml.safe_load(f)
        assert doc['DOCUMENTATION']['name'] == name
        assert doc['DOCUMENTATION']['version_added'] == '1.0.0'
        assert set(doc) == {'DOCUMENTATION', 'EXAMPLES', 'RETURN'} and '_value' in doc['RETURN']
        assert 'gpuops.gpu_server.%s' % name in doc['EXAMPLES']


def test_fleet_report_is_the_report_of_module_utils():
    report = FILTERS['fleet_report'](results(), LOST, window='-24h')
    assert report['xid_window'] == '-24h'
    same = _fleet.build(results(), LOST, generated=report['generated'], window='-24h')
    assert report == same
    assert report['records'][0]['status'] == 'fail'
    assert [h['host'] for h in report['hosts']['unreachable']] == ['<script>alert(1)</script>', 'gpu-down-03']
    assert report['counts']['by_status'] == {'fail': 4, 'warn': 3, 'ok': 17, 'unreachable': 2}
    assert [(r['host'], r['gpu']) for r in report['records'] if r['xid'] == [79]] == [('h100-xid', 1)]


def test_the_renderings_through_the_filters():
    report = json.loads(json.dumps(FILTERS['fleet_report'](results(), LOST, generated='2025-02-23T17:00:00+00:00')))
    markdown = FILTERS['fleet_report_markdown'](report)
    assert '| fail | 4 |' in markdown and '| gpu-down-03 | Failed to connect' in markdown
    assert '&lt;script&gt;alert\\(1\\)&lt;/script&gt;' in markdown and '<script>' not in markdown
    page = FILTERS['fleet_report_html'](report)
    assert page.startswith('<!DOCTYPE html>') and '<script>alert(1)' not in page

    class Rows(HTMLParser):
        statuses = []

        def handle_starttag(self, tag, attrs):
            if tag == 'tr' and dict(attrs).get('data-status'):
                self.statuses.append(dict(attrs)['data-status'])
    parser = Rows()
    parser.feed(page)
    assert parser.statuses[0] == 'fail' and len(parser.statuses) == len(report['records'])
    summary = FILTERS['fleet_report_summary'](report)
    assert isinstance(summary, list) and len(summary) <= 25
    assert summary[1] == 'Status: 4 fail, 3 warn, 17 ok, 2 unreachable'
    assert '  gpu-down-03: Failed to connect to the host via ssh: connect to host 127.0.0.1 port 1' in summary


@pytest.mark.parametrize('args, kwargs, message', [
    (([],), {}, 'fleet_report: expected a mapping of host name to gpu_health result, got a list'),
    (('gpu01',), {}, 'fleet_report: expected a mapping of host name to gpu_health result, got a string'),
    (({'gpu01': 'ok'},), {}, 'fleet_report: the result of gpu01 is not a gpu_health result'),
    (({}, 'gpu01'), {}, 'fleet_report: the unreachable hosts must be a list of {host, error} (or a mapping of host to error), got a string'),
    (({}, [['gpu01']]), {}, 'fleet_report: each unreachable host must be'),
    (({},), {'window': ['-1h']}, 'fleet_report: window must be text such as -24h, got a list'),
])
def test_fleet_report_refuses(args, kwargs, message):
    with pytest.raises(AnsibleFilterError) as e:
        FILTERS['fleet_report'](*args, **kwargs)
    assert message in str(e.value)


@pytest.mark.parametrize('name', NAMES[1:])
@pytest.mark.parametrize('value', [None, 'report', ['report'], {'gpu01': {'status': 'ok'}}])
def test_the_renderings_refuse_what_is_not_a_report(name, value):
    with pytest.raises(AnsibleFilterError) as e:
        FILTERS[name](value)
    assert str(e.value).startswith('%s: expected the report that fleet_report returns' % name)


# Issue 29: a wrong type is the filter's own error naming the field (a report), or an unreadable part of one host's
# record (a gpu_health result); never a TypeError.

def test_a_report_of_the_wrong_types_is_the_filters_own_error():
    report = FILTERS['fleet_report'](results(), LOST)
    report['records'][0]['failing'] = 5
    report['counts']['by_model']['NVIDIA H200'] = {'gpus': 'eight'}
    for name in NAMES[1:]:
        with pytest.raises(AnsibleFilterError) as e:
            FILTERS[name](report)
        assert str(e.value) == '%s: the report has records[0].failing = 5: expected a list' % name
    report['records'][0]['failing'] = []
    with pytest.raises(AnsibleFilterError, match=r"by_model\['NVIDIA H200'\].gpus = 'eight': expected a count"):
        FILTERS['fleet_report_summary'](report)


def test_wrong_types_from_a_host_are_reported_not_raised():
    odd = results()['h200-hgx']
    odd['nvidia']['gpus'][2]['name'] = {'model': 'H200'}
    odd['nvidia']['gpus'][2]['pcie_width_current'] = 'x16'
    odd['checks'].append({'check': 'xid', 'gpu': 2, 'status': ['fail']})
    report = FILTERS['fleet_report']({'odd\u202e': odd}, LOST, generated='2025-02-23T17:00:00+00:00')
    gpu2 = [r for r in report['records'] if r['gpu'] == 2][0]
    assert gpu2['host'] == 'odd\\u202e' and gpu2['model'] is None and gpu2['pcie'] == 'Gen5 x? (max Gen5 x16)'
    assert gpu2['failing'] == ['unreadable'] and gpu2['status'] == 'warn'
    assert gpu2['problems'] == ["nvidia.gpus[2].pcie_width_current is 'x16', expected a number: unreadable",
                                'nvidia.gpus[2].name is a mapping, expected text: unreadable']
    wide = [r for r in report['records'] if r['gpu'] is None][0]
    assert (wide['status'], wide['failing']) == ('fail', ['unreadable'])
    assert wide['problems'] == ['checks[%d].status is a list, expected fail/warn/ok: unreadable' % (len(odd['checks']) - 1)]
    for name in NAMES[1:]:
        out = FILTERS[name](report)
        assert '\u202e' not in ('\n'.join(out) if isinstance(out, list) else out)


def test_the_filters_error_messages_are_cleaned():
    with pytest.raises(AnsibleFilterError) as e:
        FILTERS['fleet_report']({'gpu\u202e\x9b01': 'ok'})
    assert str(e.value) == 'fleet_report: the result of gpu\\u202e\\u009b01 is not a gpu_health result: a string'
