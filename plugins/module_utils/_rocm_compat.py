# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Does a ROCm source carry code objects for the GPUs' gfx targets? Pure functions over _data_rocm and _data_amd.

A ROCm source is the distribution's archive of a platform or AMD's repository (_data_rocm.ROCM_SOURCES). A GPU's gfx
target is given, or looked up from its PCI device id in _data_amd (through _amd_gpu). Bad input raises ValueError
naming the option, the entry and the fix; the caller (the rocm_compat module) turns it into a failed task.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_rocm
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_vendor

SOURCES = dict((row[0], {'key': row[0], 'label': row[1], 'library': row[2],
                         'gfx_targets': None if row[3] is None else tuple(row[3])})
               for row in _data_rocm.ROCM_SOURCES)

# An LLVM AMDGPU processor name (gfx803, gfx90a, gfx942, gfx1100, gfx1151), ASCII only, as rocminfo prints it in an ISA
# name (amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-) with the optional prefix and target features, which do not change
# which code object a GPU loads for these builds.
_GFX_RE = re.compile(r'\A(?:amdgcn-amd-amdhsa--)?(gfx[0-9]{1,2}[0-9][0-9a-f])((?::[a-z]+[+-])*)\Z', re.ASCII)
_PCI_ID_RE = re.compile(r'\A(?:0x)?([0-9a-f]{4}):(?:0x)?([0-9a-f]{4})\Z', re.ASCII)


SOURCE_CHOICES = ('distribution', 'amd')


def gfx_target(value, what):
    """``'gfx90a:sramecc+:xnack-'`` -> ``'gfx90a'``; ValueError naming ``what`` for anything else."""
    if not isinstance(value, str) or isinstance(value, bool):
        raise ValueError('%s: expected a gfx target as a string such as "gfx90a" or "gfx942", got %s %r'
                         % (what, type(value).__name__, value))
    m = _GFX_RE.match(value)
    if not m:
        raise ValueError('%s: %r is not a gfx target: write the LLVM target name as rocminfo prints it, "gfx" and '
                         'three or four ASCII hex digits such as "gfx908", "gfx90a", "gfx942" or "gfx1100", with no '
                         'blanks or line breaks' % (what, value))
    return m.group(1)


def normalize_pci_id(value, what):
    """``'1002:74A1'`` or ``'0x1002:0x74a1'`` -> ``'1002:74a1'``; ValueError naming ``what`` otherwise."""
    if not isinstance(value, str):
        raise ValueError('%s: expected a PCI id as a string such as "1002:74a1", got %s %r'
                         % (what, type(value).__name__, value))
    m = _PCI_ID_RE.match(value.lower())
    if not m:
        raise ValueError('%s: %r is not a PCI vendor:device id such as "1002:74a1"' % (what, value))
    return '%s:%s' % m.groups()


def gfx_of_pci_id(pci_id):
    """The gfx target of an AMD PCI device id (_data_amd through _amd_gpu), or None when the id is not known."""
    info = _amd_gpu.pci_id_info(pci_id)
    return info['gfx_target'] if info else None


def model_of_pci_id(pci_id):
    info = _amd_gpu.pci_id_info(pci_id)
    return info['model'] if info else None


def resolve_gpu(gpu, what):
    """One GPU (a dict with ``gfx_target``, ``pci_device_id``, ``name`` or ``model``, as amd_gpu_facts and the PCI bus
    give them) -> ``(gfx target or None, description)``. A given ``gfx_target`` wins over the PCI id, the PCI id over
    the product name (``AMD Instinct MI300X``)."""
    if not isinstance(gpu, dict):
        raise ValueError('%s: expected a dict with gfx_target, pci_device_id, name or model, got %s %r'
                         % (what, type(gpu).__name__, gpu))
    if not any(gpu.get(k) not in (None, '') for k in ('gfx_target', 'pci_device_id', 'name', 'model')):
        raise ValueError('%s: expected gfx_target, pci_device_id, name or model to identify the GPU, got %r'
                         % (what, gpu))
    pci_id = None
    if gpu.get('pci_device_id') is not None:
        pci_id = normalize_pci_id(gpu['pci_device_id'], what + '.pci_device_id')
    target = None
    if gpu.get('gfx_target') is not None:
        target = gfx_target(gpu['gfx_target'], what + '.gfx_target')
    elif pci_id is not None:
        target = gfx_of_pci_id(pci_id)
    if target is None:
        for key in ('name', 'model'):
            info = _amd_gpu.name_info(gpu.get(key))
            if info and info['gfx_target']:
                target = info['gfx_target']
                break
    parts = ['%s=%s' % (k, gpu[k]) for k in ('name', 'model', 'pci_bus_id') if gpu.get(k) not in (None, '')]
    if pci_id:
        parts.append('pci_device_id=%s' % pci_id)
        model = model_of_pci_id(pci_id)
        if model and not gpu.get('model') and not gpu.get('name'):
            parts.append('model=%s' % model)
    if target:
        parts.append('gfx_target=%s' % target)
    return target, ', '.join(parts) or 'a GPU with nothing to identify it by'


