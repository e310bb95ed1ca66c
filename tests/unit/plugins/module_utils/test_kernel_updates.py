# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""_kernel_updates: the kernel metapackages in real dpkg-query output, and real apt-get -s answers (fixtures/kernel_updates)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_updates as ku
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import read_fixture


def fixture(name):
    return read_fixture('kernel_updates', name)


@pytest.fixture(scope='module')
def debian():
    return ku.parse_dpkg_query(fixture('debian12-dpkg-query.txt'))


@pytest.fixture(scope='module')
def ubuntu():
    return ku.parse_dpkg_query(fixture('ubuntu2404-dpkg-query.txt'))


def test_debian_metapackage_and_kernel(debian):
    assert ku.kernel_metapackages(debian) == ['linux-image-cloud-amd64']
    assert ku.installed_kernels(debian) == ['6.1.0-50-cloud-amd64']
    assert debian['linux-image-cloud-amd64']['version'] == '6.1.176-1'


def test_ubuntu_metapackages_not_the_per_release_packages(ubuntu):
    # linux-modules-6.8.0-1008-aws and linux-modules-nvidia-535-server-6.8.0-1008-aws also depend on a per-release
    # image, but they are one kernel's packages, not metapackages.
    assert ku.kernel_metapackages(ubuntu) == ['linux-image-aws', 'linux-modules-nvidia-535-server-aws']
    assert ku.installed_kernels(ubuntu) == ['6.8.0-1008-aws']
    assert ubuntu['nvidia-kernel-common-535-server']['held'] is True
    assert ubuntu['linux-image-aws']['held'] is False


def test_debian_simulation_names_the_new_kernel(debian):
    installs = ku.parse_simulation(fixture('debian12-cloud-amd64.txt'))
    assert installs == [
        {'name': 'linux-image-6.1.0-57-cloud-amd64', 'from': None, 'to': '6.1.192-3'},
        {'name': 'linux-image-cloud-amd64', 'from': '6.1.176-1', 'to': '6.1.192-3'},
    ]
    result = ku.summarize(debian, ['linux-image-cloud-amd64'], '6.1.0-50-cloud-amd64', 0, fixture('debian12-cloud-amd64.txt'))
    assert result['new_kernels'] == ['6.1.0-57-cloud-amd64']
    assert result['inplace_kernels'] == []
    assert result['upgrades'] == [{'name': 'linux-image-cloud-amd64', 'from': '6.1.176-1', 'to': '6.1.192-3'}]
    assert result['newest_installed'] == '6.1.0-50-cloud-amd64'
    assert result['newest_after'] == '6.1.0-57-cloud-amd64'
    assert result['refusal'] is None
    assert result['nvidia_module_branches'] == {}


def test_a_metapackage_that_is_not_installed_is_skipped_by_apt():
    # apt says "Skipping linux-headers-cloud-amd64, it is not installed": no Inst line for it.
    installs = ku.parse_simulation(fixture('debian12-headers-not-installed.txt'))
    assert [i['name'] for i in installs] == ['linux-image-6.1.0-57-cloud-amd64', 'linux-image-cloud-amd64']


def test_ubuntu_simulation_new_kernel_and_the_module_branch_it_brings(ubuntu):
    text = fixture('ubuntu2404-aws-nvidia-535.txt')
    result = ku.summarize(ubuntu, ['linux-image-aws', 'linux-modules-nvidia-535-server-aws'], '6.8.0-1008-aws', 0, text)
    assert result['new_kernels'] == ['7.0.0-1018-aws']
    assert result['newest_after'] == '7.0.0-1018-aws'
    # noble-updates' 535-server module metapackage is transitional: the new kernel would get a 580 module.
    assert result['nvidia_module_branches'] == {'linux-modules-nvidia-580-server-7.0.0-1018-aws': '580'}
    assert {u['name'] for u in result['upgrades']} == {'linux-image-aws', 'linux-modules-nvidia-535-server-aws'}
    # Inst lines with a trailing "[]" (apt's broken-dependency marks) parse too.
    assert {'name': 'systemd-sysv', 'from': '255.4-1ubuntu8', 'to': '255.4-1ubuntu8.19'} in result['installs']


