# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.modules import cuda_compat
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import build_sysfs, fixture_path, make_executable


def no_driver(tmp_path):
    return make_executable(tmp_path, 'nvidia-smi', stdout='Failed to initialize NVML: Unknown Error\n', rc=255)


ROLE_NAMES = {'cuda_version': 'cuda_toolkit_version', 'driver_branch': 'nvidia_driver_branch',
              'driver_version': 'nvidia_driver_version', 'kernel_module': 'nvidia_driver_kernel_module'}


def test_preflight_fails_naming_variable_and_fix(tmp_path, run_module):
    """Before any driver: the PCI bus says Hopper, so branch 470 is refused, in the caller's words."""
    sysfs = build_sysfs(tmp_path / 'sys', 'hgx_h200.yml')
    result = run_module(cuda_compat.main, dict(cuda_version='12.4', driver_branch='470', kernel_module='open',
                                               nvidia_smi_path=no_driver(tmp_path), sysfs_root=sysfs,
                                               variables=ROLE_NAMES))
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
    assert [(p['subject'], p['variable']) for p in result['problems']] == [('cuda_version', 'cuda_version')]
    assert result['problems'][0]['fix'] == "set cuda_version to '12.9' or older"


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
        {'pci_device_id': '10de:20f1'}], allow_minor_compat=False, variables=ROLE_NAMES))
    assert result.failed
    assert 'nvidia_driver_version: driver 525.85.12 supports CUDA 12.2 only through minor' in result['msg']
    assert "fix: set nvidia_driver_branch to '580')" in result['msg']


def test_gpus_by_name_and_unknown(run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='11.8', driver_branch='470', kernel_module='proprietary',
                                               gpus=[{'name': 'Tesla K80'}, {'name': 'Matrox G200'}],
                                               allow_unknown_gpus=True))
    assert result['compatible'] is True and result['verdict'] == 'compatible'
    assert any('not checked' in n and 'Matrox G200' in n for n in result['notes'])
    assert result['architectures'] == ['Kepler']
    assert result['unknown_gpus'] == [{'name': 'Matrox G200'}]


def test_torch_pin_that_was_never_published(run_module):
    result = run_module(cuda_compat.main, dict(torch_version='1.13.1+cu118', architectures=['Ampere']))
    assert result.failed
    assert 'torch_version: torch 1.13.1+cu118 was never published' in result['msg']


def test_bad_driver_version(run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='12.2', driver_version='latest', architectures=['Ampere']))
    assert result.failed
    assert 'expected a driver version such as' in result['msg']


def test_check_mode(run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='12.8', driver_branch='570', architectures=['Blackwell'],
                                               kernel_module='open', _ansible_check_mode=True))
    assert result['compatible'] is True and result['mode'] == 'full' and result['changed'] is False


# Issue 17: an unknown GPU makes the answer unknown, never compatible; versions are strict strings.

@pytest.mark.parametrize('gpus', [[{'architecture': 'Rubin'}], [{}], [{'name': 'Tesla K80'}, {'name': 'Matrox G200'}],
                                  [{'pci_device_id': '10de:ffff'}]])
def test_unknown_gpu_fails_by_default(run_module, gpus):
    args = dict(cuda_version='11.8', driver_branch='470', kernel_module='proprietary', gpus=gpus)
    result = run_module(cuda_compat.main, args)
    assert result.failed
    assert result['compatible'] is False and result['verdict'] == 'unknown'
    assert result['msg'].startswith('Unverifiable GPU software selection: gpus: ')
    assert 'could not be identified' in result['msg'] and 'allow_unknown_gpus' in result['msg']
    assert len(result['unknown_gpus']) == 1


def test_unknown_gpu_reported_without_failing(run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='12.4', driver_branch='550', gpus=[{}],
                                               fail_on_incompatible=False))
    assert not result.failed
    assert (result['compatible'], result['verdict']) == (False, 'unknown')
    assert [p['variable'] for p in result['problems']] == ['gpus']


def test_a_real_problem_stays_incompatible_with_unknown_gpus(run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='12.4', driver_branch='470', fail_on_incompatible=False,
                                               gpus=[{'architecture': 'Hopper'}, {'architecture': 'Rubin'}]))
    assert (result['compatible'], result['verdict']) == (False, 'incompatible')
    assert sorted(set(p['variable'] for p in result['problems'])) == ['driver_branch', 'gpus']


@pytest.mark.parametrize('option,value,fragment', [
    ('cuda_version', 12.1, "cuda_version: got the number 12.1, not a string"),
    ('cuda_version', 11.8, "Quote it ('11.8' or '11.80')"),
    ('torch_version', 2.1, 'torch_version: got the number 2.1'),
    ('driver_version', 535.54, 'driver_version: got the number 535.54'),
    ('driver_branch', 535.5, 'driver_branch: got the number 535.5'),
    ('cuda_version', '11.8abc', "expected 'X.Y' or 'X.Y.U'"),
    ('cuda_version', '12.4.0.0.1', "expected 'X.Y' or 'X.Y.U'"),
    ('cuda_version', '12.2.91', '91 is not an update number'),
    ('driver_version', '535.x', "expected a driver version such as '535.104.05'"),
    ('driver_branch', '535.x', "expected a driver branch such as '535'"),
    ('torch_version', '2.4.1abc', "torch version: expected 'X.Y' or 'X.Y.Z'"),
])
def test_versions_are_read_strictly(run_module, option, value, fragment):
    args = dict(cuda_version='12.4', architectures=['Hopper'])
    args[option] = value
    result = run_module(cuda_compat.main, args)
    assert result.failed
    assert fragment in result['msg'], result['msg']


