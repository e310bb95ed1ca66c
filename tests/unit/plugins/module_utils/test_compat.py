# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_torch
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_versions
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_lookup

with open(os.path.join(os.path.dirname(__file__), 'test_compat.yml')) as _f:
    CASES = yaml.safe_load(_f)


@pytest.mark.parametrize('case', CASES, ids=[case['name'] for case in CASES])
def test_check(case):
    result = _compat.check(**case['args'])
    assert result['ok'] is case['ok'], result
    if 'mode' in case:
        assert result['mode'] == case['mode']
    for want in case.get('problems', []):
        assert any(p['subject'] == want['subject'] and want['message'] in p['message'] and p['fix']
                   for p in result['problems']), (want, result['problems'])
    if case['ok']:
        assert result['problems'] == []
    for fragment in case.get('notes_contain', []):
        assert any(fragment in n for n in result['notes']), (fragment, result['notes'])
    if 'suggested_driver_branch' in case:
        assert result['suggested_driver_branch'] == case['suggested_driver_branch']


# The release notes' table, as the issue states it: every CUDA release 10.0 .. 13.0.
@pytest.mark.parametrize('cuda,driver', [
    ('10.0', '410.48'), ('10.1', '418.39'), ('10.2', '440.33'), ('11.0', '450.36.06'), ('11.0.3', '450.51.06'),
    ('11.1', '455.23'), ('11.2', '460.27.03'), ('11.3', '465.19.01'), ('11.4', '470.42.01'), ('11.4.4', '470.82.01'),
    ('11.5', '495.29.05'), ('11.6', '510.39.01'), ('11.7', '515.43.04'), ('11.8', '520.61.05'), ('12.0', '525.60.13'),
    ('12.1', '530.30.02'), ('12.2', '535.54.03'), ('12.2.2', '535.104.05'), ('12.3', '545.23.06'),
    ('12.4', '550.54.14'), ('12.5', '555.42.02'), ('12.6', '560.28.03'), ('12.8', '570.26'), ('12.9', '575.51.03'),
    ('13.0', '580.65.06'),
])
def test_cuda_min_driver_toolkit(cuda, driver):
    assert _compat_cuda.cuda_min_driver(cuda) == driver


@pytest.mark.parametrize('cuda,driver', [('11.0', '450.80.02'), ('11.8', '450.80.02'), ('12.0', '525.60.13'),
                                         ('12.9', '525.60.13'), ('13.0', '580.65.06')])
def test_cuda_min_driver_minor(cuda, driver):
    assert _compat_cuda.cuda_min_driver(cuda, 'minor') == driver


@pytest.mark.parametrize('cuda,mode', [('12.7', 'toolkit'), ('10.2', 'minor'), ('abc', 'toolkit'), ('12.4', 'full')])
def test_cuda_min_driver_refuses(cuda, mode):
    with pytest.raises(ValueError):
        _compat_cuda.cuda_min_driver(cuda, mode)


@pytest.mark.parametrize('driver,cuda', [('535.104.05', '12.2'), ('550.54.15', '12.4'), ('570.86.15', '12.8'),
                                         ('580.65.06', '13.0'), ('470.182.03', '11.4'), ('390.116', '9.1'),
                                         ('520.61.05', '11.8'), ('300.1', None)])
def test_driver_cuda_version(driver, cuda):
    assert _compat_cuda.driver_cuda_version(driver) == cuda


@pytest.mark.parametrize('a,b,result', [('535.104.05', '535.54.03', 1), ('12.4', '12.4.0', 0), ('9.2', '10.0', -1),
                                        ('570.26', '570.124.06', -1)])
def test_compare_versions(a, b, result):
    assert _compat_versions.compare_versions(a, b) == result


@pytest.mark.parametrize('text,branch', [('535', 535), ('535.104.05', 535), ('535-server', 535),
                                         ('nvidia-driver-570-open', 570), (580, 580)])
def test_driver_branch(text, branch):
    assert _compat_versions.driver_branch(text) == branch


@pytest.mark.parametrize('text', ['latest', '', None, True, '5'])
def test_driver_branch_refuses(text):
    with pytest.raises(ValueError):
        _compat_versions.driver_branch(text)