def test_ubuntu_image_alone(ubuntu):
    result = ku.summarize(ubuntu, ['linux-image-aws'], '6.8.0-1008-aws', 0, fixture('ubuntu2404-aws-image.txt'))
    assert result['new_kernels'] == ['7.0.0-1018-aws']
    assert result['nvidia_module_branches'] == {}


def test_ubuntu_refusal_with_the_held_driver_names_nvidia(ubuntu):
    text = fixture('ubuntu2404-aws-nvidia-535-held.txt')
    result = ku.summarize(ubuntu, ['linux-image-aws', 'linux-modules-nvidia-535-server-aws'], '6.8.0-1008-aws', 100, text)
    refused = result['refusal']
    assert refused['nvidia'] is True
    assert refused['unmet'] == [
        'nvidia-kernel-common-535-server : Conflicts: nvidia-kernel-common',
        'nvidia-kernel-common-580-server : Conflicts: nvidia-kernel-common',
        'E: Error, pkgProblemResolver::Resolve generated breaks, this may be caused by held packages.',
    ]
    # A refused upgrade installs nothing.
    assert result['new_kernels'] == [] and result['installs'] == []
    assert result['newest_after'] == '6.8.0-1008-aws'


def test_a_refusal_without_nvidia_packages_says_so():
    text = ('The following packages have unmet dependencies:\n'
            ' linux-image-6.1.0-57-cloud-amd64 : Depends: linux-base (>= 4.99) but 4.12.1~deb12u1 is to be installed\n'
            'E: Unable to correct problems, you have held broken packages.\n')
    refused = ku.refusal(100, text)
    assert refused['nvidia'] is False
    assert refused['unmet'][0].startswith('linux-image-6.1.0-57-cloud-amd64 : Depends: linux-base')


def test_inplace_update_of_a_kernel_keeps_its_release():
    installs = ku.parse_simulation(
        'Inst linux-image-6.1.0-50-cloud-amd64 [6.1.176-1] (6.1.177-1 Debian-Security:12/oldstable-security [amd64])\n')
    assert ku.new_kernels(installs) == ['6.1.0-50-cloud-amd64']
    assert ku.inplace_kernels(installs) == ['6.1.0-50-cloud-amd64']


# Negative controls: output that is not what apt or dpkg-query print gives nothing, never a kernel.
@pytest.mark.parametrize('text', [
    '', None, b'\xff\xfe', 42,
    'Conf linux-image-6.1.0-57-cloud-amd64 (6.1.192-3 Debian-Security:12/oldstable-security [amd64])\n',
    'Inst linux-image-cloud-amd64 [6.1.176-1] (6.1.192-3 Debian-Security:12/oldstable-security [amd64])\n',
    'Inst linux-headers-6.1.0-57-common (6.1.192-3 Debian-Security:12/oldstable-security [all])\n',
    'Inst linux-image-6.1.0-57-cloud-amd64-dbg (6.1.192-3 Debian-Security:12/oldstable-security [amd64])\n',
    '  Inst linux-image-6.1.0-57-cloud-amd64 (6.1.192-3 x [amd64])\n',
])
def test_no_new_kernel_from_other_text(text):
    assert ku.new_kernels(ku.parse_simulation(text)) == []


