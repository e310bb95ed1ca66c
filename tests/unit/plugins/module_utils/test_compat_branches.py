# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 31: the driver branches NVIDIA publishes up to 620, the end of the proprietary kernel modules (620), the
CUDA 13.3 rows, and the refusal of a branch newer than any the tables know, with its override."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_versions
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_cuda

ROLE = {'driver_branch': 'nvidia_driver_branch', 'driver_version': 'nvidia_driver_version',
        'kernel_module': 'nvidia_driver_kernel_module', 'allow_unknown_branch': 'nvidia_driver_allow_unknown_branch'}


def subjects(result):
    return [p['subject'] for p in result['problems']]


# Published branches ---------------------------------------------------------------------------------------------

def test_615_and_620_are_known_and_620_is_the_newest():
    assert {615, 620} <= set(_data_cuda.KNOWN_BRANCHES)
    assert _compat_gpu.NEWEST_KNOWN_BRANCH == 620 == max(_data_cuda.KNOWN_BRANCHES)
    assert list(_data_cuda.KNOWN_BRANCHES) == sorted(set(_data_cuda.KNOWN_BRANCHES))


@pytest.mark.parametrize('branch', ['615', '615-server-open', 'nvidia-driver-615-open', '620', '620-open'])
def test_the_new_branches_drive_turing_to_blackwell_with_open_modules(branch):
    assert _compat_gpu.architectures_for_branch(branch) == ['Turing', 'Ampere', 'Ada Lovelace', 'Hopper', 'Blackwell']
    result = _compat.check(cuda='13.3', branch=branch, architectures=['Hopper', 'Blackwell'], kernel_module='open',
                           allow_minor=False)
    assert result['ok'] and result['mode'] == 'full', result


@pytest.mark.parametrize('branch', ['615', '620'])
def test_the_new_branches_drop_maxwell_pascal_volta_as_580_did(branch):
    result = _compat.check(branch=branch, architectures=['Volta'])
    assert not result['ok']
    assert 'the last branch that does is 580' in result['problems'][0]['message']
    assert result['suggested_driver_branch'] == '580'


# Proprietary kernel modules end with 620 ------------------------------------------------------------------------

def test_620_has_no_proprietary_kernel_modules():
    result = _compat.check(branch='620', architectures=['Hopper'], kernel_module='proprietary')
    assert subjects(result) == ['kernel_module']
    problem = result['problems'][0]
    assert problem['message'] == ('driver branch 620 has no proprietary kernel modules (NVIDIA removed them with branch '
                                  '620; the last branch known here that has them is 615)')
    assert _compat.word(problem['fix'], ROLE) == ("set nvidia_driver_kernel_module to 'open' (Turing or newer GPUs) or "
                                                  "nvidia_driver_branch to '615' or older")
    # The branch that fits the proprietary flavour is below 620.
    assert result['suggested_driver_branch'] == '580'


@pytest.mark.parametrize('branch', ['615', '580', '535'])
def test_negative_control_the_branches_before_620_keep_their_proprietary_modules(branch):
    assert _compat.check(branch=branch, architectures=['Hopper'], kernel_module='proprietary')['ok']
    assert _compat_gpu.branch_kernel_module_problem(branch, 'proprietary') is None


def test_the_open_flavour_still_starts_with_515():
    assert 'start with branch 515' in _compat_gpu.branch_kernel_module_problem('510', 'open')
    assert _compat_gpu.branch_kernel_module_problem('515', 'open') is None
    assert _compat_gpu.branch_kernel_module_problem('620', 'open') is None
    assert _compat_gpu.branch_kernel_module_problem('620', None) is None


def test_suggestions_respect_the_flavour():
    # CUDA 13.3 in full needs 610 or newer: the newest known branch, unless the proprietary flavour caps it at 615.
    assert _compat.suggest_branch('13.3', ['Hopper'], 'open', allow_minor=False) == '620'
    assert _compat.suggest_branch('13.3', ['Hopper'], 'proprietary', allow_minor=False) == '615'
    assert _compat.suggest_branch('13.3', ['Hopper'], None, allow_minor=False) == '620'
    # Full support first: even with minor version compatibility allowed, a branch that runs 13.3 fully is suggested.
    assert _compat.suggest_branch('13.3', ['Hopper'], 'proprietary') == '615'
    # Long-term support first where it fits.
    assert _compat.suggest_branch('13.0', ['Hopper'], 'proprietary') == '580'


