# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter storage_plan (documented in storage_plan.yml).

It fails closed: a disk is blank only when nothing at all shows that it is used, and the volume's own only when
every signature and every device on it is the volume's (by UUID where the role recorded one, never by the name of a
/dev/mapper device alone). Anything else is foreign, and is only wiped when listed and not in use.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re

from ansible.errors import AnsibleFilterError
from ansible.module_utils.six import string_types

# What this role's own volume leaves on a disk: an md member (several disks), or on a single disk LUKS2 or the
# filesystem itself, each carrying the volume's name; with storage_encryption ephemeral, no signature at all.
_FS_TYPES = ('xfs', 'ext4')
_SINGLE_TYPES = _FS_TYPES + ('crypto_LUKS',)
_MD_MEMBER = 'linux_raid_member'
_FIELDS = ('device', 'real', 'wipefs', 'lsblk')
# lsblk's columns (lower case in its JSON) that the filter reads, all strings or null.
_NODE_TEXT = ('name', 'kname', 'type', 'mountpoint', 'fstype', 'label', 'uuid', 'pttype')
_UUID_LISTS = ('md_uuids', 'luks_uuids', 'fs_uuids')


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + '...'


def _fail(message, *args):
    raise AnsibleFilterError('storage_plan: ' + (message % args if args else message))


def _text(value, device, field):
    """A string field ('' for null or missing)."""
    if value is None:
        return ''
    if not isinstance(value, string_types):
        _fail('%s: %s must be a string, got %s', device, field, _short(value))
    return value


def _texts(value, device, field):
    """A list of strings (empty for null or missing)."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        _fail('%s: %s must be a list of strings, got %s', device, field, _short(value))
    return [_text(v, device, '%s[%d]' % (field, i)) for i, v in enumerate(value)]


def _json(text, what, device):
    """The JSON object a command printed ({} when it printed nothing)."""
    if text is None or (isinstance(text, string_types) and not text.strip()):
        return {}
    if isinstance(text, string_types):
        try:
            text = json.loads(text)
        except (ValueError, RuntimeError) as exc:  # RuntimeError: RecursionError, nesting too deep
            _fail('the %s output for %s is not JSON: %s', what, device, exc)
    if not isinstance(text, dict):
        _fail('the %s output for %s must be a JSON object, got %s', what, device, _short(text))
    return text


def _signatures(probe, device):
    sigs = _json(probe.get('wipefs'), 'wipefs', device).get('signatures')
    if sigs is None:
        return []
    if not isinstance(sigs, list):
        _fail('%s: the wipefs output\'s "signatures" must be a list, got %s', device, _short(sigs))
    out = []
    for i, sig in enumerate(sigs):
        if not isinstance(sig, dict):
            _fail('%s: the wipefs output\'s signatures[%d] must be an object, got %s', device, i, _short(sig))
        out.append(dict((k, _text(sig.get(k), device, 'wipefs signatures[%d].%s' % (i, k))) for k in ('type', 'label', 'uuid')))
    return out


def _tree(probe, device):
    """lsblk's devices as checked nodes, and every node depth first; each node's children under 'children'."""
    roots = _json(probe.get('lsblk'), 'lsblk', device).get('blockdevices')
    if roots is None:
        return [], []
    if not isinstance(roots, list):
        _fail('%s: the lsblk output\'s "blockdevices" must be a list, got %s', device, _short(roots))
    out, nodes, seen = [], [], set()
    todo = [(raw, None) for raw in reversed(roots)]
    while todo:
        raw, parent = todo.pop()
        where = 'lsblk device #%d' % len(nodes)
        if isinstance(raw, dict) and isinstance(raw.get('name'), string_types) and raw.get('name'):
            where = 'lsblk device %s' % raw['name']
        if not isinstance(raw, dict):
            _fail('%s: %s must be an object, got %s', device, where, _short(raw))
        if id(raw) in seen:
            _fail('%s: %s appears twice in the tree', device, where)
        seen.add(id(raw))
        node = dict((f, _text(raw.get(f), device, '%s: %s' % (where, f))) for f in _NODE_TEXT)
        node['mounts'] = [m for m in _texts(raw.get('mountpoints'), device, where + ': mountpoints') if m]
        if node['mountpoint'] and node['mountpoint'] not in node['mounts']:
            node['mounts'].append(node['mountpoint'])
        node['root'] = parent is None
        node['children'] = []
        kids = raw.get('children')
        if kids is None:
            kids = []
        if not isinstance(kids, list):
            _fail('%s: %s: children must be a list, got %s', device, where, _short(kids))
        (out if parent is None else parent['children']).append(node)
        nodes.append(node)
        todo.extend((kid, node) for kid in reversed(kids))
    return out, nodes


def _label_is(label, name, several):
    return label == name or (several and label.endswith(':' + name))


def _uuid(value):
    return re.sub('[^0-9a-f]', '', value.lower())


def _known(uuid, known):
    """Whether a UUID is the volume's, where the role recorded it (any UUID where it did not)."""
    return not known or _uuid(uuid) in known


