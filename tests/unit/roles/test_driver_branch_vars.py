# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 31: the driver branches each platform ships, the one nvidia_driver_branch=auto installs there (templated by
Ansible from the roles' vars files), and the preflight's refusals of a branch newer than any known and of a branch
that a platform ships with open kernel modules only."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_cuda
from ansible_collections.gpuops.gpu_server.tests.unit.roles.conftest import PLATFORM_FACTS

VARS = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ {'auto': _nvidia_driver_branch, 'branches': _nvidia_driver_distribution_branches,
                      'open': _nvidia_driver_distribution_open_branches,
                      'open_only': _nvidia_driver_distribution_open_only_branches,
                      'toolkit_branch': _cuda_toolkit_driver_branch,
                      'toolkit_versions': _cuda_toolkit_distribution_versions} | to_json }}"
'''


def render(ansible_play, platform, **extra):
    extra = dict(extra, ansible_facts=dict(PLATFORM_FACTS[platform], architecture='x86_64'))
    proc, got = ansible_play(VARS, extra, role_vars=['nvidia_driver', 'cuda_toolkit'], os_vars=True)
    assert proc.returncode == 0, proc.stdout
    return got


# platform -> (auto, branches, open, open_only, distribution CUDA toolkits)
EXPECTED = {
    'debian12': ('535', ['535', '470'], ['535'], [], ['11.8']),
    'debian13': ('550', ['550', '535'], ['550'], [], ['12.4']),
    'ubuntu2004': ('535', ['450', '470', '535', '550', '565', '570'], ['535', '550', '565', '570'], [], []),
    'ubuntu2204': ('580', ['470', '535', '550', '565', '570', '575', '580', '590', '595', '615'],
                   ['535', '550', '565', '570', '575', '580', '590', '595', '615'], ['615'], ['11.5']),
    'ubuntu2404': ('580', ['470', '535', '550', '565', '570', '575', '580', '590', '595', '615'],
                   ['535', '550', '565', '570', '575', '580', '590', '595', '615'], ['615'], ['12.0']),
    'ubuntu2604': ('580', ['535', '550', '570', '580', '590', '595', '615'],
                   ['535', '550', '570', '580', '590', '595', '615'], ['615'], ['12.4']),
}


@pytest.mark.parametrize('platform', sorted(EXPECTED))
def test_each_platform_ships_its_branches_and_auto_picks_the_maintained_one(ansible_play, platform):
    auto, branches, open_, open_only, toolkits = EXPECTED[platform]
    got = render(ansible_play, platform)
    assert got['auto'] == auto
    assert got['branches'] == branches and got['open'] == open_ and got['open_only'] == open_only
    assert got['toolkit_versions'] == toolkits
    # cuda_toolkit judges, before any driver is there, the branch that nvidia_driver's auto installs.
    assert got['toolkit_branch'] == auto
    # Every branch a platform ships is one the knowledge tables know, so the preflight can judge it.
    assert all(int(b) in _data_cuda.KNOWN_BRANCHES for b in branches)
    assert set(open_) <= set(branches) and set(open_only) <= set(open_)
    assert auto in branches and auto not in open_only


def test_an_explicit_branch_wins_over_auto(ansible_play):
    got = render(ansible_play, 'ubuntu2604', nvidia_driver_branch='595', cuda_toolkit_driver_branch='595')
    assert got['auto'] == '595' and got['toolkit_branch'] == '595'


def test_negative_control_an_ubuntu_release_without_a_table_names_no_branch(ansible_play):
    got = render(ansible_play, 'ubuntu2804')
    assert got['auto'] == '' and got['branches'] == [] and got['open_only'] == []


PREFLIGHT = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Run the preflight
      block:
        - ansible.builtin.include_role:
            name: gpuops.gpu_server.nvidia_driver
            tasks_from: preflight
      rescue:
        - ansible.builtin.copy:
            dest: "%(out)s"
            content: "{{ {'task': ansible_failed_task.name, 'msg': ansible_failed_result.msg} | to_json }}"
'''


def preflight(ansible_play, platform, **extra):
    extra = dict(extra, ansible_facts=dict(PLATFORM_FACTS[platform], architecture='x86_64'),
                 nvidia_driver_sysfs_root=str(ansible_play.dir))
    proc, got = ansible_play(PREFLIGHT, extra)
    assert proc.returncode == 0 and got is not None, proc.stdout
    return got