def test_negative_controls_for_metapackages():
    packages = ku.parse_dpkg_query(
        # removed, configuration files only: not installed
        'linux-image-amd64\trc \t6.1.176-1\tlinux-image-6.1.0-50-amd64 (= 6.1.176-1)\n'
        # a flavour-named package that does not depend on a per-release package
        'linux-image-generic-hwe-24.04\tii \t1\tlinux-image-generic\n'
        # per-release packages depending on per-release packages
        'linux-headers-6.1.0-50-cloud-amd64\tii \t6.1.176-1\tlinux-headers-6.1.0-50-common (= 6.1.176-1)\n'
        'linux-modules-nvidia-580-server-6.8.0-149-generic\tii \t1\tlinux-image-6.8.0-149-generic\n'
        # not a kernel package at all
        'nvidia-kernel-common-580-server\thi \t580\tlinux-image-6.8.0-149-generic\n'
        # three fields only
        'linux-image-cloud-amd64\tii \tlinux-image-6.1.0-50-cloud-amd64\n'
        # the real ones
        'linux-headers-cloud-amd64\tii \t6.1.176-1\tlinux-headers-6.1.0-50-cloud-amd64 (= 6.1.176-1)\n'
        'linux-modules-nvidia-580-server-open-generic\tii \t1\tlinux-modules-nvidia-580-server-open-6.8.0-149-generic\n')
    assert ku.kernel_metapackages(packages) == ['linux-headers-cloud-amd64', 'linux-modules-nvidia-580-server-open-generic']


def test_release_of():
    assert ku.release_of('linux-image-unsigned-6.8.0-149-generic') == '6.8.0-149-generic'
    assert ku.release_of('linux-modules-nvidia-580-server-open-6.8.0-149-generic') == '6.8.0-149-generic'
    assert ku.release_of('linux-headers-6.12.57+deb13-cloud-amd64') == '6.12.57+deb13-cloud-amd64'
    assert ku.release_of('linux-image-6.1.0-50-cloud-amd64-unsigned') == '6.1.0-50-cloud-amd64'
    for name in ('linux-image-generic', 'linux-headers-6.1.0-50-common', 'linux-modules-nvidia-580-server-generic', ''):
        assert ku.release_of(name) == ''


# Ubuntu Core (issue 52, Low): linux-image-uc-<release> under the flavour metapackage linux-image-uc-generic.


@pytest.fixture(scope='module')
def ubuntu_core():
    return ku.parse_dpkg_query(fixture('ubuntu2404-uc-dpkg-query.txt'))


def test_ubuntu_core_metapackage_and_kernel(ubuntu_core):
    assert ku.kernel_metapackages(ubuntu_core) == ['linux-image-uc-generic']
    assert ku.installed_kernels(ubuntu_core) == ['6.8.0-137-generic']


def test_ubuntu_core_simulation_names_the_new_kernel(ubuntu_core):
    text = fixture('ubuntu2404-uc-generic.txt')
    result = ku.summarize(ubuntu_core, ['linux-image-uc-generic'], '6.8.0-137-generic', 0, text)
    assert result['new_kernels'] == ['6.8.0-139-generic']
    assert result['newest_installed'] == '6.8.0-137-generic'
    assert result['newest_after'] == '6.8.0-139-generic'
    assert result['upgrades'] == [{'name': 'linux-image-uc-generic', 'from': '6.8.0-137.137', 'to': '6.8.0-139.139'}]


@pytest.mark.parametrize('name,release', [
    ('linux-image-uc-6.8.0-137-generic', '6.8.0-137-generic'),
    ('linux-image-uc-7.0.0-10-generic', '7.0.0-10-generic'),
    ('linux-image-uc-generic', ''),                        # the metapackage
    ('linux-image-uc-generic-hwe-24.04', ''),
    ('linux-image-uc-', ''),
    ('linux-image-ucx-6.8.0-137-generic', ''),
])
def test_ubuntu_core_release_of(name, release):
    assert ku.release_of(name) == release
    assert ku.image_release(name) == release


def test_negative_control_the_old_pattern_did_not_read_ubuntu_core(ubuntu_core):
    """The per-release pattern before issue 52 took uc-6.8.0-137-generic for the release: no kernel, no metapackage."""
    import re
    old = re.compile(r'^linux-image-(?:unsigned-)?(.+?)(?:-unsigned)?\Z')
    assert old.match('linux-image-uc-6.8.0-137-generic').group(1) == 'uc-6.8.0-137-generic'
    from ansible_collections.gpuops.gpu_server.plugins.module_utils._kernel_release import kernel_flavour
    assert kernel_flavour('uc-6.8.0-137-generic') == ''
