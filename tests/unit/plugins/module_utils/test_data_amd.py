# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every row of _data_amd.py is checked, and the lookups over it (_amd_gpu.py) give only what the rows give."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_amd

MODELS = [row[0] for row in _data_amd.INSTINCT_MODELS]
# The minimum: these models each have a row and a PCI id.
REQUIRED = ('MI100', 'MI210', 'MI250', 'MI250X', 'MI300X', 'MI300A', 'MI325X')
# gfx targets by architecture (ROCm gpu-arch-specs table: CDNA gfx908, CDNA2 gfx90a, CDNA3 gfx942).
ARCH_TARGETS = {'CDNA': 'gfx908', 'CDNA2': 'gfx90a', 'CDNA3': 'gfx942'}


@pytest.mark.parametrize('row', _data_amd.INSTINCT_MODELS, ids=MODELS)
def test_each_model_row_is_well_formed(row):
    model, arch, gfx, per_package, mem_gib, gbps, links = row
    assert re.match(r'MI[0-9]{3}[AX]?\Z', model)
    assert ARCH_TARGETS[arch] == gfx
    assert per_package in (1, 2)
    assert isinstance(mem_gib, int) and 16 <= mem_gib <= 512
    assert gbps is None or (isinstance(gbps, int) and 1000 <= gbps <= 10000)
    assert links is None or (isinstance(links, int) and 1 <= links <= 8)


def test_every_required_model_has_a_row_and_an_id():
    assert len(set(MODELS)) == len(MODELS)
    named = set(m for _product, models in _data_amd.PCI_IDS.values() for m in models)
    for model in REQUIRED:
        assert model in MODELS and model in named, model


@pytest.mark.parametrize('pci_id', sorted(_data_amd.PCI_IDS))
def test_each_pci_id_names_its_models_in_the_pci_ids_name(pci_id):
    product, models = _data_amd.PCI_IDS[pci_id]
    assert re.match(r'1002:[0-9a-f]{4}\Z', pci_id)
    assert pci_id.startswith(_data_amd.AMD_PCI_VENDOR + ':')
    for model in models:
        assert model in MODELS
        assert re.search(r'(?<![0-9A-Z])%s(?![0-9A-Z])' % model, product), (pci_id, model)


def test_the_two_model_id_gives_only_the_shared_figures():
    info = _amd_gpu.pci_id_info('1002:740C')
    assert info['models'] == ['MI250X', 'MI250'] and info['gfx_target'] == 'gfx90a'
    assert info['memory_gib'] == 128 and info['memory_bandwidth_gbps'] == 3200
    assert info['xgmi_links'] is None                     # MI250: 6; MI250X: unsourced -> not a shared figure
    assert _amd_gpu.model_info('MI250')['xgmi_links'] == 6


@pytest.mark.parametrize('text,expected', [
    ('1002:74a1', 'MI300X'), ('0x1002 0x74A1', 'MI300X'), (' 1002:74a5\n', 'MI325X'), ('1002:740f', 'MI210'),
    ('1002:7388', None),            # Arcturus GL-XL: pci.ids names no product
    ('10de:2330', None), ('1002:74a', None), ('1002:74a1x', None), ('', None), (None, None), (0x74a1, None),
    ('\uff11002:74a1', None),       # a fullwidth digit is no hex digit
    (['1002:74a1'], None),
])
def test_pci_id_lookup_is_exact(text, expected):
    info = _amd_gpu.pci_id_info(text)
    assert (info['model'] if info else None) == expected


@pytest.mark.parametrize('name,expected', [
    ('AMD Instinct MI300X', 'MI300X'), ('Instinct MI250X / MI250', 'MI250X/MI250'), ('MI210', 'MI210'),
    ('AMD Instinct MI300X OAM', 'MI300X'),
    ('AMD Instinct MI3000X', None), ('MI300XT', None), ('Radeon RX 7900 XTX', None), ('', None), (None, None),
    (300, None), ('MI\u0663\u0660\u0660X', None),      # Arabic-Indic digits are not the model number
])
def test_name_lookup_names_whole_models_only(name, expected):
    info = _amd_gpu.name_info(name)
    assert (info['model'] if info else None) == expected


def test_model_lookup_is_exact():
    assert _amd_gpu.model_info('MI300A')['gfx_target'] == 'gfx942'
    assert _amd_gpu.model_info('MI300A')['memory_bandwidth_gbps'] is None      # unsourced, left None
    assert _amd_gpu.model_info('mi300a') is None and _amd_gpu.model_info(None) is None
