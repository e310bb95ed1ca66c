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


def probe(device, real, sigs=(), children=(), mountpoint=None, holders=None, swaps=None, **disk_columns):
    # The probe's entry: lsblk --json --paths --output NAME,KNAME,TYPE,FSTYPE,LABEL,UUID,PTTYPE,MOUNTPOINTS (util-linux
    # 2.38), the holders in /sys and the active swap; the older tests give only NAME,TYPE,MOUNTPOINT.
    wipefs = json.dumps({'signatures': list(sigs)}) if sigs else ''
    disk = {'name': real, 'type': 'disk', 'mountpoint': mountpoint}
    disk.update(disk_columns)
    if children:
        disk['children'] = [dict(c) for c in children]
    entry = {'device': device, 'real': real, 'wipefs': wipefs, 'lsblk': json.dumps({'blockdevices': [disk]})}
    if holders is not None:
        entry['holders'] = holders
    if swaps is not None:
        entry['swaps'] = swaps
    return entry


def node(name, kind, children=(), mountpoints=(None,), **columns):
    out = {'name': name, 'kname': columns.pop('kname', name), 'type': kind, 'fstype': None, 'label': None, 'uuid': None,
           'pttype': None, 'mountpoints': list(mountpoints)}
    out.update(columns)
    if children:
        out['children'] = list(children)
    return out


def test_blank_disks_are_built():
    plan = PLAN([probe(N0, '/dev/nvme1n1'), probe(N1, '/dev/nvme2n1')], 'gpuops-local')
    assert plan['action'] == 'create' and plan['problems'] == [] and plan['wipe'] == []
    assert [d['state'] for d in plan['disks']] == ['blank', 'blank']


def test_own_raid_members_are_kept():
    # The md array holds the volume's LUKS header, its mapping the volume's filesystem (both named gpuops-local).
    md = node('/dev/md127', 'raid0', fstype='crypto_LUKS', label='gpuops-local', uuid='1111',
              children=[node('/dev/mapper/gpuops-local', 'crypt', kname='/dev/dm-0', fstype='xfs', label='gpuops-local',
                             uuid='2222', mountpoints=['/mnt/local'])])
    probes = [probe(N0, '/dev/nvme1n1', [sig('linux_raid_member', 'ip-10-0-0-5:gpuops-local')], [md]),
              probe(N1, '/dev/nvme2n1', [sig('linux_raid_member', 'ip-10-0-0-5:gpuops-local')], [md])]
    plan = PLAN(probes, 'gpuops-local', [N0])
    assert plan['action'] == 'keep' and plan['wipe'] == []


@pytest.mark.parametrize('sigs', [[sig('xfs', 'gpuops-local')], [sig('crypto_LUKS', 'gpuops-local')], [sig('ext4', 'gpuops-local')]])
def test_own_single_disk_is_kept(sigs):
    assert PLAN([probe(N0, '/dev/nvme1n1', sigs)], 'gpuops-local')['action'] == 'keep'


def test_ephemeral_mapping_without_header_is_ours_when_the_role_recorded_it():
    # Plain dm-crypt leaves no signature: only the role's record says that the mapping on this disk is the volume.
    child = node('/dev/mapper/scratch', 'crypt', kname='/dev/dm-1', fstype='ext4', uuid='new-at-each-boot', mountpoints=['/mnt/scratch'])
    record = {'encryption': 'ephemeral', 'devices': [N0, '/dev/nvme1n1'], 'mount_point': '/mnt/scratch'}
    assert PLAN([probe(N0, '/dev/nvme1n1', children=[child])], 'scratch', [], record)['action'] == 'keep'
    # Without the record the name of the mapping proves nothing (issue 29).
    assert PLAN([probe(N0, '/dev/nvme1n1', children=[child])], 'scratch')['action'] == 'refuse'


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


# Issue 29: the filter fails closed. Each case below was planned wrongly before (blank and built on, planned twice,
# kept as the volume's own, or an AttributeError); the comments say how.

DISK = '/dev/nvme1n1'
PART = node('/dev/nvme1n1p1', 'part', fstype='ext4', uuid='aaaa')

