# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 31: cuda_compat refuses a driver branch newer than any it knows, in the caller's words, unless told to go on."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.plugins.modules import cuda_compat

ROLE_NAMES = {'driver_branch': 'nvidia_driver_branch', 'kernel_module': 'nvidia_driver_kernel_module',
              'allow_unknown_branch': 'nvidia_driver_allow_unknown_branch'}


def test_an_unknown_newer_branch_fails_naming_the_newest_known_and_the_override(run_module):
    result = run_module(cuda_compat.main, dict(driver_branch='625', architectures=['Hopper'], kernel_module='open',
                                               variables=ROLE_NAMES))
    assert result.failed and result['verdict'] == 'incompatible'
    assert result['msg'] == (
        'Incompatible GPU software selection: nvidia_driver_branch: driver branch 625 is newer than the newest branch '
        'known here (620): which GPUs, kernel module flavours and CUDA versions it supports is not known, so it cannot '
        "be checked (fix: set nvidia_driver_branch to a branch known here (the newest is 620; '580' fits this "
        'selection), or set nvidia_driver_allow_unknown_branch to true to go on with branch 625 unchecked)')


def test_allow_unknown_branch_goes_on_with_a_note(run_module):
    result = run_module(cuda_compat.main, dict(driver_branch='625', architectures=['Hopper'], kernel_module='open',
                                               allow_unknown_branch=True, variables=ROLE_NAMES))
    assert not result.failed and result['compatible'] is True
    assert any('unchecked (allow_unknown_branch)' in n for n in result['notes'])


def test_negative_control_the_newest_known_branch_passes(run_module):
    result = run_module(cuda_compat.main, dict(driver_branch='620', architectures=['Hopper'], kernel_module='open',
                                               variables=ROLE_NAMES))
    assert not result.failed and result['compatible'] is True and result['problems'] == []


def test_620_with_proprietary_modules_fails_naming_the_flavour(run_module):
    result = run_module(cuda_compat.main, dict(driver_branch='620', architectures=['Hopper'],
                                               kernel_module='proprietary', variables=ROLE_NAMES))
    assert result.failed
    assert ('nvidia_driver_kernel_module: driver branch 620 has no proprietary kernel modules' in result['msg'])
    assert "fix: set nvidia_driver_kernel_module to 'open' (Turing or newer GPUs) or nvidia_driver_branch to '615' " \
           "or older" in result['msg']


def test_variables_may_word_the_switch_but_nothing_else_new(run_module):
    result = run_module(cuda_compat.main, dict(driver_branch='580', architectures=['Hopper'],
                                               variables={'allow_unknown_branches': 'x'}))
    assert result.failed
    assert 'allow_unknown_branch' in result['msg'] and "allow_unknown_branches='x'" in result['msg']
