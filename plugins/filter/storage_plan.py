# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter storage_plan (documented in storage_plan.yml)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

from ansible.errors import AnsibleFilterError
from ansible.module_utils.six import string_types

# What this role's own volume leaves on a disk: an md member (several disks), or on a single disk LUKS2 or the
# filesystem itself, each carrying the volume's name.
_SINGLE_TYPES = ('xfs', 'ext4', 'crypto_LUKS')
_FIELDS = ('device', 'real', 'wipefs', 'lsblk')


def _json(text, what, device):
    if text is None or (isinstance(text, string_types) and not text.strip()):
        return {}
    if isinstance(text, dict):
        return text
    try:
        return json.loads(text)
    except ValueError as exc:
        raise AnsibleFilterError('storage_plan: the %s output for %s is not JSON: %s' % (what, device, exc))


def _tree(node):
    """Every node under (and including) an lsblk node, depth first."""
    out, todo = [], [node]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(reversed(current.get('children') or []))
    return out


def _mounts(node):
    points = list(node.get('mountpoints') or [])
    if node.get('mountpoint'):
        points.append(node['mountpoint'])
    return [p for p in points if p]


def _is_ours(sig, name, several):
    label = sig.get('label') or ''
    if several:
        return sig.get('type') == 'linux_raid_member' and (label == name or label.endswith(':' + name))
    return sig.get('type') in _SINGLE_TYPES and label == name


def _describe(sigs):
    return ', '.join('%s%s' % (s.get('type') or '?', ' "%s"' % s['label'] if s.get('label') else '') for s in sigs)


def storage_plan(probes, name, wipe=None):
    """Decide what the storage role may do with its disks, from what is on them.

    probes: a list of {device, real, wipefs, lsblk} (or of [device, real, wipefs, lsblk]): the configured path, the kernel name it resolves to, the text
    of ``wipefs --no-act --json DEVICE`` (empty when the disk has no signature) and of
    ``lsblk --json --paths --output NAME,TYPE,MOUNTPOINT DEVICE``.
    """
    if isinstance(probes, list):
        probes = [dict(zip(_FIELDS, p)) if isinstance(p, (list, tuple)) and len(p) == 4 else p for p in probes]
    if not isinstance(probes, list) or not all(isinstance(p, dict) and p.get('device') for p in probes):
        raise AnsibleFilterError('storage_plan: expected a list of {device, real, wipefs, lsblk}, got %r' % (probes,))
    if not isinstance(name, string_types) or not name:
        raise AnsibleFilterError('storage_plan: expected the volume name, got %r' % (name,))
    wipe = set(wipe or [])
    several = len(probes) > 1
    mapper = '/dev/mapper/' + name
    disks = []
    for probe in probes:
        device = probe['device']
        sigs = _json(probe.get('wipefs'), 'wipefs', device).get('signatures') or []
        roots = _json(probe.get('lsblk'), 'lsblk', device).get('blockdevices') or []
        nodes = [n for root in roots for n in _tree(root)]
        children = [n.get('name') for root in roots for n in _tree(root) if n is not root]
        mounts = [m for n in nodes for m in _mounts(n)]
        if not sigs and not children:
            state = 'blank'
        elif mapper in children or (sigs and all(_is_ours(s, name, several) for s in sigs)):
            state = 'ours'
        else:
            state = 'foreign'
        disks.append({'device': device, 'real': probe.get('real') or device, 'state': state,
                      'signatures': _describe(sigs), 'children': children, 'mounts': mounts,
                      'wipe': bool({device, probe.get('real')} & wipe)})

    problems = []
    for d in disks:
        if d['state'] == 'foreign' and not d['wipe']:
            problems.append('%s holds %s, which is not the volume %s: it is left alone. If its data may be destroyed, '
                            'list it in storage_wipe_devices.'
                            % (d['device'], d['signatures'] or 'partitions or holders ' + ', '.join(d['children']), name))
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
        if d['wipe'] and (d['mounts'] or d['children']):
            problems.append('%s is in storage_wipe_devices but in use (%s): unmount and stop it first.'
                            % (d['device'], ', '.join(d['mounts'] or d['children'])))
    if problems:
        action, wiped = 'refuse', []
    return {'action': action, 'problems': problems, 'disks': disks, 'wipe': [d['device'] for d in wiped]}


class FilterModule(object):
    def filters(self):
        return {'storage_plan': storage_plan}
