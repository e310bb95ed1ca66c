# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every row of the knowledge tables (module_utils/_data_*.py) is checked, so that a new row is covered by adding it."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ast
import glob
import os
import re

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_torch
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_versions
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_torch
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_xid
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_lookup
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log

DATA_FILES = sorted(glob.glob(os.path.join(os.path.dirname(_compat.__file__), '_data_*.py')))
ARCHS = [row[0] for row in _data_gpu.ARCHITECTURE_ROWS]


def _release_version(cuda, release):
    """('12.2', 'Update 2') -> '12.2.2'; ('12.2', 'GA') -> '12.2'."""
    update = _compat_cuda._release_key(cuda, release)[2]
    return '%s.%d' % (cuda, update) if update else cuda


@pytest.mark.parametrize('path', DATA_FILES, ids=os.path.basename)
def test_data_modules_hold_only_literals(path):
    with open(path) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue                                       # the docstring
        if isinstance(node, ast.ImportFrom) and node.module == '__future__':
            continue
        assert isinstance(node, ast.Assign), '%s: line %d is not a table' % (path, node.lineno)
        if [t.id for t in node.targets] == ['__metaclass__']:
            continue
        ast.literal_eval(node.value)


# CUDA releases -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('cuda,release,driver', _data_cuda.CUDA_RELEASES,
                         ids=['%s %s' % row[:2] for row in _data_cuda.CUDA_RELEASES])
def test_each_cuda_release_runs_on_its_minimum_driver_and_not_on_the_branch_below(cuda, release, driver):
    version = _release_version(cuda, release)
    assert _compat_cuda.cuda_min_driver(version) == driver
    assert _compat.check(cuda=version, driver=driver)['mode'] == 'full'
    branch = _compat_versions.driver_branch(driver)
    assert _compat.check(cuda=version, branch=str(branch))['mode'] == 'full'
    below = _compat.check(cuda=version, branch=str(branch - 1), allow_minor=False)
    assert not below['ok'] and below['mode'] in ('minor', 'none')
    assert [p['subject'] for p in below['problems']] == ['driver_branch']


def test_cuda_releases_are_in_order_and_their_drivers_never_go_down():
    keys = [_compat_cuda._release_key(cuda, release) for cuda, release, _driver in _data_cuda.CUDA_RELEASES]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    drivers = [driver for _cuda, _release, driver in _data_cuda.CUDA_RELEASES]
    assert all(_compat_versions.compare_versions(older, newer) <= 0 for older, newer in zip(drivers, drivers[1:]))


@pytest.mark.parametrize('major,driver', sorted(_data_cuda.CUDA_MINOR_COMPAT_MIN_DRIVER.items()))
def test_each_minor_compat_floor_is_a_driver_of_a_known_family(major, driver):
    assert any(cuda.startswith('%d.' % major) for cuda, _r, _d in _data_cuda.CUDA_RELEASES)
    _compat_versions.parse_driver_version(driver)


@pytest.mark.parametrize('branch', _data_cuda.KNOWN_BRANCHES)
def test_each_known_branch_drives_some_architecture(branch):
    assert _compat_gpu.architectures_for_branch(str(branch))


def test_lts_branches_are_known_branches():
    assert set(_data_cuda.LTS_BRANCHES) <= set(_data_cuda.KNOWN_BRANCHES)


# GPU architectures, PCI ids, product names, chip code names ----------------------------------------------------

@pytest.mark.parametrize('row', _data_gpu.ARCHITECTURE_ROWS, ids=ARCHS)
def test_each_architecture_row_is_consistent(row):
    name, capabilities, first_cuda, last_cuda, min_branch, last_branch, recommended, open_modules = row
    assert _compat_gpu.canonical_architecture(name.upper()) == name
    assert capabilities and all(re.match(r'^\d+\.\d$', cc) for cc in capabilities)
    assert last_cuda is None or _compat_versions.compare_versions(first_cuda, last_cuda) < 0
    assert min_branch is None or last_branch is None or min_branch < last_branch
    assert recommended is None or recommended >= min_branch
    assert open_modules in ('unsupported', 'supported', 'required')
    # Some known branch drives it, so a preflight can always suggest one.
    assert _compat.suggest_branch(architectures=[name]) is not None


@pytest.mark.parametrize('alias,name', sorted(_data_gpu.ARCHITECTURE_ALIASES.items()))
def test_each_alias_names_a_known_architecture(alias, name):
    assert name in ARCHS and _compat_gpu.canonical_architecture(alias) == name


@pytest.mark.parametrize('pci_id,row', sorted(_data_gpu.PCI_IDS.items()))
def test_each_pci_id_maps_to_a_known_architecture(pci_id, row):
    product, arch, kind = row
    assert _gpu_lookup.normalize_pci_id(pci_id) == pci_id
    assert arch in ARCHS and kind in ('gpu', 'nvswitch') and product
    assert _compat_gpu.gpu_architecture(pci_id) == arch
    assert _compat_gpu.gpu_architecture(pci_id.upper()) == arch


