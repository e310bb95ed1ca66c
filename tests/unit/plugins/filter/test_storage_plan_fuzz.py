# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Property test of storage_plan (issue 29): random lsblk/wipefs trees, holders, swap, duplicate paths and junk.

Whatever it is given, the filter raises its own AnsibleFilterError or returns a plan that never builds on, or wipes,
a disk that shows any sign of use, unless that disk is listed in storage_wipe_devices and is not mounted, swap or
held; and that keeps a volume only when nothing on its disks is of another kind than the volume leaves."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

from hypothesis import given, settings, strategies as st

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import storage_plan

PLAN = storage_plan.FilterModule().filters()['storage_plan']
NAME = 'gpuops-local'
DISKS = ['/dev/nvme1n1', '/dev/nvme2n1', '/dev/disk/by-id/nvme-A_1', '/dev/disk/by-id/nvme-A_2']
DEVICES = ['/dev/nvme1n1p1', '/dev/nvme1n1p2', '/dev/md127', '/dev/dm-0', '/dev/mapper/' + NAME, '/dev/mapper/other', '/dev/nvme1n1']
TYPES = ['disk', 'part', 'raid0', 'raid1', 'crypt', 'lvm', 'loop', 'md', '']
FSTYPES = ['xfs', 'ext4', 'crypto_LUKS', 'linux_raid_member', 'swap', 'zfs_member', 'LVM2_member', 'gpt', 'dos', 'PMBR', '']
LABELS = [NAME, 'h:' + NAME, 'other', 'h:other', '']
UUIDS = ['md-1', 'luks-1', 'fs-1', 'MD:1', 'x-2', '']
MOUNTS = ['/mnt/local', '/', '/home', '[SWAP]', '', None]
OWN = ('linux_raid_member', 'xfs', 'ext4', 'crypto_LUKS')

JUNK = st.one_of(st.integers(), st.booleans(), st.floats(allow_nan=False), st.lists(st.integers(), max_size=2),
                 st.dictionaries(st.sampled_from(['name', 'type', 'x']), st.integers(), max_size=2), st.just('{"not": '))


def inputs(junk):
    """Random probes (and storage_wipe_devices, and the volume's record); with junk, now and then a wrong type."""

    def maybe(strategy):
        return st.one_of(*([strategy] * 40 + [JUNK])) if junk else strategy

    def text(choices):
        return maybe(st.one_of(st.none(), st.sampled_from(choices)))

    def node(children):
        return st.fixed_dictionaries({'name': text(DEVICES + DISKS)}, optional={
            'kname': text(DEVICES + DISKS), 'type': text(TYPES), 'fstype': text(FSTYPES), 'label': text(LABELS),
            'uuid': text(UUIDS), 'pttype': text(['gpt', 'dos', '']), 'mountpoint': text(MOUNTS),
            'mountpoints': maybe(st.lists(st.sampled_from(MOUNTS), max_size=2)), 'children': maybe(children)})

    tree = st.recursive(node(st.just([])), lambda kids: node(st.lists(kids, max_size=3)), max_leaves=6)
    signature = maybe(st.fixed_dictionaries({'type': text(FSTYPES), 'label': text(LABELS), 'uuid': text(UUIDS)}))

    def printed(strategy):
        # What the probe prints (JSON text), or the object, or nothing at all.
        return st.one_of(strategy, strategy.map(json.dumps), st.sampled_from(['', None]), *([JUNK] if junk else []))

    paths = maybe(st.lists(st.sampled_from(DEVICES + DISKS), max_size=2))
    entry = st.fixed_dictionaries({'device': maybe(st.sampled_from(DISKS))}, optional={
        'real': text(DISKS[:2]), 'holders': paths, 'swaps': paths,
        'wipefs': printed(st.fixed_dictionaries({'signatures': maybe(st.lists(signature, max_size=2))})),
        'lsblk': printed(st.fixed_dictionaries({'blockdevices': maybe(st.lists(tree, min_size=1, max_size=2))}))})
    as_list = entry.map(lambda e: [e.get(k) for k in ('device', 'real', 'wipefs', 'lsblk')])
    probes = st.lists(maybe(st.one_of(entry, entry, as_list)), min_size=1, max_size=4)
    volume = st.one_of(st.none(), maybe(st.fixed_dictionaries({}, optional={
        'md_uuids': maybe(st.lists(st.sampled_from(UUIDS), max_size=2)), 'luks_uuids': st.lists(st.sampled_from(UUIDS), max_size=2),
        'fs_uuids': st.lists(st.sampled_from(UUIDS), max_size=2), 'devices': paths, 'encryption': text(['ephemeral', 'keyfile'])})))
    return st.tuples(maybe(probes) if junk else probes, st.one_of(st.none(), paths), volume)


