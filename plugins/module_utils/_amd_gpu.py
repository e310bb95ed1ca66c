# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Exact lookups over _data_amd.py: a PCI vendor:device id or a model name to an Instinct model's gfx target, memory,
bandwidth and XGMI links.

An id that can be two models (``1002:740c``, MI250X or MI250) gives each figure the models share and None for a
figure they do not (the link count). Never raises: what is not a string or not known is None.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_amd import INSTINCT_MODELS, PCI_IDS

FIELDS = ('architecture', 'gfx_target', 'gpus_per_package', 'memory_gib', 'memory_bandwidth_gbps', 'xgmi_links')

_MODELS = dict((row[0], dict(zip(FIELDS, row[1:]))) for row in INSTINCT_MODELS)
_PCI_ID_RE = re.compile(r'(?:0x)?([0-9a-f]{4})[:\s]+(?:0x)?([0-9a-f]{4})\Z', re.ASCII)
# "MI300X", "AMD Instinct MI300X", "Instinct MI250X / MI250": the model names, as whole words (re.ASCII: no other
# digits).
_MODEL_RE = re.compile(r'(?<![0-9A-Za-z])MI[0-9]{3}[A-Z]?(?![0-9A-Za-z])', re.ASCII)


def normalize_pci_id(text):
    """``'1002:74A1'``, ``'0x1002 0x74a1'`` -> ``'1002:74a1'``; None when not a PCI vendor:device id."""
    if not isinstance(text, str):
        return None
    m = _PCI_ID_RE.match(text.strip().lower())
    return '%s:%s' % (m.group(1), m.group(2)) if m else None


def _merge(models):
    rows = [_MODELS[m] for m in models if m in _MODELS]
    if not rows:
        return None
    info = {'models': list(models), 'model': '/'.join(models)}
    for field in FIELDS:
        values = set(row[field] for row in rows)
        info[field] = values.pop() if len(values) == 1 else None
    return info


def model_info(model):
    """The row of one model name (``'MI300X'``, exact, upper case), None when unknown."""
    if not isinstance(model, str) or model not in _MODELS:
        return None
    return _merge((model,))


def pci_id_info(pci_id):
    """``{'pci_device_id', 'product', 'model', 'models', <FIELDS>}`` for a known id, None otherwise."""
    key = normalize_pci_id(pci_id)
    if key is None or key not in PCI_IDS:
        return None
    product, models = PCI_IDS[key]
    info = _merge(models)
    info.update(pci_device_id=key, product=product)
    return info


def name_info(name):
    """The models a product name names (``'AMD Instinct MI250X / MI250'``), merged as for an id; None when the name
    names no known model."""
    if not isinstance(name, str):
        return None
    found = []
    for model in _MODEL_RE.findall(name):
        if model in _MODELS and model not in found:
            found.append(model)
    return _merge(found) if found else None