@pytest.mark.parametrize('pci_id,arch,kind', [
    ('10de:102d', 'Kepler', 'gpu'), ('10de:15f8', 'Pascal', 'gpu'), ('10de:15f9', 'Pascal', 'gpu'),
    ('10de:15f7', 'Pascal', 'gpu'), ('10de:1db1', 'Volta', 'gpu'), ('10de:1df6', 'Volta', 'gpu'),
    ('10de:1eb8', 'Turing', 'gpu'), ('10de:20b0', 'Ampere', 'gpu'), ('10de:20b2', 'Ampere', 'gpu'),
    ('10de:20b5', 'Ampere', 'gpu'), ('10de:20f1', 'Ampere', 'gpu'), ('10de:20f3', 'Ampere', 'gpu'),
    ('10de:2236', 'Ampere', 'gpu'), ('10de:20b7', 'Ampere', 'gpu'), ('10de:2235', 'Ampere', 'gpu'),
    ('10de:27b8', 'Ada Lovelace', 'gpu'), ('10de:26b5', 'Ada Lovelace', 'gpu'), ('10de:26b9', 'Ada Lovelace', 'gpu'),
    ('10de:2330', 'Hopper', 'gpu'), ('10DE:2331', 'Hopper', 'gpu'), ('10de:2339', 'Hopper', 'gpu'),
    ('10de:2324', 'Hopper', 'gpu'), ('10de:2335', 'Hopper', 'gpu'), ('10de:2342', 'Hopper', 'gpu'),
    ('10de:2901', 'Blackwell', 'gpu'), ('10de:2204', 'Ampere', 'gpu'), ('10de:2684', 'Ada Lovelace', 'gpu'),
    ('10de:1af1', 'Ampere', 'nvswitch'), ('10de:22a3', 'Hopper', 'nvswitch'),
])
def test_pci_id_exact_lookup(pci_id, arch, kind):
    info = _gpu_lookup.pci_id_info(pci_id)
    assert (info['architecture'], info['kind']) == (arch, kind)


@pytest.mark.parametrize('pci_id', ['10de:2332', '10de:20b1', '8086:2330', 'nonsense'])
def test_pci_id_unknown_is_none(pci_id):
    """No ranges: a neighbouring id is not guessed."""
    assert _gpu_lookup.pci_id_info(pci_id) is None
    assert _compat_gpu.gpu_architecture(pci_id) is None


@pytest.mark.parametrize('name,arch', [
    ('NVIDIA H100 80GB HBM3', 'Hopper'), ('NVIDIA H100 PCIe', 'Hopper'), ('NVIDIA H200', 'Hopper'),
    ('NVIDIA GH200 480GB', 'Hopper'), ('NVIDIA A100-SXM4-80GB', 'Ampere'), ('NVIDIA A100-PCIE-40GB', 'Ampere'),
    ('NVIDIA A10', 'Ampere'), ('NVIDIA A10G', 'Ampere'), ('NVIDIA RTX A6000', 'Ampere'),
    ('NVIDIA GeForce RTX 3090', 'Ampere'), ('Tesla V100-SXM2-32GB', 'Volta'), ('Tesla V100S-PCIE-32GB', 'Volta'),
    ('NVIDIA GeForce RTX 4090', 'Ada Lovelace'), ('NVIDIA L4', 'Ada Lovelace'), ('NVIDIA L40S', 'Ada Lovelace'),
    ('NVIDIA RTX 6000 Ada Generation', 'Ada Lovelace'), ('Tesla T4', 'Turing'), ('Quadro RTX 8000', 'Turing'),
    ('NVIDIA GeForce RTX 2080 Ti', 'Turing'), ('Tesla P100-PCIE-16GB', 'Pascal'), ('Tesla P4', 'Pascal'),
    ('NVIDIA GeForce GTX 1080 Ti', 'Pascal'), ('Tesla M60', 'Maxwell'), ('GeForce GTX TITAN X', 'Maxwell'),
    ('Tesla K80', 'Kepler'), ('Tesla K40m', 'Kepler'), ('NVIDIA B200', 'Blackwell'),
    ('NVIDIA GeForce RTX 5090', 'Blackwell'), ('NVIDIA RTX PRO 6000 Blackwell Server Edition', 'Blackwell'),
    ('Matrox G200eR2', None), ('', None),
])
def test_product_architecture(name, arch):
    assert _gpu_lookup.product_architecture(name) == arch


@pytest.mark.parametrize('branch,arch,ok', [
    ('470', 'Kepler', True), ('525', 'Kepler', False), ('580', 'Maxwell', True), ('590', 'Maxwell', False),
    ('580.65.06', 'Volta', True), ('590.44.01', 'Volta', False), ('470', 'Hopper', False), ('520', 'Hopper', True),
    ('565', 'Blackwell', False), ('570', 'Blackwell', True), ('450', 'Ampere', True), ('440', 'Ampere', False),
    ('535', 'ada', True),
])
def test_driver_supports_architecture(branch, arch, ok):
    assert _compat_gpu.driver_supports_architecture(branch, arch) is ok


def test_architectures_for_branch():
    assert _compat_gpu.architectures_for_branch('470') == ['Kepler', 'Maxwell', 'Pascal', 'Volta', 'Turing', 'Ampere']
    assert _compat_gpu.architectures_for_branch('590') == ['Turing', 'Ampere', 'Ada Lovelace', 'Hopper', 'Blackwell']