def lsblk(name, kind, children=(), **columns):
    out = {'name': name, 'kname': name, 'type': kind, 'fstype': None, 'label': None, 'uuid': None, 'pttype': None, 'mountpoints': [None]}
    out.update(columns)
    if children:
        out['children'] = list(children)
    return out


MAPPER = '/dev/mapper/' + NAME
# The volume's shapes: (signature on each disk, the devices on it), per disk count.
SHAPES = {
    'raid-luks': lambda: ([{'type': 'linux_raid_member', 'label': 'h:' + NAME, 'uuid': 'md-1'}],
                          [lsblk('/dev/md127', 'raid0', fstype='crypto_LUKS', label=NAME, uuid='luks-1',
                                 children=[lsblk(MAPPER, 'crypt', fstype='xfs', label=NAME, uuid='fs-1', mountpoints=['/mnt/local'])])]),
    'raid-xfs': lambda: ([{'type': 'linux_raid_member', 'label': NAME, 'uuid': 'md-1'}],
                         [lsblk('/dev/md127', 'raid0', fstype='xfs', label=NAME, uuid='fs-1', mountpoints=['/mnt/local'])]),
    'luks': lambda: ([{'type': 'crypto_LUKS', 'label': NAME, 'uuid': 'luks-1'}] * 2,
                     [lsblk(MAPPER, 'crypt', fstype='ext4', label=NAME, uuid='fs-1', mountpoints=['/mnt/local'])]),
    'xfs': lambda: ([{'type': 'xfs', 'label': NAME, 'uuid': 'fs-1'}], []),
    'ephemeral': lambda: ([], [lsblk(MAPPER, 'crypt', fstype='ext4', uuid='new', mountpoints=['/mnt/local'])]),
    'blank': lambda: ([], []),
}


def mutate(kind, sigs, root):
    """One sign of something else on the volume's disk."""
    kids = root.setdefault('children', [])
    if kind == 'partition':
        kids.append(lsblk(root['name'] + 'p1', 'part', fstype='ext4', mountpoints=['/home']))
    elif kind == 'pttype':
        root['pttype'] = 'gpt'
    elif kind == 'gpt':
        sigs.append({'type': 'gpt', 'label': None, 'uuid': None})
    elif kind == 'swap-signature':
        sigs.append({'type': 'swap', 'label': None, 'uuid': 'x-2'})
    elif kind == 'mount':
        root['mountpoints'] = ['/srv']
    elif kind == 'foreign-child':
        kids.append(lsblk('/dev/mapper/other', 'crypt', fstype='ext4'))
    elif kind == 'grandchild':
        for kid in kids:
            kid.setdefault('children', []).append(lsblk('/dev/dm-9', 'lvm', fstype='xfs', mountpoints=['/var']))
    elif kind == 'label':
        for sig in sigs:
            sig['label'] = 'other'
    elif kind == 'uuid':
        for sig in sigs:
            sig['uuid'] = 'x-2'


MUTATIONS = ['partition', 'pttype', 'gpt', 'swap-signature', 'mount', 'foreign-child', 'grandchild', 'label', 'uuid',
             'holder', 'active-swap']


