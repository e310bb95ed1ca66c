# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.plugins.modules import gpu_health
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import (
    build_sysfs, fixture_path, load_yaml, make_executable)

with open(os.path.join(os.path.dirname(__file__), 'test_gpu_health.yml')) as _f:
    CASES = yaml.safe_load(_f)
NO_DRIVER = load_yaml('nvidia_smi', 'no_driver.yml')


def fake_nvidia_smi(tmp_path, spec):
    if 'fixture' in spec:
        return make_executable(tmp_path, 'nvidia-smi', stdout_file=fixture_path('nvidia_smi', spec['fixture']))
    out = NO_DRIVER[spec['no_driver']]
    return make_executable(tmp_path, 'nvidia-smi', stdout=out['stdout'], stderr=out['stderr'], rc=out['rc'])


@pytest.mark.parametrize('case', CASES, ids=[case['name'] for case in CASES])
def test_health_case(case, tmp_path, run_module):
    sysfs = build_sysfs(tmp_path / 'sys', case['sysfs']) if case['sysfs'] else str(tmp_path / 'no-sysfs')
    args = dict(case['args'])
    args.update(nvidia_smi_path=fake_nvidia_smi(tmp_path, case['nvidia_smi']), sysfs_root=sysfs,
                kernel_log_path=fixture_path('kernel_log', case['kernel_log']))
    result = run_module(gpu_health.main, args)
    assert result['status'] == case['status'], result['checks']
    assert result.failed is case['failed'], result.get('msg')
    assert result['changed'] is False
    not_ok = sorted([c['check'], c['gpu'] if c['gpu'] is not None else -1, c['status']]
                    for c in result['checks'] if c['status'] != 'ok')
    want = sorted([c, g if g is not None else -1, s] for c, g, s in case['not_ok'])
    assert not_ok == want
    for fragment in case.get('msg_contains', []):
        assert fragment in result['msg']
    assert result['kernel_log_source'] == 'file'


def test_ok_checks_are_reported_too(tmp_path, run_module):
    args = dict(nvidia_smi_path=fake_nvidia_smi(tmp_path, {'fixture': 'a100_mig_r535.xml'}),
                sysfs_root=str(tmp_path), kernel_log_path=fixture_path('kernel_log', 'no_xid.txt'))
    result = run_module(gpu_health.main, args)
    assert result['status'] == 'ok'
    checks = set(c['check'] for c in result['checks'])
    assert {'driver_loaded', 'gpu_count', 'ecc_uncorrectable', 'ecc_correctable', 'row_remapping', 'pcie_link_width',
            'temperature', 'persistence_mode', 'clock_slowdown'} <= checks
    assert 'retired_pages' not in checks      # A100 reports N/A: it uses row remapping instead


def test_check_mode_reads_the_same(tmp_path, run_module):
    args = dict(nvidia_smi_path=fake_nvidia_smi(tmp_path, {'fixture': 'a100_ecc_remap_r525.xml'}),
                sysfs_root=str(tmp_path), kernel_log_path=fixture_path('kernel_log', 'dmesg_ctime.txt'), fail_on='never')
    normal = run_module(gpu_health.main, args)
    args['_ansible_check_mode'] = True
    checked = run_module(gpu_health.main, args)
    assert checked['checks'] == normal['checks']
    assert checked['changed'] is False


def test_hung_nvidia_smi_fails(tmp_path, run_module):
    args = dict(nvidia_smi_path=make_executable(tmp_path, 'nvidia-smi', sleep=30), timeout=1,
                sysfs_root=str(tmp_path), kernel_log_path=fixture_path('kernel_log', 'no_xid.txt'))
    result = run_module(gpu_health.main, args)
    assert result.failed
    assert 'did not finish within 1 seconds' in result['msg']


def test_unreadable_kernel_log_path_fails(tmp_path, run_module):
    args = dict(nvidia_smi_path=fake_nvidia_smi(tmp_path, {'fixture': 'a100_mig_r535.xml'}),
                sysfs_root=str(tmp_path), kernel_log_path=str(tmp_path / 'missing.log'))
    result = run_module(gpu_health.main, args)
    assert result.failed
    assert 'missing.log could not be read' in result['msg']
