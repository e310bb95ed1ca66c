# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""_rocm_devices and the rocm_devices module on hand-built sysfs and /dev trees."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _rocm_devices
from ansible_collections.gpuops.gpu_server.plugins.modules import rocm_devices


def make_tree(tmp_path, gpus, kfd=True, extra_render=None):
    """``gpus``: [(render minor, PCI slot, vendor)]; /dev files are plain files (the module reads paths, not majors)."""
    sysfs, dev = tmp_path / 'sys', tmp_path / 'dev'
    (dev / 'dri').mkdir(parents=True)
    for minor, slot, vendor in gpus:
        pci = sysfs / 'devices' / 'pci0000:00' / slot
        pci.mkdir(parents=True)
        (pci / 'vendor').write_text(vendor + '\n')
        drm = sysfs / 'class' / 'drm' / ('renderD%d' % minor)
        drm.mkdir(parents=True)
        os.symlink(str(pci), str(drm / 'device'))
        (dev / 'dri' / ('renderD%d' % minor)).write_text('')
    (sysfs / 'class' / 'drm' / 'card0').mkdir(parents=True, exist_ok=True)
    if kfd:
        (dev / 'kfd').write_text('')
    return str(sysfs), str(dev)


def test_amd_render_nodes_in_minor_order_others_ignored(tmp_path):
    sysfs, dev = make_tree(tmp_path, [(130, '0000:2f:00.0', '0x1002'), (128, '0000:29:00.0', '0x1002'),
                                      (129, '0000:18:00.0', '0x10de'), (1300, '0000:30:00.0', 'junk')])
    nodes = _rocm_devices.render_nodes(sysfs, dev)
    assert [(n['name'], n['pci_bus_id']) for n in nodes] == [('renderD128', '0000:29:00.0'),
                                                             ('renderD130', '0000:2f:00.0')]
    spec = _rocm_devices.cdi_spec(nodes, _rocm_devices.kfd(dev), dev)
    assert spec['kind'] == 'amd.com/gpu' and spec['cdiVersion'] == '0.5.0'
    assert [d['name'] for d in spec['devices']] == ['0', '1', 'all']
    assert spec['devices'][1]['containerEdits']['deviceNodes'] == [
        {'path': '/dev/dri/renderD130', 'hostPath': os.path.join(dev, 'dri', 'renderD130')}]
    assert spec['containerEdits']['deviceNodes'] == [{'path': '/dev/kfd', 'hostPath': os.path.join(dev, 'kfd')}]


def test_real_dev_root_has_no_host_path():
    node = _rocm_devices._node('/dev/dri/renderD128', '/dev')
    assert node == {'path': '/dev/dri/renderD128'}


def test_docker_run_args_as_amd_documents(tmp_path):
    sysfs, dev = make_tree(tmp_path, [(128, '0000:29:00.0', '0x1002')])
    nodes = _rocm_devices.render_nodes(sysfs, dev)
    args = _rocm_devices.docker_run_args(nodes, _rocm_devices.kfd(dev))
    assert args[:4] == ['--device', os.path.join(dev, 'kfd'), '--device', os.path.join(dev, 'dri', 'renderD128')]
    assert args[-2:] == ['--security-opt', 'seccomp=unconfined']
    gid = os.stat(os.path.join(dev, 'kfd')).st_gid
    assert (['--group-add', str(gid)] == args[4:6]) is (gid != 0)


def test_nothing_without_kfd_or_render_nodes(tmp_path):
    sysfs, dev = make_tree(tmp_path, [(128, '0000:29:00.0', '0x1002')], kfd=False)
    nodes = _rocm_devices.render_nodes(sysfs, dev)
    assert _rocm_devices.cdi_spec(nodes, _rocm_devices.kfd(dev), dev) is None
    assert _rocm_devices.docker_run_args(nodes, _rocm_devices.kfd(dev)) == []
    os.remove(os.path.join(dev, 'dri', 'renderD128'))
    open(os.path.join(dev, 'kfd'), 'w').close()
    nodes = _rocm_devices.render_nodes(sysfs, dev)
    assert nodes[0]['exists'] is False
    assert _rocm_devices.cdi_spec(nodes, _rocm_devices.kfd(dev), dev) is None


def test_module_says_why_the_container_steps_are_skipped(tmp_path, run_module):
    result = run_module(rocm_devices.main, dict(sysfs_root=str(tmp_path / 'nosys'), dev_root=str(tmp_path / 'nodev')))
    assert not result.failed and result['changed'] is False
    assert result['cdi_spec'] is None and result['docker_run_args'] == [] and result['gpu_count'] == 0
    assert 'kfd does not exist' in result['reason']


def test_module_on_a_gpu_tree(tmp_path, run_module):
    sysfs, dev = make_tree(tmp_path, [(128, '0000:29:00.0', '0x1002'), (129, '0000:2c:00.0', '0x1002')])
    result = run_module(rocm_devices.main, dict(sysfs_root=sysfs, dev_root=dev))
    assert result['gpu_count'] == 2 and result['reason'] is None
    assert len(result['cdi_spec']['devices']) == 3