class _Volume(object):
    """What the role knows of its volume, and whether a disk's signatures and devices are all that volume's."""

    def __init__(self, name, volume):
        self.name, self.mapper = name, '/dev/mapper/' + name
        if volume is None:
            volume = {}
        if not isinstance(volume, dict):
            _fail('expected the volume\'s record as a dict (or none), got %s', _short(volume))
        what = 'the volume\'s record'
        uuids = dict((key, set(_uuid(u) for u in _texts(volume.get(key), what, key)) - set([''])) for key in _UUID_LISTS)
        self.md_uuids, self.luks_uuids, self.fs_uuids = uuids['md_uuids'], uuids['luks_uuids'], uuids['fs_uuids']
        self.devices = set(_texts(volume.get('devices'), what, 'devices'))
        self.encryption = _text(volume.get('encryption'), what, 'encryption')
        _text(volume.get('mount_point'), what, 'mount_point')

    def why_not(self, disk, several):
        """None when everything on the disk is this volume's, else why not (a few words)."""
        if any(n['pttype'] for n in disk['nodes']) or any(s['type'] in ('gpt', 'dos', 'PMBR') for s in disk['sigs']):
            return 'it has a partition table'
        if disk['swap'] or any(n['fstype'] == 'swap' for n in disk['nodes']):
            return 'it holds swap'
        if disk['stray']:
            return 'it is held by a device that lsblk does not show'
        if any(n['type'] == 'part' for n in disk['nodes']):
            return 'it has partitions'
        if len(disk['roots']) != 1:
            return 'lsblk does not show it as one disk'
        root, sigs = disk['roots'][0], disk['sigs']
        kinds = set(s['type'] for s in sigs)
        if several:
            if kinds != set([_MD_MEMBER]) or not all(_label_is(s['label'], self.name, True) for s in sigs):
                return 'no member of an md array named %s' % self.name
            if not all(_known(s['uuid'], self.md_uuids) for s in sigs):
                return 'a member of another array %s than the one the role recorded' % self.name
            if root['mounts'] or root['fstype'] not in ('', _MD_MEMBER):
                return 'something else on the disk too'
            return self._below(root, disk, lambda node: self._md(node, disk))
        if len(kinds) > 1:
            return 'several kinds of signature'
        if kinds:
            kind = kinds.pop()
            if kind not in _SINGLE_TYPES or not all(s['label'] == self.name for s in sigs):
                return 'no filesystem or LUKS header named %s' % self.name
            if root['fstype'] not in ('', kind):
                return 'something else on the disk too'
            if kind == 'crypto_LUKS':
                if not all(_known(s['uuid'], self.luks_uuids) for s in sigs):
                    return 'another LUKS volume %s than the one the role recorded' % self.name
                if root['mounts']:
                    return 'a mounted LUKS header'
                return self._below(root, disk, lambda node: self._mapping(node, disk, True))
            if not all(_known(s['uuid'], self.fs_uuids) for s in sigs):
                return 'another filesystem %s than the one the role recorded' % self.name
            return self._below(root, disk, lambda _node: 'a device on the filesystem')
        # No signature: only the ephemeral volume (plain dm-crypt) leaves none, and only the record says whose it is.
        if root['fstype'] or root['uuid'] or root['label'] or root['mounts']:
            return 'something that wipefs does not show'
        return self._below(root, disk, lambda node: self._mapping(node, disk, False))

    @staticmethod
    def _below(node, disk, check):
        for child in node['children']:
            why = check(child)
            if why:
                return why
        return None

    def _ephemeral(self, disk):
        return self.encryption == 'ephemeral' and bool(disk['names'] & self.devices)

    def _md(self, node, disk):
        """The array assembled from the volume's members: LUKS, the filesystem, or nothing (ephemeral)."""
        if not node['type'].startswith('raid') or node['mounts'] and node['fstype'] not in _FS_TYPES:
            return 'a device that is not the array %s' % self.name
        if node['fstype'] == 'crypto_LUKS':
            if node['label'] != self.name or not _known(node['uuid'], self.luks_uuids):
                return 'another LUKS volume than %s' % self.name
            return self._below(node, disk, lambda child: self._mapping(child, disk, True))
        if node['fstype'] in _FS_TYPES:
            if node['label'] != self.name or not _known(node['uuid'], self.fs_uuids):
                return 'another filesystem than %s' % self.name
            return self._below(node, disk, lambda _child: 'a device on the filesystem')
        if node['fstype'] or node['uuid'] or node['label']:
            return 'something else on the array'
        return self._below(node, disk, lambda child: self._mapping(child, disk, False))

    def _mapping(self, node, disk, luks):
        """The volume's dm-crypt mapping, with its filesystem (or none yet)."""
        if node['type'] != 'crypt' or node['name'] != self.mapper or node['children']:
            return 'a device that is not the mapping %s' % self.mapper
        if not luks and not self._ephemeral(disk):
            return 'a mapping %s that the role did not record' % self.mapper
        if node['fstype'] == '' and not node['mounts']:
            return None
        if node['fstype'] not in _FS_TYPES:
            return 'something else in the mapping %s' % self.mapper
        if luks and (node['label'] != self.name or not _known(node['uuid'], self.fs_uuids)):
            return 'another filesystem than %s' % self.name
        return None


