# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import storage_plan

PLAN = storage_plan.FilterModule().filters()['storage_plan']
N0 = '/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1'
N1 = '/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS2'


def sig(kind, label=None):
    # The shape of util-linux 2.38's `wipefs --no-act --json` (no output at all when there is no signature).
    entry = {'device': 'nvme1n1', 'offset': '0x1000', 'type': kind, 'uuid': 'f00'}
    if label is not None:
        entry['label'] = label
    return entry


def probe(device, real, sigs=(), children=(), mountpoint=None):
    wipefs = json.dumps({'signatures': list(sigs)}) if sigs else ''
    disk = {'name': real, 'type': 'disk', 'mountpoint': mountpoint}
    if children:
        disk['children'] = [dict(c) for c in children]
    return {'device': device, 'real': real, 'wipefs': wipefs, 'lsblk': json.dumps({'blockdevices': [disk]})}


def test_blank_disks_are_built():
    plan = PLAN([probe(N0, '/dev/nvme1n1'), probe(N1, '/dev/nvme2n1')], 'gpuops-local')
    assert plan['action'] == 'create' and plan['problems'] == [] and plan['wipe'] == []
    assert [d['state'] for d in plan['disks']] == ['blank', 'blank']


def test_own_raid_members_are_kept():
    md = {'name': '/dev/md127', 'type': 'raid0', 'mountpoint': None,
          'children': [{'name': '/dev/mapper/gpuops-local', 'type': 'crypt', 'mountpoint': '/mnt/local'}]}
    probes = [probe(N0, '/dev/nvme1n1', [sig('linux_raid_member', 'ip-10-0-0-5:gpuops-local')], [md]),
              probe(N1, '/dev/nvme2n1', [sig('linux_raid_member', 'ip-10-0-0-5:gpuops-local')], [md])]
    plan = PLAN(probes, 'gpuops-local', [N0])
    assert plan['action'] == 'keep' and plan['wipe'] == []


@pytest.mark.parametrize('sigs', [[sig('xfs', 'gpuops-local')], [sig('crypto_LUKS', 'gpuops-local')], [sig('ext4', 'gpuops-local')]])
def test_own_single_disk_is_kept(sigs):
    assert PLAN([probe(N0, '/dev/nvme1n1', sigs)], 'gpuops-local')['action'] == 'keep'


def test_ephemeral_mapping_without_header_is_ours():
    child = {'name': '/dev/mapper/scratch', 'type': 'crypt', 'mountpoint': '/mnt/scratch'}
    assert PLAN([probe(N0, '/dev/nvme1n1', children=[child])], 'scratch')['action'] == 'keep'


@pytest.mark.parametrize('sigs,children,fragment', [
    ([sig('ext4', 'userdata')], (), 'ext4 "userdata"'),
    ([sig('xfs', 'gpuops-local')], (), 'xfs "gpuops-local"'),  # the name, but a RAID member was expected
    ([sig('gpt')], ({'name': '/dev/nvme1n1p1', 'type': 'part', 'mountpoint': None},), 'gpt'),
    ([sig('linux_raid_member', 'other:data')], (), 'linux_raid_member "other:data"'),
    ((), ({'name': '/dev/nvme1n1p1', 'type': 'part', 'mountpoint': None},), 'partitions or holders /dev/nvme1n1p1'),
])
def test_foreign_disk_is_refused_and_named(sigs, children, fragment):
    plan = PLAN([probe(N0, '/dev/nvme1n1', sigs, children), probe(N1, '/dev/nvme2n1')], 'gpuops-local')
    assert plan['action'] == 'refuse' and plan['wipe'] == []
    assert len(plan['problems']) == 1
    assert plan['problems'][0].startswith(N0) and fragment in plan['problems'][0]
    assert 'storage_wipe_devices' in plan['problems'][0]


@pytest.mark.parametrize('listed', [N0, '/dev/nvme1n1'])
def test_foreign_disk_listed_for_wiping_is_wiped(listed):
    plan = PLAN([probe(N0, '/dev/nvme1n1', [sig('ext4', 'old')]), probe(N1, '/dev/nvme2n1')], 'gpuops-local', [listed])
    assert plan['action'] == 'create' and plan['wipe'] == [N0]


def test_mounted_disk_is_never_wiped():
    plan = PLAN([probe(N0, '/dev/nvme1n1', [sig('ext4', 'old')], mountpoint='/srv')], 'gpuops-local', [N0])
    assert plan['action'] == 'refuse' and 'in use (/srv)' in plan['problems'][0]


def test_incomplete_volume_is_refused_unless_its_disks_may_be_wiped():
    probes = [probe(N0, '/dev/nvme1n1', [sig('linux_raid_member', 'h:gpuops-local')]), probe(N1, '/dev/nvme2n1')]
    plan = PLAN(probes, 'gpuops-local')
    assert plan['action'] == 'refuse' and 'incomplete' in plan['problems'][0]
    plan = PLAN(probes, 'gpuops-local', [N0])
    assert plan['action'] == 'create' and plan['wipe'] == [N0]


@pytest.mark.parametrize('probes,name,fragment', [
    ('x', 'gpuops-local', 'expected a list'), ([{'real': '/dev/x'}], 'gpuops-local', 'expected a list'),
    ([probe(N0, '/dev/nvme1n1')], '', 'volume name'),
    ([{'device': N0, 'wipefs': '{not json'}], 'gpuops-local', 'wipefs output for ' + N0),
])
def test_bad_input(probes, name, fragment):
    with pytest.raises(AnsibleFilterError, match=fragment):
        PLAN(probes, name)


def test_entries_as_lists():
    entry = probe(N0, '/dev/nvme1n1', [sig('ext4', 'userdata')])
    plan = PLAN([[entry['device'], entry['real'], entry['wipefs'], entry['lsblk']]], 'gpuops-local')
    assert plan['action'] == 'refuse' and plan['disks'][0]['real'] == '/dev/nvme1n1'
