# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The storage role's probe (roles/storage/files/storage-probe.py), whose output is storage_plan's input: what it
reads of the role's record, mdadm.conf, crypttab, fstab, /proc/swaps and /sys, and that its output feeds the filter."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpuops.gpu_server.plugins.filter import storage_plan
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import load_script

PLAN = storage_plan.FilterModule().filters()['storage_plan']
N0 = '/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1'


@pytest.fixture
def probe(tmp_path, monkeypatch):
    module = load_script('storage_probe', 'roles', 'storage', 'files', 'storage-probe.py')
    monkeypatch.setattr(module, 'MDADM_CONFS', (str(tmp_path / 'mdadm.conf'), str(tmp_path / 'nothing')))
    monkeypatch.setattr(module, 'CRYPTTAB', str(tmp_path / 'crypttab'))
    monkeypatch.setattr(module, 'FSTAB', str(tmp_path / 'fstab'))
    monkeypatch.setattr(module, 'SWAPS', str(tmp_path / 'swaps'))
    monkeypatch.setattr(module, 'SYS_BLOCK', str(tmp_path / 'sys'))
    monkeypatch.setattr(module, 'settle', lambda: None)
    return module


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_volume_reads_the_record_and_the_uuids_the_role_wrote(probe, tmp_path):
    write(tmp_path / 'cold.json', json.dumps({'name': 'cold', 'devices': [N0], 'encryption': 'keyfile', 'mount_point': '/mnt/my cold'}))
    write(tmp_path / 'mdadm.conf', '# comment\nARRAY /dev/md/cold metadata=1.2 UUID=aa:bb:cc:dd\n'
                                   'ARRAY /dev/md/other metadata=1.2 UUID=ee:ff:00:11\n'
                                   'ARRAY /dev/md127 metadata=1.2\n  name=host:cold UUID=12:34:56:78\n')
    write(tmp_path / 'crypttab', 'cold UUID=luks-1 /etc/gpuops-storage/cold.key luks,discard,nofail\nother UUID=luks-2 none luks\n')
    write(tmp_path / 'fstab', 'UUID=fs-1 /mnt/my\\040cold ext4 defaults 0 0\nUUID=fs-2 /mnt/other xfs defaults 0 0\n')
    volume = probe.volume('cold', str(tmp_path / 'cold.json'))
    assert volume['recorded'] and volume['encryption'] == 'keyfile' and volume['mount_point'] == '/mnt/my cold'
    assert N0 in volume['devices']
    assert volume['md_uuids'] == ['aa:bb:cc:dd', '12:34:56:78'] and volume['luks_uuids'] == ['luks-1'] and volume['fs_uuids'] == ['fs-1']


@pytest.mark.parametrize('record', [None, 'not json', '["a list"]', '{"name": "another"}'])
def test_volume_without_a_usable_record(probe, tmp_path, record):
    if record is not None:
        write(tmp_path / 'cold.json', record)
    write(tmp_path / 'fstab', 'UUID=fs-1 /mnt/cold ext4 defaults 0 0\n')
    volume = probe.volume('cold', str(tmp_path / 'cold.json'))
    assert not volume['recorded'] and volume['devices'] == [] and volume['encryption'] is None and volume['fs_uuids'] == []


def test_swaps_and_holders(probe, tmp_path):
    write(tmp_path / 'swaps', 'Filename\tType\tSize\tUsed\tPriority\n/dev/nvme1n1p2 partition 100 0 -2\n/swap\\040file file 10 0 -3\n')
    assert probe.swaps() == ['/dev/nvme1n1p2', '/swap file']
    write(tmp_path / 'sys' / 'nvme1n1' / 'holders' / 'md127', '')
    write(tmp_path / 'sys' / 'nvme1n1' / 'nvme1n1p1' / 'partition', '1')
    write(tmp_path / 'sys' / 'nvme1n1' / 'nvme1n1p1' / 'holders' / 'dm-3', '')
    write(tmp_path / 'sys' / 'nvme1n1' / 'queue' / 'holders' / 'not-a-partition', '')
    assert probe.holders('/dev/nvme1n1') == ['/dev/md127', '/dev/dm-3']
    assert probe.holders('/dev/nvme9n1') == []


@pytest.mark.parametrize('help_text,column', [
    ('Available output columns:\n        NAME  device name\n  MOUNTPOINT  where the device is mounted\n', 'MOUNTPOINT'),
    ('Available output columns:\n  MOUNTPOINT  where the device is mounted\n MOUNTPOINTS  all locations\n', 'MOUNTPOINTS'),
])
def test_lsblk_columns_follow_util_linux(probe, monkeypatch, help_text, column):
    # MOUNTPOINTS since util-linux 2.37 (Debian 12, Ubuntu 22.04, EL 9); EL 8's 2.32 has only MOUNTPOINT.
    monkeypatch.setattr(probe, 'run', lambda *cmd: help_text)
    assert probe.lsblk_columns() == 'NAME,KNAME,TYPE,FSTYPE,LABEL,UUID,PTTYPE,' + column


def test_the_probes_output_is_the_filters_input(probe, tmp_path, monkeypatch, capsys):
    # An own single-disk xfs volume, mounted, recorded with its filesystem's UUID; the same disk also by kernel name.
    write(tmp_path / 'local.json', json.dumps({'name': 'local', 'devices': [N0], 'encryption': 'none', 'mount_point': '/mnt/local'}))
    write(tmp_path / 'fstab', 'UUID=0f0f-1 /mnt/local xfs defaults,nofail 0 0\n')
    write(tmp_path / 'swaps', 'Filename\tType\tSize\tUsed\tPriority\n')
    wipefs = {'signatures': [{'device': 'nvme1n1', 'offset': '0x0', 'type': 'xfs', 'uuid': '0f0f-1', 'label': 'local'}]}
    lsblk = {'blockdevices': [{'name': '/dev/nvme1n1', 'kname': '/dev/nvme1n1', 'type': 'disk', 'fstype': 'xfs', 'label': 'local',
                               'uuid': '0f0f-1', 'pttype': None, 'mountpoints': ['/mnt/local']}]}
    outputs = {'--help': 'MOUNTPOINTS  all locations\n', 'wipefs': json.dumps(wipefs), 'lsblk': json.dumps(lsblk)}
    monkeypatch.setattr(probe, 'run', lambda *cmd: outputs[cmd[1]] if cmd[1] == '--help' else outputs[cmd[0]])
    monkeypatch.setattr(probe.os.path, 'realpath', lambda path: '/dev/nvme1n1' if path in (N0, '/dev/nvme1n1') else path)
    monkeypatch.setattr(probe.os, 'stat', lambda path: os.stat_result((0o60600,) + (0,) * 9))
    monkeypatch.setattr('sys.argv', ['storage-probe.py', '--volume', 'local', '--record', str(tmp_path / 'local.json'), '--', N0, '/dev/nvme1n1'])
    probe.main()
    out = json.loads(capsys.readouterr().out)
    assert [d['isblk'] for d in out['disks']] == [True, True] and out['volume']['fs_uuids'] == ['0f0f-1']
    plan = PLAN(out['disks'], 'local', [], out['volume'])
    assert plan['action'] == 'keep' and plan['devices'] == [N0] and len(plan['notes']) == 1
    out['volume']['fs_uuids'] = ['another']
    assert PLAN(out['disks'], 'local', [], out['volume'])['action'] == 'refuse'
