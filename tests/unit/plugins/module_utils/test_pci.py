# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pci
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import build_sysfs, read_fixture


def test_sysfs_hgx(tmp_path):
    devices = _pci.from_sysfs(build_sysfs(tmp_path, 'hgx_h200.yml'))
    assert [d['pci_bus_id'] for d in devices] == [
        '0000:05:00.0', '0000:06:00.0', '0000:07:00.0', '0000:08:00.0', '0000:18:00.0', '0000:2a:00.0',
        '0000:3a:00.0', '0000:5d:00.0', '0000:9a:00.0', '0000:ab:00.0', '0000:ba:00.0', '0000:db:00.0']
    gpus = _pci.gpus(devices)
    assert len(gpus) == 8
    assert set((g['pci_device_id'], g['architecture'], g['driver'], g['pci_class']) for g in gpus) == \
        {('10de:2335', 'Hopper', 'nvidia', '0x0302')}
    switches = [d for d in devices if d['kind'] == 'nvswitch']
    assert len(switches) == 4
    assert switches[0]['pci_device_id'] == '10de:22a3' and switches[0]['driver'] is None


def test_sysfs_workstation_without_driver(tmp_path):
    devices = _pci.from_sysfs(build_sysfs(tmp_path, 'workstation_no_driver.yml'))
    assert [(d['pci_bus_id'], d['kind'], d['architecture'], d['driver']) for d in devices] == [
        ('0000:01:00.0', 'gpu', 'Ada Lovelace', 'nouveau'),
        ('0000:01:00.1', 'other', None, 'snd_hda_intel'),
    ]


def test_sysfs_missing_means_none(tmp_path):
    assert _pci.from_sysfs(str(tmp_path / 'nothing')) is None


def test_lspci_fallback():
    devices = _pci.parse_lspci(read_fixture('sysfs', 'lspci_hgx_h100.txt'))
    assert [(d['pci_bus_id'], d['pci_device_id'], d['kind'], d['architecture'], d['driver']) for d in devices] == [
        ('0000:05:00.0', '10de:22a3', 'nvswitch', 'Hopper', None),
        ('0000:18:00.0', '10de:2330', 'gpu', 'Hopper', 'nvidia'),
        ('0000:2a:00.0', '10de:2330', 'gpu', 'Hopper', None),
        ('0000:3b:00.0', '10de:29ff', 'gpu', None, None),
    ]
    assert devices[3]['product'] == 'NVIDIA Corporation Device'


def test_lspci_without_domain():
    devices = _pci.parse_lspci('01:00.0 VGA compatible controller [0300]: NVIDIA Corporation AD102 '
                               '[GeForce RTX 4090] [10de:2684] (rev a1)\n')
    assert devices[0]['pci_bus_id'] == '0000:01:00.0'
    assert devices[0]['kind'] == 'gpu'


def test_the_reader_names_devices_without_the_compatibility_logic():
    """_pci.py reads the bus with the exact lookups beside the data (_gpu_lookup.py), not through _compat.py."""
    import ast
    with open(_pci.__file__) as f:
        tree = ast.parse(f.read())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and 'module_utils' in node.module:
            imported.update([node.module.rsplit('.', 1)[-1]] + [a.name for a in node.names])
    assert '_gpu_lookup' in imported and '_compat' not in imported