@pytest.mark.parametrize('option,value', [('cuda_version', 13.0), ('driver_branch', 580), ('cuda_version', '12.2.2')])
def test_unambiguous_versions_are_accepted(run_module, option, value):
    args = dict(cuda_version='13.0', driver_branch='580', architectures=['Hopper'])
    args[option] = value
    result = run_module(cuda_compat.main, args)
    assert not result.failed, result['msg']


@pytest.mark.parametrize('names,variable,fix', [
    ({}, 'cuda_version', "set cuda_version to '11.8' or older"),
    ({'cuda_version': 'cuda_toolkit_version'}, 'cuda_toolkit_version', "set cuda_toolkit_version to '11.8' or older"),
    ({'cuda_version': 'nvidia_driver_cuda_version', 'driver_branch': 'x'}, 'nvidia_driver_cuda_version',
     "set nvidia_driver_cuda_version to '11.8' or older"),
])
def test_each_caller_words_the_problems_with_its_own_names(run_module, names, variable, fix):
    result = run_module(cuda_compat.main, dict(cuda_version='12.4', driver_branch='470', architectures=['Kepler'],
                                               variables=names, fail_on_incompatible=False))
    cuda = [p for p in result['problems'] if p['subject'] == 'cuda_version']
    assert [(p['variable'], p['fix']) for p in cuda] == [(variable, fix)]


@pytest.mark.parametrize('names', [{'cuda': 'cuda_toolkit_version'}, {'driver_branch': ''}, {'driver_branch': 5}])
def test_variables_must_map_known_subjects_to_names(run_module, names):
    result = run_module(cuda_compat.main, dict(cuda_version='12.4', architectures=['Hopper'], variables=names))
    assert result.failed
    assert 'variables maps each subject (cuda_version, driver_branch' in result['msg'], result['msg']


# Issue 29: contradictory inputs, versions outside the documented forms and non-ASCII digits fail the task.

def test_driver_version_of_another_branch_fails_naming_both(run_module):
    """Issue 29: driver_branch=470 with driver_version=550.54.15 was judged compatible, the contradiction ignored."""
    result = run_module(cuda_compat.main, dict(cuda_version='12.4', driver_branch='470', driver_version='550.54.15',
                                               architectures=['Hopper']))
    assert result.failed
    assert result['msg'].startswith('cuda_compat: ')
    assert "'550.54.15'" in result['msg'] and "'470'" in result['msg'] and 'contradict' in result['msg']


def test_driver_version_of_the_branch_is_judged(run_module):
    result = run_module(cuda_compat.main, dict(cuda_version='12.4', driver_branch='550-server',
                                               driver_version='550.54.15', architectures=['Hopper']))
    assert not result.failed, result['msg']
    assert result['mode'] == 'full' and result['driver_version'] == '550.54.15'


@pytest.mark.parametrize('value', ['550', 550, '550.54.15.1', '550.1234'])
def test_driver_version_outside_its_documented_form_fails(run_module, value):
    """Issue 29: driver_version=550 (documented: NNN.NN or NNN.NN.NN) was accepted and read as 550.0.0."""
    result = run_module(cuda_compat.main, dict(cuda_version='12.4', driver_version=value, architectures=['Hopper']))
    assert result.failed
    assert "expected a driver version such as '535.104.05'" in result['msg'], result['msg']


@pytest.mark.parametrize('option,value', [
    ('driver_branch', '\u0665\u0665\u0660'), ('driver_branch', '\uff15\uff15\uff10'),
    ('driver_version', '\u0665\u0665\u0660.54.15'), ('cuda_version', '\u0661\u0662.\u0664'),
    ('cuda_version', '\uff11\uff12.4'), ('torch_version', '\u0662.4.1'),
])
def test_non_ascii_digits_fail(run_module, option, value):
    """Issue 29: Arabic-Indic and fullwidth digits were read as numbers (int() and str.isdigit() take them)."""
    args = dict(cuda_version='12.4', architectures=['Hopper'])
    args[option] = value
    result = run_module(cuda_compat.main, args)
    assert result.failed
    assert result['msg'].startswith('cuda_compat: ') and 'expected' in result['msg'], result['msg']


@pytest.mark.parametrize('option,value', [('cuda_version', '1' * 5000), ('driver_branch', '5' * 5000),
                                          ('driver_version', float('inf')), ('torch_version', '2.' + '4' * 5000)],
                         ids=['cuda_version', 'driver_branch', 'driver_version', 'torch_version'])
def test_huge_versions_fail_with_a_short_message(run_module, option, value):
    args = dict(cuda_version='12.4', architectures=['Hopper'])
    args[option] = value
    result = run_module(cuda_compat.main, args)
    assert result.failed
    assert result['msg'].startswith('cuda_compat: ') and len(result['msg']) < 600, result['msg'][:200]