# A sign of use without any wipefs signature: each was "blank", planned for create (and built on).
SIGNS_OF_USE = [
    pytest.param({'mountpoint': '/srv'}, 'mounted on /srv', id='mounted-without-signature'),
    pytest.param({'mountpoints': ['/var/lib/docker', '/']}, 'mounted on /var/lib/docker, /', id='mountpoints'),
    pytest.param({'mountpoint': '[SWAP]', 'swaps': [DISK]}, 'swap on ' + DISK, id='active-swap'),
    pytest.param({'swaps': [DISK]}, 'swap on ' + DISK, id='in-proc-swaps'),
    pytest.param({'holders': ['/dev/dm-3']}, 'holders /dev/dm-3', id='holder-in-sys-only'),
    pytest.param({'pttype': 'gpt'}, 'a gpt partition table', id='pttype-only-in-lsblk'),
    pytest.param({'fstype': 'zfs_member'}, 'a zfs_member signature that wipefs did not show', id='fstype-only-in-lsblk'),
]


@pytest.mark.parametrize('columns,fragment', SIGNS_OF_USE)
def test_any_sign_of_use_makes_a_disk_foreign(columns, fragment):
    plan = PLAN([probe(N0, DISK, **columns), probe(N1, '/dev/nvme2n1')], 'gpuops-local')
    assert plan['action'] == 'refuse' and plan['wipe'] == []
    assert plan['disks'][0]['state'] == 'foreign'
    assert plan['problems'][0].startswith(N0 + ' holds ' + fragment) and 'storage_wipe_devices' in plan['problems'][0]


ACTIVE = [
    pytest.param(probe(N0, DISK, mountpoint='/srv'), '/srv', id='mounted-without-signature'),
    pytest.param(probe(N0, DISK, [sig('gpt'), sig('PMBR')], [dict(PART, mountpoints=['/home'])]), '/home', id='partition-mounted'),
    pytest.param(probe(N0, DISK, [sig('gpt')], [node('/dev/nvme1n1p2', 'part', fstype='swap')], swaps=['/dev/nvme1n1p2']),
                 'swap on /dev/nvme1n1p2', id='partition-is-active-swap'),
    pytest.param(probe(N0, DISK, [sig('swap')], mountpoint='[SWAP]', swaps=[DISK]), 'swap on ' + DISK, id='active-swap'),
    pytest.param(probe(N0, DISK, [sig('linux_raid_member', 'other:data')], [node('/dev/md0', 'raid1')], holders=['/dev/md0']),
                 '/dev/md0', id='md-holder'),
    pytest.param(probe(N0, DISK, holders=['/dev/dm-3']), '/dev/dm-3', id='holder-in-sys-only'),
]


@pytest.mark.parametrize('entry,fragment', ACTIVE)
def test_a_disk_in_use_is_never_wiped_even_when_listed(entry, fragment):
    plan = PLAN([entry], 'gpuops-local', [DISK])
    assert plan['action'] == 'refuse' and plan['wipe'] == []
    assert '%s is in storage_wipe_devices but in use (%s): unmount and stop it first.' % (N0, fragment) in plan['problems']


def test_an_idle_partitioned_disk_listed_for_wiping_is_wiped():
    # Partitions that nothing mounts or holds are data the user allowed to destroy.
    plan = PLAN([probe(N0, DISK, [sig('gpt'), sig('PMBR')], [PART], pttype='gpt')], 'gpuops-local', [N0])
    assert plan['action'] == 'create' and plan['wipe'] == [N0]


@pytest.mark.parametrize('second', [probe(DISK, DISK), probe(N0, DISK), probe('/dev/disk/by-path/pci-0000:00:1f.0-nvme-1', DISK)])
def test_one_disk_under_two_names_is_planned_once(second):
    # Before: two disks, a RAID0 "array" over one disk planned twice.
    plan = PLAN([probe(N0, DISK), second], 'gpuops-local')
    assert plan['action'] == 'create' and len(plan['disks']) == 1 and plan['devices'] == [N0]
    assert plan['disks'][0]['aliases'] == ([] if second['device'] == N0 else [second['device']])
    if second['device'] != N0:
        assert plan['notes'] == ['%s and %s are one disk (%s): it is used once, as %s.' % (N0, second['device'], DISK, N0)]


