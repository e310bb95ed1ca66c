# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""amd_gpu_health: each check on built facts (_amd_health.evaluate) and the module end to end on built sysfs trees and
the recorded amd-smi capture."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_smi
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.modules import amd_gpu_health
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import read_fixture
from ansible_collections.gpuops.gpu_server.tests.unit.plugins.modules.test_amd_gpu_facts import card, fake_amd_smi


@pytest.fixture
def sysfs(tmp_path):
    root = tmp_path / 'sys'
    (root / 'class' / 'drm').mkdir(parents=True)
    return root


def healthy(index=0, model='MI300X', bus='0000:0c:00.0'):
    gpu = _amd_smi.empty_gpu(index)
    gpu.update(model=model, pci_bus_id=bus, name='AMD Instinct %s' % model, temperature_c=50.0,
               temperatures_c={'edge': None, 'junction': 50.0, 'mem': 45.0},
               temperature_limits_c={'edge': {'critical': None, 'emergency': None},
                                     'junction': {'critical': 100.0, 'emergency': 105.0},
                                     'mem': {'critical': 95.0, 'emergency': 105.0}},
               ecc_errors={'volatile': {'corrected': 0, 'uncorrected': 0},
                           'aggregate': {'corrected': None, 'uncorrected': None}},
               bad_pages={'retired': 0, 'pending': 0, 'unreservable': 0}, bad_page_threshold=None,
               throttled=False, throttle_reasons=[], xgmi_links=None, xgmi_error=None)
    return gpu


def host(gpus):
    return {'driver_loaded': True, 'reason': None, 'source': 'amd-smi', 'gpu_count': len(gpus), 'gpus': gpus,
            'pci_devices': [{'pci_bus_id': g['pci_bus_id']} for g in gpus], 'notes': []}


def mesh(n=8, model='MI300X', down=()):
    """n GPUs each joined by XGMI to every other, the pairs in ``down`` disabled."""
    gpus = [healthy(i, model, '0000:%02x:00.0' % (0x10 + i)) for i in range(n)]
    for g in gpus:
        g['xgmi_links'] = [{'peer': p['index'], 'peer_bus_id': p['pci_bus_id'],
                            'status': 'DISABLED' if (g['index'], p['index']) in down or (p['index'], g['index']) in down
                            else 'ENABLED'} for p in gpus if p is not g]
    return gpus


def checks_of(result, name):
    return [(c['gpu'], c['status']) for c in result['checks'] if c['check'] == name]


def test_a_healthy_host_is_ok():
    result = _amd_health.evaluate(host(mesh()))
    assert result['status'] == 'ok' and result['failing'] == []
    assert set(c['check'] for c in result['checks']) >= {'driver_loaded', 'gpu_count', 'ecc_uncorrectable',
                                                         'ecc_correctable', 'bad_pages', 'temperature', 'throttling',
                                                         'xgmi_links'}


@pytest.mark.parametrize('change,check,status', [
    ({'ecc_errors': {'volatile': {'corrected': 0, 'uncorrected': 1}}}, 'ecc_uncorrectable', 'fail'),
    ({'ecc_errors': {'volatile': {'corrected': 1001, 'uncorrected': 0}}}, 'ecc_correctable', 'warn'),
    ({'bad_pages': {'retired': 0, 'pending': 0, 'unreservable': 1}}, 'bad_pages', 'fail'),
    ({'bad_pages': {'retired': 0, 'pending': 2, 'unreservable': 0}}, 'bad_pages', 'warn'),
    ({'bad_pages': {'retired': 3, 'pending': 0, 'unreservable': 0}}, 'bad_pages', 'warn'),
    ({'bad_pages': {'retired': 655, 'pending': 0, 'unreservable': 0}, 'bad_page_threshold': 655}, 'bad_pages', 'fail'),
    ({'bad_pages': {'retired': 654, 'pending': 0, 'unreservable': 0}, 'bad_page_threshold': 655}, 'bad_pages', 'warn'),
    ({'temperatures_c': {'edge': None, 'junction': 100.0, 'mem': 45.0}}, 'temperature', 'fail'),
    ({'temperatures_c': {'edge': None, 'junction': 96.0, 'mem': 45.0}}, 'temperature', 'warn'),
    ({'temperatures_c': {'edge': None, 'junction': 94.0, 'mem': 45.0}}, 'temperature', 'ok'),
    ({'temperatures_c': {'edge': None, 'junction': 50.0, 'mem': 105.0}}, 'temperature', 'fail'),
    ({'throttled': True, 'throttle_reasons': ['ppt']}, 'throttling', 'warn'),
    ({'xgmi_error': 'AMDSMI_XGMI_STATUS_MULTIPLE_ERRORS'}, 'xgmi_error', 'warn'),
    ({'xgmi_error': 'AMDSMI_XGMI_STATUS_NO_ERRORS'}, 'xgmi_error', 'ok'),
])
def test_each_check_flags_its_fault(change, check, status):
    gpu = healthy()
    for key, value in change.items():
        if key == 'ecc_errors':
            gpu['ecc_errors']['volatile'] = value['volatile']
        else:
            gpu[key] = value
    result = _amd_health.evaluate(host([gpu]))
    assert _health.worst(s for _g, s in checks_of(result, check)) == status, result['checks']
    assert result['status'] == _health.worst([status, 'ok'])


