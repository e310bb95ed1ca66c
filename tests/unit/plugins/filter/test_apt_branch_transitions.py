# -*- coding: utf-8 -*-
"""apt_branch_transitions against real Ubuntu 24.04 and 26.04 index stanzas (tests/unit/fixtures/apt_cache)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter.apt_branch_transitions import apt_branch_transitions

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'apt_cache')


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def test_noble_updates_535_server_is_a_transition_to_580():
    found = apt_branch_transitions(fixture('noble-updates-535-server.txt'), '535')
    assert [(f['package'], f['installs_branch']) for f in found] == [
        ('nvidia-utils-535-server', '580'), ('libnvidia-compute-535-server', '580')]
    assert 'transitional package that depends on nvidia-utils-580-server' in found[0]['reason']


def test_resolute_535_server_is_a_transition_to_580_with_the_targets_version():
    # Ubuntu 26.04's transitional packages are built from the 580 source: version 580.178.04, Depends the 580 name.
    found = apt_branch_transitions(fixture('resolute-535-server.txt'), '535')
    assert [(f['package'], f['installs_branch']) for f in found] == [
        ('nvidia-utils-535-server', '580'), ('libnvidia-compute-535-server', '580'),
        ('nvidia-headless-no-dkms-535-server', '580')]
    # Each reason names its package and the one it really installs (not "its version ... belongs to branch 580" twice).
    assert found[0]['reason'] == ('nvidia-utils-535-server 580.178.04-0ubuntu0.26.04.1 is a transitional package that '
                                  'depends on nvidia-utils-580-server')
    assert len(set(f['reason'] for f in found)) == 3


def test_real_branches_are_not_transitions():
    assert apt_branch_transitions(fixture('noble-updates-580-server.txt'), '580') == []
    assert apt_branch_transitions(fixture('noble-release-535-server.txt'), '535') == []
    assert apt_branch_transitions(fixture('resolute-580-server.txt'), '580') == []


def test_a_version_of_another_branch_counts():
    text = 'Package: libnvidia-tesla-535-ml1\nVersion: 550.163.01-2\nDepends: libc6\n'
    found = apt_branch_transitions(text, '535')
    assert found[0]['installs_branch'] == '550'
    assert found[0]['reason'] == 'libnvidia-tesla-535-ml1 550.163.01-2 belongs to branch 550'


def test_unrelated_stanzas_and_empty_output():
    assert apt_branch_transitions('Package: nvidia-persistenced\nVersion: 580.1-1\n', '535') == []
    assert apt_branch_transitions('', '535') == []


@pytest.mark.parametrize('branch', ['auto', '53', 535.0, None])
def test_bad_branch_is_refused(branch):
    with pytest.raises(AnsibleFilterError, match='three-digit driver branch'):
        apt_branch_transitions('', branch)


def test_bad_input_is_refused():
    with pytest.raises(AnsibleFilterError, match='apt-cache show'):
        apt_branch_transitions(None, '535')
