# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Which GPU vendor's roles a host gets: the GPUs on the PCI bus (sysfs), or gpuops_gpu_vendor when it forces one.

Works before any driver exists: it reads only ``<sysfs_root>/bus/pci/devices/<slot>/{vendor,device,class}``.
Every attribute is read bounded, only from a regular file, and must be the exact text the kernel writes
(``0x10de``, ``0x030200``); anything else (a missing file, a FIFO, a link to a device node, junk, non-ASCII
digits) makes that function skipped, with the reason, never a traceback.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re
import stat

# PCI vendor IDs (PCI-SIG; the vendor lines of the PCI ID database, pci.ids: "10de  NVIDIA Corporation",
# "1002  Advanced Micro Devices, Inc. [AMD/ATI]").
VENDORS = {'10de': 'nvidia', '1002': 'amd'}
# PCI base classes (PCI Code and ID Assignment Specification, "Base Class" table): 0x03 display controller (VGA
# 0x0300, 3D 0x0302: NVIDIA's GPUs and AMD's Instinct MI100/MI200/MI300 present themselves as one of them), 0x12
# processing accelerator (the class AMD's issue 55 names for AMD accelerators).
GPU_BASE_CLASSES = {
    'nvidia': (0x03,),
    'amd': (0x03, 0x12),
}
_LABELS = {'nvidia': 'NVIDIA', 'amd': 'AMD'}
CHOICES = ('auto', 'nvidia', 'amd', 'none')
# The kernel writes these attributes as 0x plus 4 (vendor, device) or 6 (class) hex digits and a newline.
_ID_RE = re.compile(r'0x([0-9a-f]{4})\n?\Z', re.ASCII)
_CLASS_RE = re.compile(r'0x([0-9a-f]{6})\n?\Z', re.ASCII)
# A PCI slot name as sysfs names its entries: domain:bus:device.function.
_SLOT_RE = re.compile(r'[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\Z', re.ASCII)
# No attribute the kernel writes here is longer; a longer file is not an attribute.
_MAX_ATTRIBUTE_BYTES = 64
# A PCI bus holds at most 256 buses x 32 devices x 8 functions per domain; past this many entries it is no PCI bus.
MAX_ENTRIES = 65536


class VendorChoiceError(ValueError):
    """gpuops_gpu_vendor (or the variable named) is not one of CHOICES."""


def parse_choice(value, name='gpuops_gpu_vendor'):
    """The vendor choice, checked: exactly one of CHOICES, a string, no blanks, no other spelling."""
    if not isinstance(value, str):
        raise VendorChoiceError(
            '%s: expected one of %s as a string, got %r (%s)%s' % (
                name, ', '.join(CHOICES), value, type(value).__name__,
                '; quote it in YAML' if value is None or isinstance(value, bool) else ''))
    if value not in CHOICES:
        hint = ''
        if value.strip().lower() in CHOICES:
            hint = ' (did you mean %r? the value is taken as written: no capitals, blanks or line breaks)' % (
                value.strip().lower())
        raise VendorChoiceError('%s: expected one of %s, got %r%s' % (name, ', '.join(CHOICES), value, hint))
    return value


