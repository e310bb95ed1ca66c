# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Exact lookups over _data_gpu.py: a PCI vendor:device id to its product and architecture, a chip code name
(``GP108``) or a product name (``NVIDIA H100 80GB HBM3``) to its architecture, a product name to its nominal
device-memory bandwidth (the most specific row that names the whole model, never a shorter model's row).

Beside the data, not in _compat_gpu.py, so that the PCI reader (_pci.py) names devices without the compatibility
logic. Never raises: what is not a string or not known is None.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_gpu import (
    CHIP_PREFIXES, MEMORY_BANDWIDTH_GBPS, PCI_IDS, PRODUCT_PATTERNS)


# ---------------------------------------------------------------------------------------------
# PCI device id -> product and architecture (exact lookup, no ranges)
# ---------------------------------------------------------------------------------------------

_PCI_ID_RE = re.compile(r'(?:0x)?([0-9a-f]{4})[:\s]+(?:0x)?([0-9a-f]{4})\Z', re.ASCII)


def normalize_pci_id(text):
    """``'10DE:2330'``, ``'0x10de 0x2330'`` -> ``'10de:2330'``; None when not a PCI vendor:device id."""
    if not isinstance(text, str):
        return None
    m = _PCI_ID_RE.match(text.strip().lower())
    if not m:
        return None
    return '%s:%s' % (m.group(1), m.group(2))


def pci_id_info(pci_id):
    """``{'product', 'architecture', 'kind'}`` for a known id, None otherwise (exact lookup only)."""
    key = normalize_pci_id(pci_id)
    if key is None or key not in PCI_IDS:
        return None
    product, arch, kind = PCI_IDS[key]
    return {'pci_device_id': key, 'product': product, 'architecture': arch, 'kind': kind}


# ---------------------------------------------------------------------------------------------
# Chip code name or product name -> architecture
# ---------------------------------------------------------------------------------------------

# re.ASCII: \d is [0-9], and re.I does not fold the Kelvin sign into a K.
_PRODUCT_RES = tuple((re.compile(pattern, re.I | re.ASCII), arch) for pattern, arch in PRODUCT_PATTERNS)
_CHIP_RE = re.compile(r'\s*(?P<chip>(?P<prefix>%s)[0-9]{3}[A-Z]*)(?![0-9A-Za-z])'
                      % '|'.join(p for p, _a in CHIP_PREFIXES), re.ASCII)


def chip_architecture(name):
    """Architecture of a chip code name at the start of ``name`` (``'GP108 [GeForce GT 1030]'``), or None."""
    if not isinstance(name, str):
        return None
    m = _CHIP_RE.match(name)
    if not m:
        return None
    return dict(CHIP_PREFIXES)[m.group('prefix')]


def product_architecture(name):
    """Architecture of a product name as nvidia-smi prints it (``'NVIDIA H100 80GB HBM3'``), or None."""
    if not isinstance(name, str) or not name.strip():
        return None
    for pattern, arch in _PRODUCT_RES:
        if pattern.search(name):
            return arch
    return None


# ---------------------------------------------------------------------------------------------
# Product name -> nominal device-memory bandwidth (MEMORY_BANDWIDTH_GBPS)
# ---------------------------------------------------------------------------------------------

# What may follow a model in the name nvidia-smi prints and still be that model: its memory size (80GB, 144G), memory
# type (HBM3, HBM3e, GDDR6X) and form factor (PCIe, SXM4, NVL), each after a space or hyphen ("NVIDIA A100-SXM4-40GB",
# "NVIDIA H100 80GB HBM3", "NVIDIA H200 NVL"). A variant whose figure differs has a longer row of its own, which wins.
# Anything else makes another model: "Ti", "SUPER", "D", "Laptop GPU", "Max-Q", "Active", or a letter joined to the
# number (V100S, B200A).
_VARIANT_TAIL_RE = re.compile(r'(?:[\s-]+(?:[0-9]+(?:\.[0-9]+)?GB?|HBM[0-9]e?|GDDR[0-9]+X?|PCIe|SXM[0-9]?|NVL))*'
                              r'[\s-]*\Z', re.IGNORECASE | re.ASCII)
_BANDWIDTH_RES = tuple((re.compile(pattern), gbps) for pattern, gbps, _example in MEMORY_BANDWIDTH_GBPS)


def memory_bandwidth_gbps(name, table=None):
    """The nominal device-memory bandwidth (GB/s) of a GPU named as nvidia-smi prints it, or None for a model that no
    row names.

    A row names the model where its pattern matches and what follows the match in the name is only a memory size,
    memory type or form factor (_VARIANT_TAIL_RE): "NVIDIA GeForce RTX 3090 Ti" is not the RTX 3090, and a model
    without a row of its own has no figure rather than a shorter name's. Of the rows that name it, the longest match
    wins (the most specific: "H100 PCIe" over "H100"), then the first in the table. ``table``: rows as
    MEMORY_BANDWIDTH_GBPS (default that table)."""
    if not isinstance(name, str):
        return None
    rows = _BANDWIDTH_RES if table is None else tuple((re.compile(p), g) for p, g, _e in table)
    best_length, best = -1, None
    for pattern, gbps in rows:
        for match in pattern.finditer(name):
            length = match.end() - match.start()
            if length > best_length and _VARIANT_TAIL_RE.match(name, match.end()):
                best_length, best = length, gbps
    return best
