# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""_data_rocm's rows and _rocm_compat's check: which ROCm source runs which gfx target, and hostile input."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_amd
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_rocm
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _rocm_compat
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import build_sysfs

# The targets of issue 55 for Debian 13 and those read from the packages' files (see _data_rocm's comment).
DEBIAN13 = {'gfx803', 'gfx900', 'gfx906', 'gfx908', 'gfx90a', 'gfx1010', 'gfx1030', 'gfx1100', 'gfx1101', 'gfx1102'}
UBUNTU2604 = {'gfx908', 'gfx90a', 'gfx942', 'gfx1030', 'gfx1100', 'gfx1101', 'gfx1151', 'gfx1200', 'gfx1201'}


def test_rows_are_well_formed():
    keys = [row[0] for row in _data_rocm.ROCM_SOURCES]
    assert len(keys) == len(set(keys))
    for key, label, library, targets in _data_rocm.ROCM_SOURCES:
        assert label and library
        if targets is not None:
            assert len(targets) == len(set(targets)), key
            for target in targets:
                assert _rocm_compat.gfx_target(target, key) == target
    assert set(_data_rocm.DISTRIBUTION_SOURCES.values()) <= set(keys)
    assert set(_data_rocm.DISTRIBUTION_PACKAGES) <= set(keys)
    for key, packages in _data_rocm.DISTRIBUTION_PACKAGES.items():
        assert _rocm_compat.SOURCES[key]['gfx_targets'], '%s installs libraries its row says it lacks' % key
        assert 'rocminfo' in packages


def test_rows_hold_what_the_archives_carry():
    assert set(_rocm_compat.SOURCES['debian13']['gfx_targets']) == DEBIAN13
    assert set(_rocm_compat.SOURCES['ubuntu2404']['gfx_targets']) == DEBIAN13
    assert set(_rocm_compat.SOURCES['ubuntu2604']['gfx_targets']) == UBUNTU2604
    assert _rocm_compat.SOURCES['debian12']['gfx_targets'] is None
    assert _rocm_compat.SOURCES['ubuntu2204']['gfx_targets'] is None
    assert 'gfx942' not in DEBIAN13


def test_every_instinct_model_has_a_source():
    """Each Instinct GPU the collection knows runs on at least one source, and its target is spelled as ours."""
    for row in _data_amd.INSTINCT_MODELS:
        assert _rocm_compat.gfx_target(row[2], row[0]) == row[2]
        assert _rocm_compat.sources_carrying([row[2]]), row[0]


@pytest.mark.parametrize('key, targets, ok', [
    ('debian13', ['gfx90a'], True),          # MI210/MI250: Debian 13 covers them (issue 55)
    ('debian13', ['gfx908'], True),          # MI100
    ('debian13', ['gfx942'], False),         # MI300X: no gfx942 in Debian 13's libraries
    ('debian13', ['gfx90a', 'gfx942'], False),
    ('ubuntu2404', ['gfx942'], False),
    ('ubuntu2604', ['gfx942'], True),
    ('ubuntu2604', ['gfx950'], False),       # MI355X: not in Ubuntu 26.04's build
    ('amd', ['gfx950', 'gfx942', 'gfx90a'], True),
    ('amd', ['gfx906'], False),              # MI50: dropped by ROCm 7
    ('debian12', ['gfx90a'], False),         # no library at all
    ('debian12', [], False),
    ('debian13', [], True),
])
def test_check(key, targets, ok):
    assert (_rocm_compat.check(key, targets) == []) is ok


def test_refusal_names_what_works():
    """MI300X with Debian 13's distribution ROCm: refused, naming Ubuntu 26.04's and AMD's repository."""
    problems = _rocm_compat.check('debian13', ['gfx942'])
    assert len(problems) == 1
    assert "Debian 13's distribution ROCm (librocblas0 5.5.1) carries no code object for gfx942" in problems[0]['message']
    assert "Ubuntu 26.04's distribution ROCm" in problems[0]['fix']
    assert "AMD's ROCm 7 repository" in problems[0]['fix']
    assert '{source} to amd' in problems[0]['fix']


def test_negative_control_family_match_would_pass_mi300x(monkeypatch):
    """A weaker check that compares only the gfx family (gfx9 == gfx9) accepts MI300X on Debian 13; ours does not.
    The parametrized cases above would catch that weakening: prove it by swapping it in."""
    def family_check(key, targets):
        carried = set(t[:4] for t in _rocm_compat.SOURCES[key]['gfx_targets'] or ())
        return [{'subject': 'source'}] if any(t[:4] not in carried for t in targets) else []
    assert family_check('debian13', ['gfx942']) == []          # the weak check lets it through
    assert _rocm_compat.check('debian13', ['gfx942']) != []    # ours refuses
    monkeypatch.setattr(_rocm_compat, 'check', family_check)
    with pytest.raises(AssertionError):
        test_check('debian13', ['gfx942'], False)


@pytest.mark.parametrize('value, expected', [
    ('gfx90a', 'gfx90a'), ('gfx942', 'gfx942'), ('gfx1100', 'gfx1100'), ('gfx803', 'gfx803'),
    ('gfx90a:sramecc+:xnack-', 'gfx90a'), ('amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-', 'gfx942'),
])
def test_gfx_target_accepts_rocminfo_spellings(value, expected):
    assert _rocm_compat.gfx_target(value, 'gfx_targets[0]') == expected