@st.composite
def shaped(draw):
    """The volume's disks, each perhaps with something else on it, perhaps one listed twice."""
    shape = draw(st.sampled_from(sorted(SHAPES)))
    count = draw(st.integers(1, 2))
    probes = []
    for n in range(count):
        real = '/dev/nvme%dn1' % (n + 1)
        sigs, kids = SHAPES[shape]()
        sigs = [dict(sig) for sig in sigs]
        root = lsblk(real, 'disk', children=kids, fstype=sigs[0]['type'] if sigs else None)
        entry = {'device': DISKS[2 + n], 'real': real, 'holders': [kid['name'] for kid in kids if kid['type'] != 'part'], 'swaps': []}
        for kind in draw(st.lists(st.sampled_from(MUTATIONS), max_size=2)):
            if kind == 'holder':
                entry['holders'].append('/dev/dm-7')
            elif kind == 'active-swap':
                entry['swaps'].append(real)
            else:
                mutate(kind, sigs, root)
        if not root.get('children'):
            root.pop('children', None)
        entry['wipefs'] = json.dumps({'signatures': sigs}) if sigs else ''
        entry['lsblk'] = json.dumps({'blockdevices': [root]})
        probes.append(entry)
        if draw(st.integers(0, 4)) == 0:
            probes.append(dict(entry, device=real))
    recorded = {'md_uuids': ['MD:1'], 'luks_uuids': ['luks-1'], 'fs_uuids': ['fs-1'], 'devices': [p['device'] for p in probes],
                'encryption': 'ephemeral' if shape == 'ephemeral' else 'keyfile'}
    record = draw(st.sampled_from([None, {}, recorded]))
    wipe = draw(st.lists(st.sampled_from(DISKS), max_size=3))
    return probes, wipe, record


def parse(value):
    value = json.loads(value) if isinstance(value, str) and value.strip() else value
    return value if isinstance(value, dict) else {}


def walk(roots):
    """Every lsblk node (a valid tree: the filter returned a plan), with whether it is a disk at the top."""
    todo = [(r, True) for r in roots]
    while todo:
        raw, top = todo.pop()
        yield raw, top
        todo.extend((kid, False) for kid in raw.get('children') or [])


def evidence(entry):
    """(signs of use, in use now, what keeps it from being the volume's own) of one entry, read independently."""
    sigs = parse(entry.get('wipefs')).get('signatures') or []
    nodes = list(walk(parse(entry.get('lsblk')).get('blockdevices') or []))
    swaps = set(s for s in entry.get('swaps') or [] if s)
    mounts = [m for raw, _top in nodes for m in (raw.get('mountpoints') or []) + [raw.get('mountpoint')] if m]
    swap = [raw for raw, _top in nodes if set([raw.get('name'), raw.get('kname')]) & swaps]
    held = [raw for raw, top in nodes if not top and raw.get('type') != 'part']
    signs = bool(sigs or mounts or swap or entry.get('holders') or any(not top for _raw, top in nodes)
                 or any(raw.get(k) for raw, _top in nodes for k in ('fstype', 'pttype', 'uuid', 'label')))
    active = bool(mounts or swap or entry.get('holders') or held)
    alien = bool(swap or any(raw.get('pttype') or raw.get('fstype') == 'swap' or raw.get('type') == 'part' for raw, _top in nodes)
                 or any(s.get('type') not in OWN or not (s.get('label') or '').split(':')[-1] == NAME for s in sigs))
    return signs, active, alien


@settings(max_examples=300, deadline=None, database=None)
@given(case=st.one_of(inputs(junk=False), shaped(), shaped(), inputs(junk=True)))
def test_the_plan_never_builds_on_a_disk_in_use(case):
    probes, wipe, volume = case
    try:
        plan = PLAN(probes, NAME, wipe, volume)
    except AnsibleFilterError:
        return
    listed = set(wipe or [])
    entries = [dict(zip(('device', 'real', 'wipefs', 'lsblk'), p)) if isinstance(p, list) else p for p in probes]
    disks = {}
    for entry in entries:
        disks.setdefault(entry.get('real') or entry['device'], []).append(entry)
    assert plan['action'] in ('create', 'keep', 'refuse')
    assert len(plan['disks']) == len(disks) and len(set(plan['devices'])) == len(disks)
    for group in disks.values():
        device = group[0]['device']
        signs, active, alien = [any(e) for e in zip(*[evidence(entry) for entry in group])]
        may_wipe = bool(listed & set(n for entry in group for n in (entry['device'], entry.get('real')))) and not active
        if signs and plan['action'] == 'create':
            assert may_wipe, (device, plan)
        if device in plan['wipe']:
            assert may_wipe, (device, plan)
        if plan['action'] == 'keep':
            assert signs and not alien, (device, plan)
    if plan['action'] != 'create':
        assert plan['wipe'] == []
