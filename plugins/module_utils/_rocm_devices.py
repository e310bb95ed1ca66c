# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The device files a ROCm container needs, read from the host, and the CDI specification and docker run arguments
made from them. Pure functions over sysfs and /dev; no Ansible objects.

ROCm documentation, "Running ROCm Docker containers"
(https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html): a container needs /dev/kfd, "the
main compute interface, shared by all GPUs", and the GPUs' render nodes /dev/dri/renderD<N>; AMD recommends
``--security-opt seccomp=unconfined`` (memory mapping, for HPC). The container's user needs the groups that own those
nodes (video and/or render): added by number, since the image's /etc/group does not know the host's render group
(ROCm/ROCm-docker issue 116: "groups: cannot find name for group ID 993").
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

AMD_VENDOR = 0x1002
_RENDER_RE = re.compile(r'\ArenderD([0-9]{1,4})\Z', re.ASCII)
# CDI specification version 0.5.0 added hostPath to device nodes (container-device-interface SPEC.md, "Version"
# history); Docker 25 reads 0.5.0 and later.
CDI_VERSION = '0.5.0'
CDI_KIND = 'amd.com/gpu'
SECCOMP = 'seccomp=unconfined'


def _read(path, limit=64):
    try:
        with open(path) as f:
            return f.read(limit).strip()
    except (IOError, OSError, UnicodeDecodeError):
        return None


def render_nodes(sysfs_root='/sys', dev_root='/dev'):
    """The render nodes of AMD GPUs, ``[{'name': 'renderD128', 'path': '<dev_root>/dri/renderD128',
    'pci_bus_id': '0000:0c:00.0', 'exists': bool, 'gid': int or None}]`` sorted by minor number."""
    base = os.path.join(sysfs_root, 'class', 'drm')
    try:
        entries = os.listdir(base)
    except (IOError, OSError):
        return []
    nodes = []
    for entry in entries:
        m = _RENDER_RE.match(entry)
        if not m:
            continue
        device = os.path.join(base, entry, 'device')
        try:
            vendor = int(_read(os.path.join(device, 'vendor')) or '', 16)
        except ValueError:
            continue
        if vendor != AMD_VENDOR:
            continue
        bus_id = os.path.basename(os.path.realpath(device)).lower()
        path = os.path.join(dev_root, 'dri', entry)
        nodes.append({'name': entry, 'minor': int(m.group(1)), 'path': path, 'pci_bus_id': bus_id,
                      'exists': os.path.exists(path), 'gid': _gid(path)})
    return sorted(nodes, key=lambda n: n['minor'])


def _gid(path):
    try:
        return os.stat(path).st_gid
    except (IOError, OSError):
        return None


def kfd(dev_root='/dev'):
    path = os.path.join(dev_root, 'kfd')
    return {'path': path, 'exists': os.path.exists(path), 'gid': _gid(path)}


def _node(path, dev_root):
    container = '/dev/' + os.path.relpath(path, dev_root)
    node = {'path': container}
    if container != path:
        node['hostPath'] = path
    return node


def cdi_spec(nodes, kfd_node, dev_root='/dev'):
    """A CDI specification: one device per render node (named by its index, in minor order, as HIP numbers the GPUs)
    and ``all``; /dev/kfd for every one. None when /dev/kfd or every render node is absent."""
    present = [n for n in nodes if n['exists']]
    if not kfd_node['exists'] or not present:
        return None
    devices = [{'name': str(i), 'containerEdits': {'deviceNodes': [_node(n['path'], dev_root)]}}
               for i, n in enumerate(present)]
    devices.append({'name': 'all', 'containerEdits': {'deviceNodes': [_node(n['path'], dev_root) for n in present]}})
    return {'cdiVersion': CDI_VERSION, 'kind': CDI_KIND, 'devices': devices,
            'containerEdits': {'deviceNodes': [_node(kfd_node['path'], dev_root)]}}


def docker_run_args(nodes, kfd_node):
    """``docker run`` arguments for every present AMD GPU, as AMD documents them; [] when there is none."""
    present = [n for n in nodes if n['exists']]
    if not kfd_node['exists'] or not present:
        return []
    args = ['--device', kfd_node['path']]
    for n in present:
        args += ['--device', n['path']]
    gids = sorted(set(g for g in [kfd_node['gid']] + [n['gid'] for n in present] if g))
    for gid in gids:
        args += ['--group-add', str(gid)]
    return args + ['--security-opt', SECCOMP]