@pytest.mark.parametrize('value', [
    None, True, 942, 9.42, ['gfx942'], {'gfx': 942}, '', ' ', 'gfx942 ', ' gfx942', 'gfx942\n', 'gfx942\r',
    'gfx\n942', 'GFX942', 'gfx94', 'gfx94200', 'gfx9٤2', 'gfx９42', 'gfx942:', 'gfx942:xnack', 'sm_90', 'MI300X',
    'gfx942;rm -rf /', 'gfx' + '9' * 10000,
])
def test_gfx_target_refuses_anything_else(value):
    with pytest.raises(ValueError) as e:
        _rocm_compat.gfx_target(value, 'gfx_targets[3]')
    assert 'gfx_targets[3]' in str(e.value)
    assert len(str(e.value)) < 20400


@pytest.mark.parametrize('gpu, target', [
    ({'pci_device_id': '1002:74a1'}, 'gfx942'),           # MI300X
    ({'pci_device_id': '0x1002:0x74A1'}, 'gfx942'),
    ({'pci_device_id': '1002:740c'}, 'gfx90a'),           # MI250X/MI250: both gfx90a
    ({'pci_device_id': '1002:738c'}, 'gfx908'),           # MI100
    ({'pci_device_id': '1002:ffff'}, None),               # unknown id
    ({'pci_device_id': '1002:74a1', 'gfx_target': 'gfx90a'}, 'gfx90a'),   # a given target wins
    ({'gfx_target': 'gfx1100', 'name': 'Radeon PRO W7900'}, 'gfx1100'),
    ({'name': 'AMD Instinct MI300X'}, 'gfx942'),          # as amd-smi names it, no PCI id
    ({'model': 'MI100'}, 'gfx908'),
    ({'name': 'AMD Radeon Graphics'}, None),              # an APU: unknown, not an error
])
def test_resolve_gpu(gpu, target):
    assert _rocm_compat.resolve_gpu(gpu, 'gpus[0]')[0] == target


@pytest.mark.parametrize('gpu', [
    'gfx942', None, 7, ['1002:74a1'], {'pci_device_id': 0x74a1}, {'pci_device_id': '74a1'},
    {'pci_device_id': '1002:74a1\n'}, {'pci_device_id': '1002：74a1'}, {'gfx_target': 'gfx 942'}, {}, {'name': ''},
    {'pci_bus_id': '0000:0c:00.0'},
])
def test_resolve_gpu_refuses_bad_entries(gpu):
    with pytest.raises(ValueError) as e:
        _rocm_compat.resolve_gpu(gpu, 'gpus[2]')
    assert 'gpus[2]' in str(e.value)


def test_source_key():
    assert _rocm_compat.source_key('distribution', 'Debian', '13') == 'debian13'
    assert _rocm_compat.source_key('distribution', 'Ubuntu', '26.04') == 'ubuntu2604'
    assert _rocm_compat.source_key('amd', 'Debian', '11') == 'amd'
    for bad in [('distribution', 'Debian', '11'), ('distribution', 'Ubuntu', '24'), ('distribution', 'debian', '13'),
                ('distro', 'Debian', '13'), ('AMD', None, None)]:
        with pytest.raises(ValueError, match=r'^source: '):
            _rocm_compat.source_key(*bad)


def test_sysfs_reads_amd_gpus_only(tmp_path):
    root = build_sysfs(tmp_path / 'sys', 'amd_mi300x_node.yml')
    gpus = _rocm_compat.amd_gpus_from_sysfs(root)
    assert [g['pci_device_id'] for g in gpus] == ['1002:74a1'] * 8
    assert gpus[0] == {'pci_bus_id': '0000:0c:00.0', 'pci_device_id': '1002:74a1', 'pci_class': '0x1200'}
    mi250 = _rocm_compat.amd_gpus_from_sysfs(build_sysfs(tmp_path / 'sys2', 'amd_mi250_node.yml'))
    assert len(mi250) == 8 and set(g['pci_class'] for g in mi250) == {'0x0380'}
    assert _rocm_compat.amd_gpus_from_sysfs(str(tmp_path / 'absent')) is None


def test_sysfs_skips_garbage(tmp_path):
    base = tmp_path / 'bus' / 'pci' / 'devices'
    for name, files in {'0000:01:00.0': {'vendor': '0x1002\n', 'device': 'zz', 'class': '0x030000'},
                        '0000:02:00.0': {'vendor': '0x1002', 'device': '0x74a1'},
                        '0000:03:00.0': {'vendor': '\x00\xff', 'device': '0x74a1', 'class': '0x120000'},
                        '0000:04:00.0': {'vendor': '0x1002', 'device': '0x174a1', 'class': '0x120000'},
                        '0000:05:00.0': {'vendor': '0x1002', 'device': '0x740f', 'class': '0x038000'}}.items():
        os.makedirs(str(base / name))
        for key, text in files.items():
            (base / name / key).write_text(text)
    assert [g['pci_bus_id'] for g in _rocm_compat.amd_gpus_from_sysfs(str(tmp_path))] == ['0000:05:00.0']


def test_sources_carrying_follows_the_table():
    assert _rocm_compat.sources_carrying(['gfx942']) == ["Ubuntu 26.04's distribution ROCm", "AMD's ROCm 7 repository"]
    assert _rocm_compat.sources_carrying(['gfx906']) == ["Debian 13's distribution ROCm",
                                                         "Ubuntu 24.04's distribution ROCm"]
    assert _rocm_compat.sources_carrying(['gfx1036']) == []
    assert all(re.match(r"^(Debian|Ubuntu|AMD)", s['label']) for s in _rocm_compat.SOURCES.values())
