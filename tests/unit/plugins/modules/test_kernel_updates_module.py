# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""kernel_updates with fake dpkg-query and apt-get on PATH that print the recorded answers (fixtures/kernel_updates)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.gpu_server.plugins.modules import kernel_updates
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path, make_executable


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    def install(dpkg, apt=None, apt_rc=0):
        make_executable(tmp_path, 'dpkg-query', stdout_file=fixture_path('kernel_updates', dpkg))
        # apt-get logs its arguments so that the test sees which metapackages were simulated.
        path = make_executable(tmp_path, 'apt-get', stdout_file=fixture_path('kernel_updates', apt) if apt else None,
                               rc=apt_rc)
        with open(path) as f:
            lines = f.read().splitlines()
        lines.insert(1, 'echo "$*" >> "%s"' % tmp_path.joinpath('apt-get.calls'))
        with open(path, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        monkeypatch.setenv('PATH', '%s:%s' % (tmp_path, os.environ['PATH']))
        return tmp_path.joinpath('apt-get.calls')
    return install


def test_debian_new_kernel(fake_bin, run_module):
    calls = fake_bin('debian12-dpkg-query.txt', 'debian12-cloud-amd64.txt')
    result = run_module(kernel_updates.main, {'_ansible_check_mode': True})
    assert not result.get('failed'), result
    assert result['changed'] is False
    assert result['metapackages'] == ['linux-image-cloud-amd64']
    assert result['new_kernels'] == ['6.1.0-57-cloud-amd64']
    assert result['newest_installed'] == '6.1.0-50-cloud-amd64'
    assert result['running'] == os.uname()[2]
    assert calls.read_text() == '-s install --only-upgrade linux-image-cloud-amd64\n'


def test_ubuntu_refusal_is_returned_not_failed(fake_bin, run_module):
    fake_bin('ubuntu2404-dpkg-query.txt', 'ubuntu2404-aws-nvidia-535-held.txt', apt_rc=100)
    result = run_module(kernel_updates.main, {})
    assert not result.get('failed'), result
    assert result['refusal']['nvidia'] is True
    assert result['nvidia_metapackages'] == ['linux-modules-nvidia-535-server-aws']


def test_without_nvidia_modules_only_the_image_is_simulated(fake_bin, run_module):
    calls = fake_bin('ubuntu2404-dpkg-query.txt', 'ubuntu2404-aws-image.txt')
    result = run_module(kernel_updates.main, {'nvidia_modules': False})
    assert result['metapackages'] == ['linux-image-aws']
    assert result['nvidia_metapackages'] == ['linux-modules-nvidia-535-server-aws']
    assert result['new_kernels'] == ['7.0.0-1018-aws']
    assert calls.read_text() == '-s install --only-upgrade linux-image-aws\n'


def test_no_simulation(fake_bin, run_module):
    calls = fake_bin('debian12-dpkg-query.txt')
    result = run_module(kernel_updates.main, {'simulate': False})
    assert result['new_kernels'] == [] and result['newest_after'] == '6.1.0-50-cloud-amd64'
    assert not calls.exists()


def test_apt_get_failing_otherwise_fails_the_module(fake_bin, run_module):
    fake_bin('debian12-dpkg-query.txt', 'debian12-cloud-amd64.txt', apt_rc=1)
    result = run_module(kernel_updates.main, {})
    assert result['failed'] is True
    assert 'apt-get' in result['msg'] and 'exit code 1' in result['msg'], result['msg']
