# -*- coding: utf-8 -*-
"""Filters nvidia_apt_driver_plan, nvidia_apt_lock_problems and nvidia_driver_version_problem: the wrappers and their
errors."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter.nvidia_apt import (
    FilterModule, nvidia_apt_driver_plan, nvidia_apt_lock_problems, nvidia_driver_version_problem)


def test_registered():
    assert set(FilterModule().filters()) == {'nvidia_apt_driver_plan', 'nvidia_apt_lock_problems',
                                             'nvidia_driver_version_problem'}


def test_plan_through_the_filter():
    plan = nvidia_apt_driver_plan(595, packages=['cuda-drivers'], holds=None, installed=None)
    assert plan['install'] == ['cuda-drivers=595.*'] and plan['pinning_package'] == 'nvidia-driver-pinning-595'


@pytest.mark.parametrize('kwargs, message', [
    ({'packages': 'cuda-drivers'}, 'packages: expected a list'),
    ({'installed': ['cuda-drivers']}, 'installed: expected a dict'),
    ({'available': ['x']}, 'available is the text of apt-cache madison'),
])
def test_plan_bad_input(kwargs, message):
    with pytest.raises(AnsibleFilterError, match=message):
        nvidia_apt_driver_plan('595', **kwargs)


def test_plan_bad_branch_names_the_filter():
    with pytest.raises(AnsibleFilterError, match="nvidia_apt_driver_plan: expected a three-digit driver branch"):
        nvidia_apt_driver_plan('latest')


def test_lock_problems_through_the_filter():
    assert nvidia_apt_lock_problems({'nvidia-driver-pinning-595': [{'version': '595-1'}]}, '595') == []
    with pytest.raises(AnsibleFilterError, match='nvidia_apt_lock_problems: expected a three-digit'):
        nvidia_apt_lock_problems({}, 'x')


def test_plan_with_a_version_through_the_filter():
    plan = nvidia_apt_driver_plan('580', packages=['nvidia-utils-580-server'], version='580.178.04')
    assert plan['install'] == ['nvidia-utils-580-server=580.178.04-*']
    with pytest.raises(AnsibleFilterError, match='nvidia_apt_driver_plan: driver version 570.211.01 is of branch 570'):
        nvidia_apt_driver_plan('580', packages=['nvidia-utils-580-server'], version='570.211.01')


@pytest.mark.parametrize('version, kwargs, problem', [
    # Nothing to pin, and a version that can be pinned: no problem (the negative controls of the rows below).
    ('', {'distribution': 'Debian'}, ''),
    (None, {}, ''),
    ('580.178.04', {'distribution': 'Ubuntu'}, ''),
    ('580.82', {'distribution': 'Ubuntu'}, ''),
    ('580', {'distribution': 'Ubuntu'}, 'is not an exact driver version'),
    ('580.178.04-0ubuntu0.24.04.1', {'distribution': 'Ubuntu'}, 'is not an exact driver version'),
    (580.82, {'distribution': 'Ubuntu'}, ''),
    ('595.112.07', {'distribution': 'Ubuntu', 'requested_branch': '580'},
     "is of branch 595, but nvidia_driver_branch=580: set nvidia_driver_branch to '595' or auto"),
    ('580.178.04', {'distribution': 'Debian'}, "applies to Ubuntu's archive (nvidia_driver_source=distribution on Ubuntu) "
                                               "only; here Debian with nvidia_driver_source=distribution"),
    ('580.178.04', {'distribution': 'Ubuntu', 'source': 'cuda_repo'}, 'here Ubuntu with nvidia_driver_source=cuda_repo'),
])
def test_version_problem_through_the_filter(version, kwargs, problem):
    got = nvidia_driver_version_problem(version, '580', **kwargs)
    assert (problem in got and bool(got)) if problem else got == '', got
