# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_vendor and amdgpu_kernels as modules: a fake PCI bus, a fake tree of kernels, a fake modinfo and dpkg-query."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.gpu_server.plugins.modules import amdgpu_kernels, gpu_vendor
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import make_executable
from ansible_collections.gpuops.gpu_server.tests.unit.plugins.module_utils.test_amdgpu import (
    FIRMWARE_2025, KERNEL_6_1, KERNEL_6_12)


def fake_bus(root, devices):
    for slot, (vendor, device, pci_class) in devices.items():
        d = root / 'bus' / 'pci' / 'devices' / slot
        d.mkdir(parents=True)
        (d / 'vendor').write_text(vendor + '\n')
        (d / 'device').write_text(device + '\n')
        (d / 'class').write_text(pci_class + '\n')
    return str(root)


@pytest.fixture
def amd_bus(tmp_path):
    return fake_bus(tmp_path / 'sys', {'0000:41:00.0': ('0x1002', '0x74a1', '0x120000')})


@pytest.mark.parametrize('vendor', [True, 'AMD', ' amd', 'amd\n', None, 3])
def test_gpu_vendor_refuses_a_bad_choice_naming_the_variable(run_module, amd_bus, vendor):
    result = run_module(gpu_vendor.main, {'vendor': vendor, 'sysfs_root': amd_bus})
    assert result['failed'] and result['msg'].startswith('gpuops_gpu_vendor: expected one of auto, nvidia, amd, none')
    assert result['msg'].endswith('Nothing was changed.')


def test_gpu_vendor_auto_and_forced(run_module, amd_bus):
    result = run_module(gpu_vendor.main, {'sysfs_root': amd_bus})
    assert result['vendor'] == 'amd' and result['vendors_on_bus'] == ['amd'] and not result['changed']
    assert result['devices'][0]['pci_device_id'] == '1002:74a1'
    assert run_module(gpu_vendor.main, {'sysfs_root': amd_bus, 'vendor': 'none'})['vendor'] == 'none'


def kernel_tree(root, kernels):
    """``kernels``: release -> modinfo text of its amdgpu.ko, or None for a kernel without one."""
    (root / 'boot').mkdir(parents=True)
    for release, text in kernels.items():
        (root / 'boot' / ('vmlinuz-' + release)).write_text('')
        mdir = root / 'lib' / 'modules' / release / 'kernel' / 'drivers' / 'gpu' / 'drm' / 'amd' / 'amdgpu'
        mdir.mkdir(parents=True)
        if text is not None:
            (mdir / 'amdgpu.ko').write_text(text)       # the fake modinfo prints the file's text
    return str(root)


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    with open(str(bin_dir / 'modinfo'), 'w') as f:
        f.write('#!/bin/sh\n[ "$1 $2" = "-F firmware" ] || exit 2\ncat "$3"\n')
    os.chmod(str(bin_dir / 'modinfo'), 0o755)
    monkeypatch.setenv('PATH', '%s%s%s' % (bin_dir, os.pathsep, os.environ.get('PATH', '')))
    return bin_dir


def test_debian_12_stock_kernel_and_firmware_are_problems(run_module, amd_bus, tmp_path, fake_bin):
    root = kernel_tree(tmp_path / 'root', {'6.1.0-57-amd64': KERNEL_6_1})
    result = run_module(amdgpu_kernels.main, {'sysfs_root': amd_bus, 'root': root})
    assert not result.get('failed') and not result['changed']
    assert [(p['kind'], p['release']) for p in result['problems']] == [('kernel', '6.1.0-57-amd64'), ('firmware', None)]
    assert result['kernels'][0]['module'].endswith('/amdgpu.ko')


def test_backports_kernel_with_the_firmware_on_disk_passes(run_module, amd_bus, tmp_path, fake_bin):
    root = kernel_tree(tmp_path / 'root', {'6.12.95+deb12-amd64': KERNEL_6_12})
    fw = tmp_path / 'root' / 'lib' / 'firmware' / 'amdgpu'
    fw.mkdir(parents=True)
    for name in FIRMWARE_2025:
        (fw / (os.path.basename(name) + '.xz')).write_text('')
    result = run_module(amdgpu_kernels.main, {'sysfs_root': amd_bus, 'root': root})
    assert result['problems'] == [] and result['messages'] == []


def test_a_failing_modinfo_fails_the_module_with_the_command(run_module, amd_bus, tmp_path, monkeypatch):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    make_executable(bin_dir, 'modinfo', stderr='modinfo: ERROR: could not get modinfo', rc=1)
    monkeypatch.setenv('PATH', '%s%s%s' % (bin_dir, os.pathsep, os.environ.get('PATH', '')))
    root = kernel_tree(tmp_path / 'root', {'6.1.0-57-amd64': KERNEL_6_1})
    result = run_module(amdgpu_kernels.main, {'sysfs_root': amd_bus, 'root': root})
    assert result['failed'] and 'exit code 1' in result['msg'] and 'could not get modinfo' in result['msg']


def test_ubuntu_modules_extra_plan(run_module, amd_bus, tmp_path, fake_bin):
    make_executable(fake_bin, 'dpkg-query', stdout=(
        'linux-image-virtual\tinstall ok installed\tlinux-image-6.8.0-155-generic\n'
        'linux-image-6.8.0-155-generic\tinstall ok installed\tlinux-modules-6.8.0-155-generic\n'))
    root = kernel_tree(tmp_path / 'root', {'6.8.0-155-generic': None})
    result = run_module(amdgpu_kernels.main, {
        'sysfs_root': amd_bus, 'root': root, 'firmware_available': FIRMWARE_2025, 'modules_extra': True,
        'modules_extra_metapackages': {'linux-image-virtual': 'linux-image-generic'}})
    assert result['packages'] == ['linux-modules-extra-6.8.0-155-generic', 'linux-image-generic']
    assert result['problems'] == [] and result['kernels'] == [{'release': '6.8.0-155-generic', 'module': None}]


def test_a_container_without_kernels_checks_the_firmware_only(run_module, amd_bus, tmp_path, fake_bin):
    root = str(tmp_path / 'empty')
    result = run_module(amdgpu_kernels.main, {'sysfs_root': amd_bus, 'root': root, 'modules_extra': True})
    assert result['kernels'] == [] and result['packages'] == []
    assert [p['kind'] for p in result['problems']] == ['firmware']