def test_preflight_refuses_a_branch_newer_than_any_known_naming_the_newest_and_the_override(ansible_play):
    got = preflight(ansible_play, 'ubuntu2604', nvidia_driver_branch='625')
    assert got['task'] == 'Refuse a driver branch newer than any this collection knows'
    assert 'nvidia_driver_branch: driver branch 625 is newer than the newest branch known here (620)' in got['msg']
    assert 'set nvidia_driver_allow_unknown_branch to true to go on with branch 625 unchecked' in got['msg']
    assert got['msg'].endswith('Nothing was changed.')


def test_preflight_with_the_override_goes_on_to_what_the_platform_ships(ansible_play):
    got = preflight(ansible_play, 'ubuntu2604', nvidia_driver_branch='625', nvidia_driver_allow_unknown_branch=True)
    assert got['task'] == 'Assert that the variables make sense for this platform'
    assert 'The distribution ships branches 535, 550, 570, 580, 590, 595, 615' in ' '.join(got['msg'].split())
    assert 'other branches need nvidia_driver_source=cuda_repo' in got['msg']


def test_preflight_refuses_615_with_proprietary_modules_on_ubuntu(ansible_play):
    got = preflight(ansible_play, 'ubuntu2604', nvidia_driver_branch='615', nvidia_driver_kernel_module='proprietary')
    assert got['task'] == 'Assert that the variables make sense for this platform'
    assert 'only open kernel modules, set nvidia_driver_kernel_module=open: 615' in ' '.join(got['msg'].split())


def test_negative_control_615_with_open_modules_passes_the_platform_checks(ansible_play):
    """The run gets past the branch and platform checks and reads the (fake, empty) PCI bus; it stops at the next task,
    where the facts gpu_facts set are hidden by this test's ansible_facts extra variable."""
    got = preflight(ansible_play, 'ubuntu2604', nvidia_driver_branch='615', nvidia_driver_kernel_module='open')
    assert got['task'] == 'Remember the GPUs and NVSwitches found', got


def test_preflight_on_an_ubuntu_release_without_a_table_is_refused_as_a_platform(ansible_play):
    """Issue 54: a release without a table is refused by common's platform preflight (before it, the role went on and
    said that nvidia_driver_branch=auto names no branch there: _role_messages' tests keep that sentence)."""
    got = preflight(ansible_play, 'ubuntu2804')
    assert got['task'] == 'Assert that the platform is supported'
    assert 'Ubuntu 28.04 on localhost is not supported by gpuops.gpu_server.nvidia_driver' in ' '.join(got['msg'].split())


@pytest.mark.parametrize('platform, extra, words', [
    ('ubuntu2404', {'nvidia_driver_version': '580'}, "nvidia_driver_version=580 is not an exact driver version"),
    ('ubuntu2404', {'nvidia_driver_version': '580.178.04-0ubuntu0.24.04.1'}, 'is not an exact driver version'),
    ('ubuntu2404', {'nvidia_driver_version': '595.112.07', 'nvidia_driver_branch': '580'},
     "nvidia_driver_version=595.112.07 is of branch 595, but nvidia_driver_branch=580: set nvidia_driver_branch to '595'"),
    ('debian12', {'nvidia_driver_version': '535.247.01'},
     "applies to Ubuntu's archive (nvidia_driver_source=distribution on Ubuntu) only; here Debian"),
    ('ubuntu2404', {'nvidia_driver_version': '580.95.05', 'nvidia_driver_source': 'cuda_repo'},
     'here Ubuntu with nvidia_driver_source=cuda_repo'),
])
def test_preflight_refuses_a_driver_version_it_cannot_pin(ansible_play, platform, extra, words):
    got = preflight(ansible_play, platform, **extra)
    assert got['task'] == "Refuse a driver version that is malformed, of another branch, or not from Ubuntu's archive"
    assert words in ' '.join(got['msg'].split()), got['msg']
    assert got['msg'].endswith('Nothing was changed.')


def test_negative_control_an_exact_ubuntu_version_passes_and_auto_takes_its_branch(ansible_play):
    """Branch auto with 595.112.07 on 24.04 is branch 595: the run gets past the version and platform checks."""
    got = preflight(ansible_play, 'ubuntu2404', nvidia_driver_version='595.112.07')
    assert got['task'] == 'Remember the GPUs and NVSwitches found', got
    assert render(ansible_play, 'ubuntu2404', nvidia_driver_version='595.112.07')['auto'] == '595'