# CUDA 13.3 ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('cuda', ['13.3', '13.3.0', '13.3.1'])
def test_cuda_13_3_ga_and_update_1_need_610_43_02(cuda):
    """NVIDIA's table lists 610.43.02 for both; the 13.3.1 installer bundles that driver (cuda_13.3.1_610.43.02)."""
    assert _compat_cuda.cuda_min_driver(cuda) == '610.43.02'
    assert _compat.check(cuda=cuda, driver='610.43.02')['mode'] == 'full'
    older = _compat.check(cuda=cuda, driver='610.43.01', allow_minor=False)
    assert older['mode'] == 'minor' and subjects(older) == ['driver_version']
    assert _compat.check(cuda=cuda, driver='615.71.09')['mode'] == 'full'


def test_cuda_13_4_is_still_unknown_to_the_table():
    """Negative control: 13.4's Linux driver row could not be read from NVIDIA's table, so it is not guessed."""
    with pytest.raises(_compat_versions.CompatError, match='CUDA 13.4 is not in the table'):
        _compat_cuda.cuda_min_driver('13.4')
    assert _compat_cuda.driver_cuda_version('620.70.06') == '13.3'


# A branch newer than any known ----------------------------------------------------------------------------------

@pytest.mark.parametrize('branch', ['625', '621', 'nvidia-driver-625-server-open', 999])
def test_a_branch_newer_than_620_is_refused_naming_the_newest_and_the_override(branch):
    result = _compat.check(branch=branch, architectures=['Hopper'], kernel_module='open')
    number = _compat_versions.driver_branch(branch)
    assert not result['ok'] and subjects(result) == ['driver_branch']
    problem = result['problems'][0]
    assert problem['message'] == ('driver branch %d is newer than the newest branch known here (620): which GPUs, kernel '
                                  'module flavours and CUDA versions it supports is not known, so it cannot be checked'
                                  % number)
    assert _compat.word(problem['fix'], ROLE) == (
        "set nvidia_driver_branch to a branch known here (the newest is 620; '580' fits this selection), or set "
        "nvidia_driver_allow_unknown_branch to true to go on with branch %d unchecked" % number)


def test_the_override_turns_the_refusal_into_a_note():
    result = _compat.check(cuda='13.3', branch='625', architectures=['Hopper'], kernel_module='open', allow_minor=False,
                           allow_unknown_branch=True)
    assert result['ok'] and result['mode'] == 'full', result
    assert any('driver branch 625 is newer than the newest branch known here (620)' in n
               and 'unchecked (allow_unknown_branch)' in n for n in result['notes'])


def test_the_override_does_not_silence_the_other_checks():
    result = _compat.check(branch='625', architectures=['Pascal'], kernel_module='proprietary', allow_unknown_branch=True)
    assert subjects(result) == ['driver_branch', 'kernel_module']
    assert 'the last branch that does is 580' in result['problems'][0]['message']
    assert 'no proprietary kernel modules' in result['problems'][1]['message']


def test_an_installed_driver_of_an_unknown_branch_is_named_as_the_driver_version():
    result = _compat.check(cuda='13.0', driver='625.10.01', architectures=['Hopper'])
    assert subjects(result) == ['driver_version']
    assert 'driver branch 625 is newer' in result['problems'][0]['message']
    assert _compat.check(cuda='13.0', driver='625.10.01', architectures=['Hopper'], allow_unknown_branch=True)['ok']


@pytest.mark.parametrize('branch', ['620', '615', '580', '450', '418', '300'])
def test_negative_control_known_or_older_branches_are_not_refused_as_unknown(branch):
    assert _compat_gpu.unknown_branch_problem(branch) is None
    assert not any('newer than the newest branch' in p['message'] for p in _compat.check(branch=branch)['problems'])


def test_without_a_fitting_branch_the_fix_still_names_the_newest_and_the_override():
    # Kepler (last branch 470) and CUDA 13.0 (first 580): no branch fits, so no suggestion.
    result = _compat.check(cuda='13.0', branch='625', architectures=['Kepler'])
    assert result['suggested_driver_branch'] is None
    [unknown] = [p for p in result['problems'] if 'newer than the newest branch' in p['message']]
    fix = _compat.word(unknown['fix'], ROLE)
    assert fix == ('set nvidia_driver_branch to a branch known here (the newest is 620), or set '
                   'nvidia_driver_allow_unknown_branch to true to go on with branch 625 unchecked')


def test_a_switch_not_worded_by_the_caller_keeps_its_own_name():
    assert _compat.word('set {allow_unknown_branch} to true', {}) == 'set allow_unknown_branch to true'
    assert _compat.word('set {allow_unknown_branch} to true', {'allow_unknown_branch': 'x_allow'}) == 'set x_allow to true'


@pytest.mark.parametrize('bad', ['62', '6255', 'latest', None, 12.5, '625.x'])
def test_unknown_branch_problem_reads_only_branches(bad):
    with pytest.raises(_compat_versions.CompatError):
        _compat_gpu.unknown_branch_problem(bad)
