# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.modules import rocm_compat
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import build_sysfs

DEBIAN13 = dict(source='distribution', distribution='Debian', distribution_release='13')


def test_mi300x_on_debian13_refused_from_the_pci_bus(tmp_path, run_module):
    """Before any driver or ROCm: the PCI bus says 8 x MI300X; Debian 13's ROCm has no gfx942, so the task fails,
    naming the caller's variable and what works."""
    sysfs = build_sysfs(tmp_path / 'sys', 'amd_mi300x_node.yml')
    result = run_module(rocm_compat.main, dict(DEBIAN13, sysfs_root=sysfs, variables={'source': 'rocm_source'}))
    assert result.failed
    assert result['verdict'] == 'incompatible'
    assert result['gpu_count'] == 8
    assert result['gfx_targets'] == ['gfx942']
    assert result['msg'].startswith("Incompatible ROCm source: rocm_source: Debian 13's distribution ROCm "
                                    "(librocblas0 5.5.1) carries no code object for gfx942")
    assert "Ubuntu 26.04's distribution ROCm; AMD's ROCm 7 repository (set rocm_source to amd" in result['msg']


@pytest.mark.parametrize('args', [
    dict(source='distribution', distribution='Ubuntu', distribution_release='26.04'),
    dict(source='amd'),
])
def test_mi300x_runs_on_what_the_refusal_names(tmp_path, run_module, args):
    sysfs = build_sysfs(tmp_path / 'sys', 'amd_mi300x_node.yml')
    result = run_module(rocm_compat.main, dict(args, sysfs_root=sysfs))
    assert not result.failed, result['msg']
    assert result['compatible'] is True and result['gfx_targets'] == ['gfx942']


def test_mi250_on_debian13_compatible(tmp_path, run_module):
    sysfs = build_sysfs(tmp_path / 'sys', 'amd_mi250_node.yml')
    result = run_module(rocm_compat.main, dict(DEBIAN13, sysfs_root=sysfs))
    assert not result.failed
    assert result['gfx_targets'] == ['gfx90a'] and result['gpu_count'] == 8
    assert 'gfx90a' in result['source_gfx_targets']


def test_no_amd_gpu_is_compatible_and_says_so(tmp_path, run_module):
    sysfs = build_sysfs(tmp_path / 'sys', 'hgx_h200.yml')
    result = run_module(rocm_compat.main, dict(DEBIAN13, sysfs_root=sysfs))
    assert not result.failed
    assert result['gpu_count'] == 0
    assert 'no AMD GPU on the PCI bus' in result['notes'][0]


def test_debian12_refused_for_any_gpu(run_module):
    result = run_module(rocm_compat.main, dict(source='distribution', distribution='Debian', distribution_release='12',
                                               gfx_targets=['gfx90a']))
    assert result.failed
    assert "Debian 12's distribution ROCm carries no ROCm library" in result['msg']
    assert "set source to amd" in result['msg']


def test_unknown_gpu_unverifiable_unless_allowed(run_module):
    gpus = [{'pci_device_id': '1002:74a1'}, {'pci_device_id': '1002:7550', 'pci_bus_id': '0000:03:00.0'}]
    result = run_module(rocm_compat.main, dict(source='amd', gpus=gpus))
    assert result.failed and result['verdict'] == 'unknown'
    assert 'pci_device_id=1002:7550' in result['msg']
    allowed = run_module(rocm_compat.main, dict(source='amd', gpus=gpus, allow_unknown_gpus=True))
    assert not allowed.failed and allowed['verdict'] == 'compatible'
    assert 'could not be identified' in allowed['notes'][0]


def test_report_without_failing(run_module):
    result = run_module(rocm_compat.main, dict(DEBIAN13, gfx_targets=['gfx942', 'gfx942:sramecc+:xnack-'],
                                               fail_on_incompatible=False))
    assert not result.failed
    assert result['compatible'] is False and result['gpu_count'] == 2 and result['gfx_targets'] == ['gfx942']


@pytest.mark.parametrize('args, words', [
    (dict(DEBIAN13, gfx_targets=['gfx942\n']), 'gfx_targets[0]'),
    (dict(DEBIAN13, gfx_targets=['gfx90a', 942]), 'gfx_targets[1]'),
    (dict(DEBIAN13, gfx_targets=[None]), 'gfx_targets[0]'),
    (dict(DEBIAN13, gpus=['gfx942']), 'gpus[0]'),
    (dict(DEBIAN13, gpus=[{'pci_device_id': '1002:74a1 '}]), 'gpus[0].pci_device_id'),
    (dict(source='distribution', distribution='Debian', distribution_release='11', gfx_targets=['gfx90a']),
     'Debian 11 is not known'),
    (dict(DEBIAN13, gfx_targets=['gfx90a'], variables={'driver': 'x'}), 'variables maps each subject'),
    (dict(DEBIAN13, gfx_targets=['gfx90a'], variables={'source': ' '}), 'variables maps each subject'),
    (dict(source='distribution', gfx_targets=['gfx90a']), 'missing'),
    (dict(source='rocm', gfx_targets=['gfx90a']), 'value of source must be one of'),
    (dict(DEBIAN13, gfx_targets=['gfx90a'], gpus=[{'gfx_target': 'gfx90a'}]), 'mutually exclusive'),
])
def test_bad_input_fails_naming_the_entry(run_module, args, words):
    result = run_module(rocm_compat.main, args)
    assert result.failed
    assert words in result['msg']
    assert 'Traceback' not in result['msg']


def test_unreadable_bus_fails_clearly(tmp_path, run_module):
    result = run_module(rocm_compat.main, dict(DEBIAN13, sysfs_root=str(tmp_path / 'nothing')))
    assert result.failed and 'give gfx_targets or gpus' in result['msg']


def test_packages_follow_the_source(run_module):
    result = run_module(rocm_compat.main, dict(DEBIAN13, gfx_targets=['gfx90a']))
    assert 'librocblas0' in result['packages'] and 'amd-smi' in result['packages']
    ubuntu = run_module(rocm_compat.main, dict(source='distribution', distribution='Ubuntu',
                                               distribution_release='26.04', gfx_targets=['gfx942']))
    assert 'librocblas5' in ubuntu['packages'] and 'libamdhip64-7' in ubuntu['packages']
    assert run_module(rocm_compat.main, dict(source='amd', gfx_targets=['gfx942']))['packages'] == []
