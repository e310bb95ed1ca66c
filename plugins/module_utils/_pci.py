# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""NVIDIA devices on the PCI bus, read from sysfs (or ``lspci -Dnn`` text): works before any driver exists.

Names and architectures come from the host's PCI ID database (pciutils/hwdata ``pci.ids``) first: its
NVIDIA names start with the chip code name (``GP108 [GeForce GT 1030]``), whose prefix is the
architecture. Then the collection's exact-id table, then the product name.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import gzip
import os
import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_lookup

NVIDIA_VENDOR = '10de'
# PCI class codes (base class << 8 | subclass), PCI Code and ID Assignment Specification.
CLASS_VGA = 0x0300
CLASS_3D = 0x0302
CLASS_BRIDGE_OTHER = 0x0680   # NVSwitch presents itself as "Bridge: other"
GPU_CLASSES = (CLASS_VGA, CLASS_3D)

# Where pciutils (Debian/Ubuntu: /usr/share/misc) and hwdata (EL, Fedora, newer Ubuntu: /usr/share/hwdata)
# install the PCI ID database; some distributions ship it compressed.
PCI_IDS_PATHS = (
    '/usr/share/misc/pci.ids', '/usr/share/hwdata/pci.ids', '/usr/share/pci.ids',
    '/usr/share/misc/pci.ids.gz', '/usr/share/hwdata/pci.ids.gz',
)
_PCI_IDS_CACHE = {}

# 0000:07:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)
_LSPCI_RE = re.compile(
    r'^(?P<slot>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+'
    r'(?P<class_name>[^\[]*?)\s*\[(?P<class>[0-9a-fA-F]{4})\]:\s+'
    r'(?P<name>.*?)\s*\[(?P<vendor>[0-9a-fA-F]{4}):(?P<device>[0-9a-fA-F]{4})\]'
    r'(?:\s+\(rev (?P<rev>[0-9a-fA-F]+)\))?')


def _open_text(path):
    if path.endswith('.gz'):
        return gzip.open(path, 'rt', encoding='utf-8', errors='replace')
    return open(path, 'rb')


def parse_pci_ids(lines, vendor=NVIDIA_VENDOR):
    """``{'10de:1d01': 'GP108 [GeForce GT 1030]', ...}``: the device names of one vendor in pci.ids text."""
    names = {}
    inside = False
    for line in lines:
        if isinstance(line, bytes):
            line = line.decode('utf-8', 'replace')
        if not line.strip() or line.startswith('#'):
            continue
        if not line[0].isspace():
            if inside:
                break                               # the next vendor (or the class list): done
            inside = line[:4].lower() == vendor and line[4:5] in (' ', '\t')
            continue
        if inside and line.startswith('\t') and not line.startswith('\t\t'):
            device, _sep, name = line[1:].rstrip('\r\n').partition(' ')
            if len(device) == 4:
                names['%s:%s' % (vendor, device.lower())] = name.strip()
    return names


def load_pci_ids(paths=None):
    """NVIDIA device names from the first readable PCI ID database in ``paths`` (default PCI_IDS_PATHS).

    Returns ``(names, path)``; ``({}, None)`` when the host has no database.
    """
    for path in PCI_IDS_PATHS if paths is None else paths:
        try:
            stamp = os.stat(path).st_mtime
        except (IOError, OSError):
            continue
        cached = _PCI_IDS_CACHE.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1], path
        try:
            with _open_text(path) as handle:
                names = parse_pci_ids(handle)
        except (IOError, OSError, EOFError):
            continue
        _PCI_IDS_CACHE[path] = (stamp, names)
        return names, path
    return {}, None


def pci_ids_info(pci_id, names):
    """``{'name', 'architecture', 'product'}`` of ``pci_id`` in pci.ids ``names``, or None."""
    key = _gpu_lookup.normalize_pci_id(pci_id)
    name = (names or {}).get(key)
    if not name:
        return None
    m = re.search(r'\[(.*)\]\s*$', name)
    return {'name': name, 'architecture': _gpu_lookup.chip_architecture(name), 'product': m.group(1) if m else name}