def test_one_disk_under_two_names_is_wiped_once_and_judged_alone():
    # One disk with the volume's xfs is one whole volume (not two RAID members): kept, and once.
    own = [sig('xfs', 'gpuops-local')]
    plan = PLAN([probe(N0, DISK, own), probe(DISK, DISK, own)], 'gpuops-local')
    assert plan['action'] == 'keep' and plan['devices'] == [N0]
    plan = PLAN([probe(N0, DISK, [sig('ext4', 'old')]), probe(DISK, DISK, [sig('ext4', 'old')])], 'gpuops-local', [DISK])
    assert plan['action'] == 'create' and plan['wipe'] == [N0]


LUKS_MD = node('/dev/md127', 'raid0', fstype='crypto_LUKS', label='gpuops-local', uuid='luks-0001',
               children=[node('/dev/mapper/gpuops-local', 'crypt', kname='/dev/dm-0', fstype='xfs', label='gpuops-local', uuid='fs-0001',
                              mountpoints=['/mnt/local'])])
MEMBER = sig('linux_raid_member', 'ip-10-0-0-5:gpuops-local')
MAPPER = node('/dev/mapper/gpuops-local', 'crypt', kname='/dev/dm-0', mountpoints=['/mnt/local'])
RECORD = {'devices': [N0, N1], 'encryption': 'command', 'mount_point': '/mnt/local',
          'md_uuids': ['md-0001'], 'luks_uuids': ['LUKS-0001'], 'fs_uuids': ['fs-0001']}


def raid(sig0, md0, sig1=None, md1=None, **kw):
    return [probe(N0, DISK, [sig0], [md0], holders=['/dev/md127'], **kw),
            probe(N1, '/dev/nvme2n1', [sig1 or sig0], [md1 or md0], holders=['/dev/md127'])]


def with_uuid(entry, uuid):
    return dict(entry, uuid=uuid)


# Each was kept as the volume's own before: a /dev/mapper/<name> child, or the volume's label, was enough.
NOT_OURS = [
    pytest.param([probe(N0, DISK, [sig('gpt'), sig('PMBR')], [dict(PART, mountpoints=['/home']), MAPPER], pttype='gpt')], None,
                 'gpt, PMBR', id='gpt-disk-with-home-and-a-mapping-of-the-name'),
    pytest.param([probe(N0, DISK, children=[MAPPER])], None, 'partitions or holders /dev/mapper/gpuops-local', id='mapping-not-recorded'),
    pytest.param([probe(N0, DISK, children=[MAPPER])], dict(RECORD, encryption='ephemeral', devices=['/dev/nvme9n1']),
                 '/dev/mapper/gpuops-local', id='mapping-recorded-on-another-disk'),
    pytest.param([probe(N0, DISK, children=[dict(MAPPER, fstype='xfs', children=[node('/dev/mapper/vg-lv', 'lvm')])])],
                 dict(RECORD, encryption='ephemeral'), '/dev/mapper/vg-lv', id='device-on-the-mapping'),
    pytest.param(raid(with_uuid(MEMBER, 'md-0001'), dict(LUKS_MD, children=[node('/dev/mapper/gpuops-local', 'crypt', fstype='ext4', label='data')])),
                 None, 'linux_raid_member', id='array-with-another-filesystem'),
    pytest.param(raid(with_uuid(MEMBER, 'md-0002'), LUKS_MD), RECORD, 'linux_raid_member', id='members-of-another-array-of-the-name'),
    pytest.param(raid(with_uuid(MEMBER, 'md-0001'), with_uuid(LUKS_MD, 'luks-0002')), RECORD, 'linux_raid_member',
                 id='array-with-another-luks-header'),
    pytest.param(raid(with_uuid(MEMBER, 'md-0001'), LUKS_MD, with_uuid(MEMBER, 'md-0003'), LUKS_MD), None, 'linux_raid_member',
                 id='members-of-two-arrays-of-the-name'),
    pytest.param(raid(MEMBER, dict(LUKS_MD, children=[MAPPER, node('/dev/mapper/other', 'crypt')])), None, '/dev/mapper/other',
                 id='a-second-mapping-on-the-array'),
    pytest.param([probe(N0, DISK, [with_uuid(sig('xfs', 'gpuops-local'), 'fs-0002')])], RECORD, 'xfs "gpuops-local"',
                 id='filesystem-of-the-name-but-another-uuid'),
    pytest.param([probe(N0, DISK, [sig('crypto_LUKS', 'gpuops-local')], [MAPPER, PART])], None, '/dev/nvme1n1p1',
                 id='luks-header-and-a-partition'),
    pytest.param([probe(N0, DISK, [sig('crypto_LUKS', 'gpuops-local'), sig('swap')])], None, 'crypto_LUKS "gpuops-local", swap',
                 id='luks-header-and-swap'),
    pytest.param([probe(N0, DISK, [sig('xfs', 'gpuops-local')], holders=['/dev/dm-7'])], None, 'holders /dev/dm-7',
                 id='own-filesystem-held-by-something-lsblk-does-not-show'),
]