@pytest.mark.parametrize('pattern,arch', _data_gpu.PRODUCT_PATTERNS, ids=[row[1] for row in _data_gpu.PRODUCT_PATTERNS])
def test_each_product_pattern_names_a_known_architecture(pattern, arch):
    assert arch in ARCHS
    re.compile(pattern)


@pytest.mark.parametrize('prefix,arch', _data_gpu.CHIP_PREFIXES)
def test_each_chip_prefix_names_its_architecture(prefix, arch):
    assert _gpu_lookup.chip_architecture('%s100 [Some GPU]' % prefix) == arch


@pytest.mark.parametrize('pattern,gbps,example', _data_gpu.MEMORY_BANDWIDTH_GBPS,
                         ids=[row[2] for row in _data_gpu.MEMORY_BANDWIDTH_GBPS])
def test_each_bandwidth_row_matches_its_example_first(pattern, gbps, example):
    """Its example name reaches this row: no row above it takes the name first."""
    from ansible_collections.gpuops.gpu_server.plugins.module_utils import _acceptance
    re.compile(pattern)
    assert isinstance(gbps, int) and 0 < gbps < 100000
    assert re.search(pattern, example)
    assert _acceptance.nominal_bandwidth(example) == (float(gbps), 'datasheet')
    assert _compat_gpu.gpu_architecture(example) is not None


def test_every_bandwidth_figure_is_in_its_source_comment():
    """Each row of MEMORY_BANDWIDTH_GBPS: the comment block above it names a datasheet or specification and its figure
    (as GB/s, with or without a thousands comma, or as TB/s)."""
    with open(_data_gpu.__file__) as f:
        text = f.read()
    table = text[text.index('MEMORY_BANDWIDTH_GBPS = ('):]
    table = table[:table.index('\n)\n')].splitlines()[1:]
    block, rows = [], 0
    for line in table:
        if line.strip().startswith('#'):
            block = [] if not block or block[-1] is None else block
            block.append(line)
            continue
        if block and block[-1] is not None:
            block.append(None)                              # the block ends; rows below share it until the next one
        gbps = ast.literal_eval(line.strip().rstrip(','))[1]
        source = ' '.join(b for b in block if b)
        assert re.search(r'datasheet|specifications', source), line
        spellings = {'%d' % gbps, '{:,}'.format(gbps), ('%g TB/s' % (gbps / 1000.0))}
        assert any(s in source for s in spellings), 'figure %d of %s is not in its comment: %s' % (gbps, line.strip(), source)
        rows += 1
    assert rows == len(_data_gpu.MEMORY_BANDWIDTH_GBPS)


def test_every_nvlink_count_is_in_its_nvidia_source_comment():
    """Each row of NVLINKS_PER_GPU: the comment block above it (rows below share it until the next one) names an NVIDIA
    source and holds the row's count as a number."""
    with open(_data_gpu.__file__) as f:
        text = f.read()
    table = text[text.index('NVLINKS_PER_GPU = ('):]
    table = table[:table.index('\n)\n')].splitlines()[1:]
    block, rows = [], 0
    for line in table:
        if line.strip().startswith('#'):
            block = [] if not block or block[-1] is None else block
            block.append(line)
            continue
        if block and block[-1] is not None:
            block.append(None)
        count = ast.literal_eval(line.strip().rstrip(','))[1]
        source = ' '.join(b for b in block if b)
        assert 'NVIDIA' in source, line
        assert re.search(r'(?<![0-9.])%d(?![0-9])' % count, source), 'count %d of %s is not in its comment: %s' % (
            count, line.strip(), source)
        rows += 1
    assert rows == len(_data_gpu.NVLINKS_PER_GPU)


# PyTorch ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('torch,variants', sorted(_data_torch.TORCH_CUDA_VARIANTS.items()),
                         ids=['%d.%d' % k for k in sorted(_data_torch.TORCH_CUDA_VARIANTS)])
def test_each_torch_variant_maps_to_a_known_cuda_release(torch, variants):
    assert list(variants) == sorted(variants, key=lambda v: _compat_versions.cuda_major_minor(_compat_torch.tag_cuda(v)))
    for variant in variants:
        assert _compat_torch.tag_cuda(variant) in _compat_cuda.known_cuda_versions(), variant
        assert _compat_torch.cuda_tag(_compat_torch.tag_cuda(variant)) == variant
    assert _compat_torch.torch_cuda_variants('%d.%d.0' % torch) == list(variants)


@pytest.mark.parametrize('first_torch,first_cuda,archs', _data_torch.TORCH_DROPS)
def test_each_torch_drop_names_known_architectures(first_torch, first_cuda, archs):
    assert set(archs) <= set(ARCHS)
    assert '%d.%d' % first_cuda in _compat_cuda.known_cuda_versions()


# Xid codes ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('code,row', sorted(_data_xid.XID_CATALOG.items()))
def test_each_xid_code_is_classified_as_its_row_says(code, row):
    status, description = row
    assert status in ('warn', 'fail') and description
    assert _kernel_log.classify(code) == row
