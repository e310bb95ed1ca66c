# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Whether a kernel's in-tree amdgpu and the firmware can drive the AMD GPUs on the bus, decided before any change.

A kernel can drive a GPU when its amdgpu module asks for the GPU's firmware (the module's MODULE_FIRMWARE list,
``modinfo -F firmware``): a kernel that predates the GPU's IP blocks names none of their files. The firmware can
when the distribution's firmware package (or the host's /lib/firmware) holds those files.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

# GPU families whose in-tree support is recent enough that a distribution's stock kernel or firmware may lack it,
# keyed by PCI device id. Other AMD GPUs (MI100 "Arcturus", MI200 "Aldebaran") are driven by the in-tree amdgpu of
# every kernel the roles support: Debian 12's 6.1.0-57-amd64 amdgpu.ko already names arcturus_* and aldebaran_*
# firmware (checked with modinfo -F firmware, 2026-12-07), and its firmware-amd-graphics 20230210-5 holds them.
# Source of the device ids: the PCI ID database (hwdata pci.ids), vendor 1002, the "Aqua Vanjaram" entries
# (MI300A 74a0, MI300X 74a1, MI308X 74a2, MI325X 74a5, MI300X HF 74a9 and 74bd, MI300X VF 74b5, MI325X VF 74b9).
# Source of the firmware names: MODULE_FIRMWARE of amdgpu.ko in Debian's linux-image-6.12.95+deb12-amd64
# (bookworm-backports), read with modinfo on 2026-12-07: gc_9_4_3_{mec,rlc,sjt_mec}.bin, psp_13_0_6_{sos,ta}.bin,
# smu_13_0_6.bin; the 6.1.0-57-amd64 module (Debian 12's stock kernel) names none of them. Issue 55 states the same
# three blocks as what Debian 12 lacks.
_AQUA_VANJARAM = {
    'family': 'Aqua Vanjaram (MI300 series, GC 9.4.3, gfx942)',
    'firmware': ('amdgpu/gc_9_4_3_mec.bin', 'amdgpu/gc_9_4_3_rlc.bin', 'amdgpu/psp_13_0_6_sos.bin',
                 'amdgpu/psp_13_0_6_ta.bin', 'amdgpu/smu_13_0_6.bin'),
}
_MODELS = {
    '1002:74a0': 'Instinct MI300A', '1002:74a1': 'Instinct MI300X', '1002:74a2': 'Instinct MI308X',
    '1002:74a5': 'Instinct MI325X', '1002:74a9': 'Instinct MI300X HF', '1002:74b5': 'Instinct MI300X VF',
    '1002:74b9': 'Instinct MI325X VF', '1002:74bd': 'Instinct MI300X HF',
}
REQUIREMENTS = dict((pci_id, dict(_AQUA_VANJARAM, model=model)) for pci_id, model in _MODELS.items())

_FIRMWARE_LINE = re.compile(r'[A-Za-z0-9_./+-]{1,200}\Z', re.ASCII)


def requirement(pci_device_id):
    """The family and firmware files a GPU needs beyond what every supported kernel has, or None."""
    return REQUIREMENTS.get(str(pci_device_id).lower())


def parse_firmware_list(text):
    """The firmware names of ``modinfo -F firmware`` output, one a line; lines that are no file name are dropped."""
    names = set()
    for line in (text or '').splitlines():
        line = line.strip()
        if line and _FIRMWARE_LINE.match(line):
            names.add(line)
    return names


def _stem(name):
    """``amdgpu/gc_9_4_3_mec.bin.zst`` -> ``amdgpu/gc_9_4_3_mec.bin`` (Ubuntu and Debian 13 compress the files)."""
    for suffix in ('.zst', '.xz'):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def problems(devices, kernels, firmware_available):
    """What stops the in-tree amdgpu from driving ``devices`` (scan() devices of vendor ``amd``), as a list.

    ``kernels``: ``[{'release', 'module', 'firmware'}]``, one per bootable kernel; ``module`` the path of its
    amdgpu.ko or None (not installed yet: Ubuntu's linux-modules-extra), ``firmware`` the names its module asks for
    (:func:`parse_firmware_list`). ``firmware_available``: the firmware files the host will have (its own files
    plus the distribution package's). Each problem is ``{'kind': 'kernel'|'firmware', 'release', 'gpu', 'missing'}``.
    """
    have = set(_stem(n) for n in firmware_available or ())
    found = []
    seen_gpus = set()
    for device in devices or ():
        need = requirement(device.get('pci_device_id'))
        if need is None or device['pci_device_id'] in seen_gpus:
            continue
        seen_gpus.add(device['pci_device_id'])
        gpu = '%s (%s, %s)' % (need['model'], device['pci_device_id'], need['family'])
        for kernel in kernels or ():
            if kernel.get('module') is None:
                continue
            missing = [n for n in need['firmware'] if n not in set(_stem(f) for f in kernel.get('firmware') or ())]
            if missing:
                found.append({'kind': 'kernel', 'release': kernel['release'], 'gpu': gpu, 'missing': missing})
        missing = [n for n in need['firmware'] if n not in have]
        if missing:
            found.append({'kind': 'firmware', 'release': None, 'gpu': gpu, 'missing': missing})
    return found


def describe(found):
    """One sentence per problem, for a refusal."""
    lines = []
    for p in found:
        if p['kind'] == 'kernel':
            lines.append('kernel %s: its amdgpu module does not know the %s (it does not ask for %s)' % (
                p['release'], p['gpu'], ', '.join(p['missing'])))
        else:
            lines.append('firmware: %s is not in the firmware this host gets for the %s' % (
                ', '.join(p['missing']), p['gpu']))
    return lines


def modules_extra_packages(kernels, metapackages, metapackage_map):
    """The packages that give each kernel without an amdgpu module its ``linux-modules-extra-<release>``, and the
    metapackages that keep one coming with every kernel upgrade: ``metapackage_map`` maps the installed image
    metapackage of a kernel (``metapackages``, release -> name) to the one that depends on linux-modules-extra too
    (an image metapackage already doing so maps to itself or is absent)."""
    packages = []
    for kernel in kernels or ():
        if kernel.get('module') is None:
            packages.append('linux-modules-extra-' + kernel['release'])
        wanted = (metapackage_map or {}).get((metapackages or {}).get(kernel['release']))
        if wanted:
            packages.append(wanted)
    return sorted(set(packages), key=packages.index)