def architecture_of(pci_id, names=None, name=None):
    """(architecture, source): host pci.ids, then the embedded table, then the product name; (None, None)."""
    found = pci_ids_info(pci_id, names) if pci_id else None
    if found is not None and found['architecture'] is not None:
        return found['architecture'], 'pci.ids'
    info = _gpu_lookup.pci_id_info(pci_id) if pci_id else None
    if info is not None:
        return info['architecture'], 'pci_device_id'
    for text in (name, found and found['product']):
        arch = _gpu_lookup.chip_architecture(text) or _gpu_lookup.product_architecture(text)
        if arch is not None:
            return arch, 'product_name'
    return None, None


def kind_of(pci_class, pci_id=None):
    """``gpu`` (VGA / 3D controller), ``nvswitch`` (bridge) or ``other`` (audio, USB-C ...)."""
    info = _gpu_lookup.pci_id_info(pci_id) if pci_id else None
    if info is not None and info['kind'] == 'nvswitch':
        return 'nvswitch'
    if pci_class in GPU_CLASSES:
        return 'gpu'
    if pci_class == CLASS_BRIDGE_OTHER:
        return 'nvswitch'
    return 'other'


def describe(bus_id, vendor, device, pci_class, driver=None, name=None, pci_ids=None):
    pci_id = '%s:%s' % (vendor, device)
    info = _gpu_lookup.pci_id_info(pci_id)
    found = pci_ids_info(pci_id, pci_ids)
    return {
        'pci_bus_id': bus_id.lower(),
        'pci_device_id': pci_id,
        'pci_class': '0x%04x' % pci_class,
        'kind': kind_of(pci_class, pci_id),
        'product': info['product'] if info else (found['product'] if found else name),
        'architecture': architecture_of(pci_id, pci_ids, name)[0],
        'driver': driver,
    }


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except (IOError, OSError):
        return None


def _hex(text, width):
    """``'0x10de'`` -> ``'10de'``; None when unreadable."""
    if not text:
        return None
    try:
        return '%0*x' % (width, int(text, 16))
    except ValueError:
        return None


def from_sysfs(sysfs_root='/sys', pci_ids=None):
    """NVIDIA PCI functions under ``<sysfs_root>/bus/pci/devices``, sorted by bus id.

    Returns None when the directory does not exist (no sysfs: use :func:`from_lspci`), a list otherwise.
    ``pci_ids``: device names from :func:`load_pci_ids`.
    """
    base = os.path.join(sysfs_root, 'bus', 'pci', 'devices')
    try:
        entries = sorted(os.listdir(base))
    except (IOError, OSError):
        return None
    devices = []
    for entry in entries:
        path = os.path.join(base, entry)
        vendor = _hex(_read(os.path.join(path, 'vendor')), 4)
        if vendor != NVIDIA_VENDOR:
            continue
        device = _hex(_read(os.path.join(path, 'device')), 4)
        raw_class = _read(os.path.join(path, 'class'))
        if device is None or not raw_class:
            continue
        try:
            pci_class = int(raw_class, 16) >> 8    # 0x030200 -> 0x0302 (drop the programming interface)
        except ValueError:
            continue
        driver_link = os.path.join(path, 'driver')
        driver = os.path.basename(os.readlink(driver_link)) if os.path.islink(driver_link) else None
        devices.append(describe(entry, vendor, device, pci_class, driver, pci_ids=pci_ids))
    return devices


def parse_lspci(text, pci_ids=None):
    """NVIDIA functions from ``lspci -Dnn`` output (``-k`` lines ``Kernel driver in use:`` are read too)."""
    devices = []
    current = None
    for line in (text or '').splitlines():
        if line[:1] in (' ', '\t'):
            m = re.match(r'\s+Kernel driver in use:\s*(\S+)', line)
            if m and current is not None:
                current['driver'] = m.group(1)
            continue
        current = None
        m = _LSPCI_RE.match(line.strip())
        if not m or m.group('vendor').lower() != NVIDIA_VENDOR:
            continue
        slot = m.group('slot')
        if slot.count(':') == 1:
            slot = '0000:' + slot
        current = describe(slot, m.group('vendor').lower(), m.group('device').lower(),
                           int(m.group('class'), 16), name=m.group('name'), pci_ids=pci_ids)
        devices.append(current)
    return devices


def gpus(devices):
    """The GPUs among the devices (not NVSwitches, not the audio or USB functions of a graphics card)."""
    return [d for d in devices or () if d.get('kind') == 'gpu']