@pytest.mark.parametrize('torch,variants', [
    ('1.13.1', ['cu116', 'cu117']), ('2.0.1', ['cu117', 'cu118']), ('2.1.2', ['cu118', 'cu121']),
    ('2.3', ['cu118', 'cu121']), ('2.4.1', ['cu118', 'cu121', 'cu124']), ('2.6.0', ['cu118', 'cu124', 'cu126']),
    ('2.7.1', ['cu118', 'cu126', 'cu128']), ('2.8.0', ['cu126', 'cu128', 'cu129']),
    ('2.9.0+cu130', ['cu126', 'cu128', 'cu130']),
])
def test_torch_cuda_variants(torch, variants):
    assert _compat_torch.torch_cuda_variants(torch) == variants


@pytest.mark.parametrize('torch', ['0.4.1', '3.0', 'torch'])
def test_torch_unknown(torch):
    with pytest.raises(ValueError):
        _compat_torch.torch_cuda_variants(torch)


def test_every_table_architecture_is_canonical():
    for _product, arch, _kind in _data_gpu.PCI_IDS.values():
        assert arch in _compat_gpu.ARCHITECTURE_ORDER
    assert set(_compat_gpu.ARCHITECTURES) == set(_compat_gpu.ARCHITECTURE_ORDER)


def test_minor_compat_floor_never_exceeds_a_toolkit_driver():
    """Within a family, the minor-compat floor is at most the toolkit driver of every later minor release
    (11.0 is the documented exception: it shipped before 450.80.02)."""
    for version in _compat_cuda.known_cuda_versions():
        major, minor = _compat_versions.cuda_major_minor(version)
        if major in _data_cuda.CUDA_MINOR_COMPAT_MIN_DRIVER and (major, minor) != (11, 0):
            assert _compat_versions.version_ge(_compat_cuda.cuda_min_driver(version), _data_cuda.CUDA_MINOR_COMPAT_MIN_DRIVER[major]), version


# ---------------------------------------------------------------------------------------------
# The steps of check(), each on its own

def test_checked_versions_refuses_a_driver_of_another_branch():
    assert _compat._checked_versions('12.4', '535.104.05', '535', None) == ('12.4', '535.104.05', '535', None)
    with pytest.raises(_compat_versions.CompatError, match='contradict'):
        _compat._checked_versions(None, '535.104.05', '550', None)
    with pytest.raises(_compat_versions.CompatError, match='torch version'):
        _compat._checked_versions(None, None, None, 'two')


def test_known_architectures_keep_the_order_given_and_name_the_unknown():
    archs, problems = _compat._known_architectures(['hopper', 'Ampere', 'Hopper', 'Foo'])
    assert archs == ['Hopper', 'Ampere']
    assert [(p['subject'], p['message']) for p in problems] == [('architectures', "unknown GPU architecture 'Foo'")]
    assert _compat._known_architectures(None) == ([], [])


@pytest.mark.parametrize('given,flavour,problem', [
    (None, None, False), ('open', 'open', False), ('proprietary', 'proprietary', False), ('Open', None, True),
])
def test_kernel_module_flavour(given, flavour, problem):
    got, problems = _compat._kernel_module_flavour(given)
    assert got == flavour and bool(problems) is problem
    assert all(p['subject'] == 'kernel_module' for p in problems)


@pytest.mark.parametrize('driver,branch,side', [
    (None, None, (None, 'driver_branch')),
    ('535.104.05', None, (535, 'driver_version')),
    ('535.104.05', '535', (535, 'driver_branch')),
    (None, '570-open', (570, 'driver_branch')),
])
def test_driver_side(driver, branch, side):
    assert _compat._driver_side(driver, branch) == side


def test_branch_fix_names_the_suggestion_or_says_there_is_none():
    assert _compat._branch_fix('570') == "set {driver_branch} to '570'"
    assert 'no single driver branch' in _compat._branch_fix(None)


@pytest.mark.parametrize('branch,mode', [(550, 'full'), (535, 'minor'), (525, 'minor'), (470, 'none')])
def test_branch_cuda_mode(branch, mode):
    # CUDA 12.4: toolkit driver 550.54.14, minor version compatibility from 525.60.13 (CUDA 12.x).
    assert _compat._branch_cuda_mode(branch, '550.54.14', '525.60.13') == mode
    assert _compat._branch_cuda_mode(branch, '550.54.14', None) == ('full' if mode == 'full' else 'none')


def test_cuda_driver_findings_on_the_lowest_branch_note_the_release_floor():
    mode, problems, notes = _compat._cuda_driver_findings('12.4', None, 550, 'driver_branch', 'fix', True)
    assert (mode, problems) == ('full', []) and 'install a release of branch 550' in notes[0]
    mode, problems, notes = _compat._cuda_driver_findings('12.4', None, 535, 'driver_branch', 'fix', False)
    assert mode == 'minor' and problems[0]['fix'] == 'fix' and 'minor version compatibility' in notes[0]
    mode, problems, notes = _compat._cuda_driver_findings('12.99', None, 535, 'driver_branch', 'fix', True)
    assert mode is None and problems[0]['subject'] == 'cuda_version' and notes == []