def _describe(sigs):
    seen, out = set(), []
    for s in sigs:
        text = '%s%s' % (s['type'] or '?', ' "%s"' % s['label'] if s['label'] else '')
        if text not in seen:
            seen.add(text)
            out.append(text)
    return ', '.join(out)


def _unique(items):
    seen, out = set(), []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _entries(probes):
    if not isinstance(probes, list):
        _fail('expected a list of {device, real, wipefs, lsblk}, got %s', _short(probes))
    out = []
    for i, probe in enumerate(probes):
        if isinstance(probe, (list, tuple)) and len(probe) == len(_FIELDS):
            probe = dict(zip(_FIELDS, probe))
        if not isinstance(probe, dict):
            _fail('expected a list of {device, real, wipefs, lsblk}: entry #%d is %s', i, _short(probe))
        device = probe.get('device')
        if not isinstance(device, string_types) or not device:
            _fail('expected a list of {device, real, wipefs, lsblk}: entry #%d has no device (%s)', i, _short(device))
        out.append(probe)
    return out


def _examine(group):
    """One disk, from every entry that names it: what is on it, and what shows that it is used."""
    first = group[0]
    device = first['device']
    sigs, roots, nodes, holders, swaps = [], [], [], [], set()
    names = set()
    for probe in group:
        names.update(n for n in (probe['device'], _text(probe.get('real'), probe['device'], 'real')) if n)
        sigs.extend(_signatures(probe, probe['device']))
        more_roots, more_nodes = _tree(probe, probe['device'])
        roots.extend(more_roots)
        nodes.extend(more_nodes)
        holders.extend(_texts(probe.get('holders'), probe['device'], 'holders'))
        swaps.update(_texts(probe.get('swaps'), probe['device'], 'swaps'))
    shown = set(n[key] for n in nodes for key in ('name', 'kname') if n[key])
    children = _unique(n['name'] or n['kname'] or '?' for n in nodes if not n['root'])
    mounts = _unique(m for n in nodes for m in n['mounts'])
    swap = _unique(n['name'] or n['kname'] for n in nodes if set([n['name'], n['kname']]) & swaps - set(['']))
    stray = _unique(h for h in holders if h not in shown)
    # In use now: mounted, swap (which lsblk shows as mounted on [SWAP]: said once, as swap), or held (md, dm: any
    # device on it but a partition, or a holder in /sys).
    mounts = [m for m in mounts if m != '[SWAP]' or not swap]
    active = _unique(mounts + ['swap on ' + s for s in swap] + holders
                     + [n['name'] or n['kname'] or '?' for n in nodes if not n['root'] and n['type'] != 'part'])
    used = bool(sigs or children or mounts or swap or holders
                or any(n[key] for n in nodes for key in ('fstype', 'pttype', 'uuid', 'label')))
    real = _text(first.get('real'), device, 'real') or device
    return {'device': device, 'real': real, 'names': names, 'aliases': _unique(p['device'] for p in group[1:] if p['device'] != device),
            'sigs': sigs, 'roots': roots, 'nodes': nodes, 'children': children, 'mounts': mounts, 'swap': swap,
            'stray': stray, 'active': active, 'used': used}


def _what(disk):
    """What a disk holds, for a message: its signatures first, then devices, mounts, swap and holders."""
    parts = [_describe(disk['sigs'])] if disk['sigs'] else []
    pttypes = _unique(n['pttype'] for n in disk['nodes'] if n['pttype'] and n['pttype'] not in [s['type'] for s in disk['sigs']])
    parts += ['a %s partition table' % t for t in pttypes]
    if disk['children']:
        parts.append('partitions or holders ' + ', '.join(disk['children']))
    if disk['mounts']:
        parts.append('mounted on ' + ', '.join(disk['mounts']))
    if disk['swap']:
        parts.append('swap on ' + ', '.join(disk['swap']))
    if disk['stray']:
        parts.append('holders ' + ', '.join(disk['stray']))
    if not parts:
        fstypes = _unique(n['fstype'] for n in disk['nodes'] if n['fstype'])
        parts.append(('a %s signature that wipefs did not show' % ', '.join(fstypes)) if fstypes else 'signs of use')
    return ', '.join(parts)