def test_a_link_down_fails_both_ends():
    result = _amd_health.evaluate(host(mesh(down=[(2, 5)])))
    assert sorted(g for g, s in checks_of(result, 'xgmi_links') if s == 'fail') == [2, 5]
    assert 'XGMI link to GPU 5 (0000:15:00.0) not enabled (DISABLED)' in result['failing'][0]['message']


def test_a_fully_connected_model_missing_peers_fails():
    gpus = mesh()
    gpus[3]['xgmi_links'] = gpus[3]['xgmi_links'][:4]            # joined to 4 of its 7 peers
    result = _amd_health.evaluate(host(gpus))
    assert [(g, s) for g, s in checks_of(result, 'xgmi_links') if s != 'ok'] == [(3, 'fail')]


def test_bridged_cards_are_not_expected_to_be_joined():
    gpus = mesh(4, model='MI210')
    for g in gpus:
        g['xgmi_links'] = []
    assert _amd_health.evaluate(host(gpus))['status'] == 'ok'


def test_unknown_figures_are_not_judged():
    gpu = _amd_smi.empty_gpu(0)
    gpu['temperature_c'] = 70.0
    result = _amd_health.evaluate(host([gpu]))
    assert result['status'] == 'ok'
    assert [c['message'] for c in result['checks'] if c['check'] == 'temperature'] == \
        ['GPU 0 (unknown bus id): 70.0 C; the GPU reports no temperature limit, not judged']


def test_no_driver_and_counts():
    facts = {'driver_loaded': False, 'reason': 'no AMD GPU bound', 'gpus': [], 'pci_devices': [{}, {}]}
    result = _amd_health.evaluate(facts)
    assert checks_of(result, 'driver_loaded') == [(None, 'fail')]
    result = _amd_health.evaluate(host(mesh(2)), expected_gpu_count=8)
    assert checks_of(result, 'gpu_count') == [(None, 'fail')]
    lost = host(mesh(2))
    lost['pci_devices'].append({'pci_bus_id': '0000:99:00.0'})
    assert checks_of(_amd_health.evaluate(lost), 'gpu_count') == [(None, 'fail')]


def test_bad_pages_max_below_the_device_threshold():
    gpu = healthy()
    gpu.update(bad_pages={'retired': 10, 'pending': 0, 'unreservable': 0}, bad_page_threshold=655)
    assert checks_of(_amd_health.evaluate(host([gpu]), thresholds={'bad_pages_max': 10}), 'bad_pages') == \
        [(0, 'fail')]
    assert checks_of(_amd_health.evaluate(host([copy.deepcopy(gpu)])), 'bad_pages') == [(0, 'warn')]


# The module end to end --------------------------------------------------------------------------------------------

def test_module_on_a_sysfs_host_with_an_uncorrectable_error(sysfs, run_module):
    card(sysfs, 0, '0000:0c:00.0', device='0x74a1', pci_class='0x120000', ras={'umc': (1, 0)}, bad_pages='')
    result = run_module(amd_gpu_health.main, dict(sysfs_root=str(sysfs), amd_smi_path='/nonexistent',
                                                  rocm_smi_path='/nonexistent'))
    assert result.failed and result['status'] == 'fail'
    assert result['msg'] == 'AMD GPU health is fail: GPU 0 (0000:0c:00.0): 1 uncorrectable ECC errors since the ' \
                            'driver loaded'
    assert result['reaches'] == {'warn': True, 'fail': True, 'never': False}
    assert result['amd']['source'] == 'sysfs'


def test_module_on_the_recorded_capture(tmp_path, sysfs, run_module):
    exe = fake_amd_smi(tmp_path, read_fixture('amd_smi', 'static_mi210_gpu_data.json'),
                       read_fixture('amd_smi', 'metric_power_flat.json'), read_fixture('amd_smi', 'topology_flat.json'))
    result = run_module(amd_gpu_health.main, dict(sysfs_root=str(sysfs), amd_smi_path=exe, expected_gpu_count=1,
                                                  fail_on='warn'))
    assert not result.failed and result['status'] == 'ok', result['checks']
    assert result['amd']['gpus'][0]['bad_page_threshold'] == 655


def test_module_reports_without_failing(sysfs, run_module):
    card(sysfs, 0, '0000:0c:00.0', driver=None)
    result = run_module(amd_gpu_health.main, dict(sysfs_root=str(sysfs), amd_smi_path='/nonexistent',
                                                  rocm_smi_path='/nonexistent', fail_on='never'))
    assert not result.failed and result['status'] == 'fail' and result['changed'] is False


@pytest.mark.parametrize('option,value', [('expected_gpu_count', -1), ('ecc_correctable_max', -1),
                                          ('temperature_margin_c', -2), ('bad_pages_max', 0), ('timeout', 0)])
def test_out_of_range_options_are_refused_before_reading(sysfs, run_module, option, value):
    result = run_module(amd_gpu_health.main, {'sysfs_root': str(sysfs), option: value})
    assert result.failed and result['msg'].startswith('%s must be' % option) and 'amd' not in result


def test_results_are_json(sysfs, run_module):
    card(sysfs, 0, '0000:0c:00.0')
    result = run_module(amd_gpu_health.main, dict(sysfs_root=str(sysfs), amd_smi_path='/nonexistent',
                                                  rocm_smi_path='/nonexistent', fail_on='never'))
    json.dumps(result)
