# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.plugins.modules import cuda_compat
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import build_sysfs, fixture_path, make_executable


def no_driver(tmp_path):
    return make_executable(tmp_path, 'nvidia-smi', stdout='Failed to initialize NVML: Unknown Error\n', rc=255)


def test_preflight_fails_naming_variable_and_fix(tmp_path, run_module):
    """Before any driver: the PCI bus says Hopper, so branch 470 is refused."""
    sysfs = build_sysfs(tmp_path / 'sys', 'hgx_h200.yml')
    result = run_module(cuda_compat.main, dict(cuda_version='12.4', driver_branch='470', kernel_module='open',
                                               nvidia_smi_path=no_driver(tmp_path), sysfs_root=sysfs))
    assert result.failed
    assert result['compatible'] is False
    assert result['architectures'] == ['Hopper']
    assert result['suggested_driver_branch'] == '580'
    assert 'nvidia_driver_branch: driver branch 470 predates Hopper GPUs' in result['msg']
    assert "fix: set nvidia_driver_branch to '580'" in result['msg']
    assert result['cuda_min_driver'] == {'toolkit': '550.54.14', 'minor': '525.60.13'}


def test_report_without_failing(tmp_path, run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='13.0', driver_branch='580', architectures=['Volta'],
                                               fail_on_incompatible=False))
    assert not result.failed
    assert result['compatible'] is False
    assert [p['variable'] for p in result['problems']] == ['cuda_toolkit_version']
    assert result['problems'][0]['fix'] == "set cuda_toolkit_version to '12.9' or older"


def test_uses_the_loaded_driver(tmp_path, run_module):
    exe = make_executable(tmp_path, 'nvidia-smi', stdout_file=fixture_path('nvidia_smi', 'a100_ecc_remap_r525.xml'))
    result = run_module(cuda_compat.main, dict(cuda_version='12.2', nvidia_smi_path=exe, sysfs_root=str(tmp_path)))
    assert not result.failed
    assert result['driver_version'] == '525.85.12'
    assert result['mode'] == 'minor'
    assert result['architectures'] == ['Ampere']
    assert any('minor version compatibility' in n for n in result['notes'])


def test_minor_compat_refused(tmp_path, run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='12.2', driver_version='525.85.12', gpus=[
        {'pci_device_id': '10de:20f1'}], allow_minor_compat=False))
    assert result.failed
    assert 'nvidia_driver_version' in result['msg']


def test_gpus_by_name_and_unknown(run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='11.8', driver_branch='470', kernel_module='proprietary',
                                               gpus=[{'name': 'Tesla K80'}, {'name': 'Matrox G200'}]))
    assert result['compatible'] is True
    assert result['architectures'] == ['Kepler']
    assert result['unknown_gpus'] == [{'name': 'Matrox G200'}]


def test_torch_pin_that_was_never_published(run_module):
    result = run_module(cuda_compat.main, dict(torch_version='1.13.1+cu118', architectures=['Ampere']))
    assert result.failed
    assert 'torch_version: torch 1.13.1+cu118 was never published' in result['msg']


def test_bad_driver_version(run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='12.2', driver_version='latest', architectures=['Ampere']))
    assert result.failed
    assert 'expected a driver branch' in result['msg']


def test_check_mode(run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='12.8', driver_branch='570', architectures=['Blackwell'],
                                               kernel_module='open', _ansible_check_mode=True))
    assert result['compatible'] is True and result['mode'] == 'full' and result['changed'] is False
