# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Exact lookups over _data_gpu.py: a PCI vendor:device id to its product and architecture, a chip code name
(``GP108``) or a product name (``NVIDIA H100 80GB HBM3``) to its architecture.

Beside the data, not in _compat.py, so that the PCI reader (_pci.py) names devices without the compatibility
logic. Never raises: what is not a string or not known is None.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_gpu import CHIP_PREFIXES, PCI_IDS, PRODUCT_PATTERNS


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