@pytest.mark.parametrize('probes,record,fragment', NOT_OURS)
def test_only_what_is_all_the_volumes_own_is_kept(probes, record, fragment):
    plan = PLAN(probes, 'gpuops-local', [], *([record] if record else []))
    assert plan['action'] == 'refuse' and plan['wipe'] == []
    assert 'foreign' in [d['state'] for d in plan['disks']]
    assert any(p.startswith(N0 + ' holds ') and fragment in p for p in plan['problems']), plan['problems']


OURS = [
    pytest.param(raid(with_uuid(MEMBER, 'md:0001'), LUKS_MD), RECORD, id='raid-luks-xfs-by-recorded-uuids'),
    pytest.param(raid(MEMBER, LUKS_MD), None, id='raid-luks-xfs-by-name-without-a-record'),
    pytest.param(raid(MEMBER, LUKS_MD), dict(RECORD, md_uuids=[], fs_uuids=[]), id='only-some-uuids-recorded'),
    pytest.param([probe(N0, DISK, [MEMBER]), probe(N1, '/dev/nvme2n1', [MEMBER])], None, id='array-not-assembled'),
    pytest.param([probe(N0, DISK, [with_uuid(sig('crypto_LUKS', 'gpuops-local'), 'luks-0001')] * 2,
                        [dict(MAPPER, fstype='xfs', label='gpuops-local', uuid='fs-0001')], holders=['/dev/dm-0'])], RECORD,
                 id='luks2-two-headers-and-mapping'),
    pytest.param([probe(N0, DISK, [with_uuid(sig('xfs', 'gpuops-local'), 'FS-0001')], mountpoints=['/mnt/local'])], RECORD,
                 id='filesystem-on-the-disk'),
    pytest.param([probe(N0, DISK, children=[dict(MAPPER, fstype='ext4')], holders=['/dev/dm-0'])],
                 dict(RECORD, encryption='ephemeral', devices=[DISK]), id='ephemeral-recorded-by-kernel-name'),
]


@pytest.mark.parametrize('probes,record', OURS)
def test_the_volumes_own_disks_are_kept_even_when_listed_for_wiping(probes, record):
    plan = PLAN(probes, 'gpuops-local', [N0, N1, DISK], *([record] if record else []))
    assert plan['action'] == 'keep' and plan['problems'] == [] and plan['wipe'] == []