def storage_plan(probes, name, wipe=None, volume=None):
    """Decide what the storage role may do with its disks, from what is on them (see storage_plan.yml)."""
    probes = _entries(probes)
    if not isinstance(name, string_types) or not name:
        _fail('expected the volume name, got %s', _short(name))
    paths = _texts(wipe, 'storage_wipe_devices', 'the list')
    if not all(paths):
        _fail('storage_wipe_devices: expected device paths, got %s', _short(wipe))
    wipe = set(paths)
    own = _Volume(name, volume)

    # One disk per kernel name: two paths to one disk (by-id and /dev/nvmeXnY) are merged, never used twice.
    groups, order = {}, []
    for probe in probes:
        key = _text(probe.get('real'), probe['device'], 'real') or probe['device']
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(probe)
    owner = {}
    for key in order:
        for path in set([key] + [p['device'] for p in groups[key]]):
            if owner.setdefault(path, key) != key:
                _fail('%s names two disks, %s and %s: the probe\'s paths contradict each other', path, owner[path], key)
    disks = []
    for key in order:
        disk = _examine(groups[key])
        # Each path is judged on its own read as well: the volume's own only if every read of the disk says so.
        disk['reads'] = [_examine([p]) for p in groups[key]] if len(groups[key]) > 1 else [disk]
        disks.append(disk)
    several = len(disks) > 1

    notes = []
    for d in disks:
        d['wipe'] = bool((d['names'] | set(d['aliases'])) & wipe)
        if d['aliases']:
            notes.append('%s and %s are one disk (%s): it is used once, as %s.' % (d['device'], ', '.join(d['aliases']), d['real'], d['device']))
        d['why'] = None
        if not d['used']:
            d['state'] = 'blank'
        else:
            whys = [own.why_not(r, several) if r['used'] else 'its paths show different things' for r in d['reads']]
            d['why'] = ([w for w in whys if w] + [None])[0]
            d['state'] = 'foreign' if d['why'] else 'ours'
    # The members of one array share its UUID: disks of two arrays of the same name are not one volume.
    members = set(_uuid(s['uuid']) for d in disks if d['state'] == 'ours' for s in d['sigs'] if s['type'] == _MD_MEMBER)
    if several and len(members) > 1:
        for d in disks:
            if d['state'] == 'ours':
                d['state'], d['why'] = 'foreign', 'members of different arrays named %s' % name

    problems = []
    for d in disks:
        if d['state'] == 'foreign' and not d['wipe']:
            problems.append('%s holds %s, which is not the volume %s (%s): it is left alone. If its data may be destroyed, '
                            'list it in storage_wipe_devices.' % (d['device'], _what(d), name, d['why']))
    states = set(d['state'] for d in disks)
    if not problems and 'ours' in states and states != set(['ours']):
        kept = [d['device'] for d in disks if d['state'] == 'ours' and not d['wipe']]
        if kept:
            problems.append('the volume %s is incomplete: %s belong to it and %s do not (a disk was replaced, or came back '
                            'empty). Its data is lost; list its disks in storage_wipe_devices to build it anew.'
                            % (name, ', '.join(kept), ', '.join(d['device'] for d in disks if d['state'] != 'ours')))
    action = 'keep' if states == set(['ours']) else 'create'
    wiped = [d for d in disks if d['state'] != 'blank'] if action == 'create' else []
    for d in wiped:
        if d['wipe'] and d['active']:
            problems.append('%s is in storage_wipe_devices but in use (%s): unmount and stop it first.' % (d['device'], ', '.join(d['active'])))
    # The invariant, whatever the rules above say: nothing that shows use is built on unless listed and idle.
    if action == 'create' and any(d['state'] != 'blank' and (not d['wipe'] or d['active']) for d in disks) and not problems:
        problems.append('storage_plan could not decide safely about %s: nothing is changed.'
                        % ', '.join(d['device'] for d in disks if d['state'] != 'blank'))
    if problems:
        action, wiped = 'refuse', []
    report = [{'device': d['device'], 'real': d['real'], 'aliases': d['aliases'], 'state': d['state'],
               'signatures': _describe(d['sigs']), 'children': d['children'], 'mounts': d['mounts'], 'in_use': d['active'],
               'wipe': d['wipe'], 'reason': d['why'] or ''} for d in disks]
    return {'action': action, 'problems': problems, 'disks': report, 'wipe': [d['device'] for d in wiped],
            'devices': [d['device'] for d in disks], 'notes': notes}


class FilterModule(object):
    def filters(self):
        return {'storage_plan': storage_plan}