def source_key(source, distribution, release):
    """The ROCM_SOURCES key of ``source`` (distribution or amd) on a platform, or ValueError naming the fix."""
    if source not in SOURCE_CHOICES:
        raise ValueError('source: %r is not one of %s' % (source, ', '.join(SOURCE_CHOICES)))
    if source == 'amd':
        return 'amd'
    key = _data_rocm.DISTRIBUTION_SOURCES.get((distribution, release))
    if key is None:
        known = ', '.join('%s %s' % k for k in sorted(_data_rocm.DISTRIBUTION_SOURCES))
        raise ValueError('source: the distribution ROCm of %s %s is not known to this collection (known: %s); use '
                         "AMD's repository (source: amd)" % (distribution, release, known))
    return key


def distribution_packages(key):
    """The packages the rocm role installs from the archive of source ``key``; () for AMD's repository."""
    return tuple(_data_rocm.DISTRIBUTION_PACKAGES.get(key, ()))


def sources_carrying(targets):
    """The labels of the sources whose libraries carry every one of ``targets``, in table order."""
    return [s['label'] for s in (SOURCES[r[0]] for r in _data_rocm.ROCM_SOURCES)
            if s['gfx_targets'] is not None and all(t in s['gfx_targets'] for t in targets)]


def check(key, targets):
    """Problems (dicts with subject, message, fix) of the source ``key`` for the gfx ``targets``."""
    source = SOURCES[key]
    problems = []
    if source['gfx_targets'] is None:
        problems.append({'subject': 'source', 'message': '%s carries no ROCm library (%s), so no GPU code object '
                         'at all' % (source['label'], source['library']),
                         'fix': _fix(key, targets)})
        return problems
    missing = [t for t in targets if t not in source['gfx_targets']]
    if missing:
        problems.append({'subject': 'source', 'message': '%s (%s) carries no code object for %s (it has %s)' % (
            source['label'], source['library'], ', '.join(missing), ', '.join(source['gfx_targets'])),
            'fix': _fix(key, targets)})
    return problems


def _fix(key, targets):
    working = [label for label in sources_carrying(targets) if label != SOURCES[key]['label']]
    if not working:
        return ('no source this collection knows carries %s: build the libraries for them, or use GPUs that a '
                'source carries' % ', '.join(targets))
    text = 'what carries %s: %s' % (', '.join(targets) or 'these GPUs', '; '.join(working))
    if key != 'amd' and SOURCES['amd']['label'] in working:
        text += " (set {source} to amd for AMD's repository)"
    return text


def amd_gpus_from_sysfs(sysfs_root='/sys'):
    """The AMD GPUs on the PCI bus (vendor 1002, display controller or processing accelerator), sorted by bus id;
    None when there is no ``<sysfs_root>/bus/pci/devices``. Works before any driver is loaded: the bus is read by
    :func:`_gpu_vendor.scan`, the one reader of the PCI bus (a function it cannot read is left out)."""
    found = _gpu_vendor.scan(sysfs_root)
    if not found['bus_readable']:
        return None
    return [dict((key, device[key]) for key in ('pci_bus_id', 'pci_device_id', 'pci_class'))
            for device in found['devices'] if device['vendor'] == 'amd']