BAD = [
    pytest.param([{'device': N0, 'wipefs': '{"signatures": ["xfs"]}'}], N0 + ": the wipefs output's signatures\\[0\\] must be an object",
                 id='signature-not-a-mapping'),
    pytest.param([{'device': N0, 'wipefs': '["xfs"]'}], 'the wipefs output for ' + N0 + ' must be a JSON object', id='wipefs-a-list'),
    pytest.param([{'device': N0, 'wipefs': '"xfs"'}], 'the wipefs output for ' + N0 + ' must be a JSON object', id='wipefs-a-string'),
    pytest.param([{'device': N0, 'wipefs': {'signatures': 'xfs'}}], N0 + ": the wipefs output's \"signatures\" must be a list",
                 id='signatures-not-a-list'),
    pytest.param([{'device': N0, 'wipefs': {'signatures': [{'type': ['xfs']}]}}], N0 + r': wipefs signatures\[0\].type must be a string',
                 id='signature-type-not-text'),
    pytest.param([{'device': N0, 'lsblk': '{"blockdevices": ["nvme1n1"]}'}], N0 + ': lsblk device #0 must be an object',
                 id='lsblk-device-not-a-mapping'),
    pytest.param([{'device': N0, 'lsblk': '{"blockdevices": {"name": "nvme1n1"}}'}], N0 + ": the lsblk output's \"blockdevices\" must be a list",
                 id='blockdevices-not-a-list'),
    pytest.param([{'device': N0, 'lsblk': {'blockdevices': [{'name': DISK, 'children': DISK + 'p1'}]}}],
                 N0 + ': lsblk device ' + DISK + ': children must be a list', id='children-a-string'),
    pytest.param([{'device': N0, 'lsblk': {'blockdevices': [{'name': DISK, 'children': [7]}]}}], N0 + ': lsblk device #1 must be an object',
                 id='child-not-a-mapping'),
    pytest.param([{'device': N0, 'lsblk': {'blockdevices': [{'name': DISK, 'mountpoints': '/srv'}]}}],
                 N0 + ': lsblk device ' + DISK + ': mountpoints must be a list', id='mountpoints-a-string'),
    pytest.param([{'device': N0, 'lsblk': {'blockdevices': [{'name': 5}]}}], N0 + ': lsblk device #0: name must be a string', id='name-a-number'),
    pytest.param([{'device': N0, 'lsblk': '[' * 100000}], 'the lsblk output for ' + N0 + ' is not JSON', id='nested-too-deep'),
    pytest.param([{'device': N0, 'lsblk': '7'}], 'the lsblk output for ' + N0 + ' must be a JSON object', id='lsblk-a-number'),
    pytest.param([{'device': N0, 'holders': '/dev/md0'}], N0 + ': holders must be a list', id='holders-a-string'),
    pytest.param([{'device': N0, 'swaps': [None, 3]}], N0 + r': swaps\[1\] must be a string', id='swap-a-number'),
    pytest.param([{'device': N0, 'real': ['/dev/nvme1n1']}], N0 + ': real must be a string', id='real-a-list'),
    pytest.param([{'device': N0}, 'nvme1n1'], 'entry #1 is', id='entry-a-string'),
    pytest.param([{'device': 7}], 'entry #0 has no device', id='device-a-number'),
    pytest.param({'device': N0}, 'expected a list', id='a-mapping-for-the-list'),
]


@pytest.mark.parametrize('probes,message', BAD)
def test_bad_input_is_the_filters_own_error(probes, message):
    with pytest.raises(AnsibleFilterError, match=message):
        PLAN(probes, 'gpuops-local')


@pytest.mark.parametrize('wipe,volume,message', [
    ('/dev/nvme1n1', None, 'storage_wipe_devices: the list must be a list of strings'),
    ([None], None, r'storage_wipe_devices: expected device paths, got \[None\]'),
    ([7], None, r'storage_wipe_devices: the list\[0\] must be a string'),
    ([], 'ephemeral', "the volume's record"),
    ([], {'devices': '/dev/nvme1n1'}, "the volume's record: devices must be a list"),
    ([], {'encryption': ['keyfile']}, "the volume's record: encryption must be a string"),
])
def test_bad_arguments_are_the_filters_own_error(wipe, volume, message):
    with pytest.raises(AnsibleFilterError, match=message):
        PLAN([probe(N0, DISK)], 'gpuops-local', wipe, volume)


def test_a_tree_that_is_not_a_tree_is_refused():
    disk = {'name': DISK, 'type': 'disk'}
    disk['children'] = [disk]
    with pytest.raises(AnsibleFilterError, match='appears twice'):
        PLAN([{'device': N0, 'lsblk': {'blockdevices': [disk]}}], 'gpuops-local')