def _read_attribute(path):
    """(text, None) of a sysfs attribute, or (None, reason)."""
    try:
        info = os.stat(path)
    except OSError as e:
        return None, 'cannot read %s (%s)' % (os.path.basename(path), e.strerror or e)
    if not stat.S_ISREG(info.st_mode):
        return None, '%s is not a regular file' % os.path.basename(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0))
        try:
            data = os.read(fd, _MAX_ATTRIBUTE_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as e:
        return None, 'cannot read %s (%s)' % (os.path.basename(path), e.strerror or e)
    if len(data) > _MAX_ATTRIBUTE_BYTES:
        return None, '%s is longer than a PCI attribute' % os.path.basename(path)
    try:
        return data.decode('ascii'), None
    except UnicodeDecodeError:
        return None, '%s is not ASCII' % os.path.basename(path)


def _attribute(path, name, pattern):
    text, reason = _read_attribute(os.path.join(path, name))
    if text is None:
        return None, reason
    m = pattern.match(text)
    if not m:
        return None, '%s is %r, not what the kernel writes (%s)' % (
            name, text[:20], '0x and 4 hex digits' if pattern is _ID_RE else '0x and 6 hex digits')
    return m.group(1), None


def _driver(path):
    link = os.path.join(path, 'driver')
    try:
        return os.path.basename(os.readlink(link)) if os.path.islink(link) else None
    except OSError:
        return None


def scan(sysfs_root='/sys'):
    """The GPUs of the known vendors on the PCI bus under ``sysfs_root``.

    Returns ``{'bus_readable', 'devices', 'skipped', 'vendors'}``: ``devices`` the GPUs (``pci_bus_id``,
    ``vendor``, ``pci_device_id`` such as ``1002:74a1``, ``pci_class`` such as ``0x0302``, ``driver``), sorted by
    bus id; ``skipped`` the functions that could not be read, each ``{'entry', 'reason'}``; ``vendors`` the sorted
    vendor names (``amd``, ``nvidia``) of the GPUs. ``bus_readable`` is false when the directory is missing.
    """
    base = os.path.join(sysfs_root or '/', 'bus', 'pci', 'devices')
    result = {'bus_readable': False, 'devices': [], 'skipped': [], 'vendors': []}
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return result
    result['bus_readable'] = True
    if len(entries) > MAX_ENTRIES:
        result['skipped'].append({'entry': base, 'reason': '%d entries: more than a PCI bus holds' % len(entries)})
        entries = entries[:MAX_ENTRIES]
    for entry in entries:
        if not _SLOT_RE.match(entry):
            result['skipped'].append({'entry': entry, 'reason': 'not a PCI slot name'})
            continue
        path = os.path.join(base, entry)
        vendor, reason = _attribute(path, 'vendor', _ID_RE)
        if vendor is None:
            result['skipped'].append({'entry': entry, 'reason': reason})
            continue
        name = VENDORS.get(vendor)
        if name is None:
            continue                                    # another vendor's device: not ours to read further
        device, reason = _attribute(path, 'device', _ID_RE)
        pci_class, class_reason = _attribute(path, 'class', _CLASS_RE)
        if device is None or pci_class is None:
            result['skipped'].append({'entry': entry, 'reason': reason or class_reason})
            continue
        if int(pci_class[:2], 16) not in GPU_BASE_CLASSES[name]:
            continue                                    # the audio or USB-C function of a graphics card, a switch
        result['devices'].append({
            'pci_bus_id': entry,
            'vendor': name,
            'pci_device_id': '%s:%s' % (vendor, device),
            'pci_class': '0x%s' % pci_class[:4],
            'driver': _driver(path),
        })
    result['vendors'] = sorted(set(d['vendor'] for d in result['devices']))
    return result


def decide(choice, found):
    """``(vendor, reason)``: the vendor whose roles the host gets (``nvidia``, ``amd`` or ``none``).

    ``choice`` is a checked :func:`parse_choice` value, ``found`` a :func:`scan` result. ``auto`` picks the one
    vendor on the bus; a host without a GPU of either keeps the NVIDIA roles (what site.yml ran before there was a
    choice: nvidia_driver then installs the user-space parts in a container, or refuses on a host). Raises
    VendorChoiceError where ``auto`` cannot choose: GPUs of both vendors on one host.
    """
    vendors = found['vendors']
    if choice != 'auto':
        return choice, 'gpuops_gpu_vendor=%s' % choice
    if len(vendors) > 1:
        raise VendorChoiceError(
            'gpuops_gpu_vendor: auto cannot choose: the PCI bus has GPUs of both vendors (%s); set gpuops_gpu_vendor '
            'to nvidia or amd for this host' % ', '.join(
                '%s %s' % (d['pci_bus_id'], d['pci_device_id']) for d in found['devices']))
    if vendors:
        return vendors[0], 'auto: %d %s GPU(s) on the PCI bus' % (len(found['devices']), _LABELS[vendors[0]])
    return 'nvidia', 'auto: no NVIDIA or AMD GPU on the PCI bus%s; the NVIDIA roles run as before' % (
        '' if found['bus_readable'] else ' (no PCI bus in sysfs)')
