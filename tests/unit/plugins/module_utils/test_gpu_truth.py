# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a real H200 on driver 580 and older GPUs showed (issue 14): T.Limit temperatures, the PCI ID
database's chip code names, and the CUDA release table."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_versions
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _facts
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_lookup
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pci
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import read_fixture

H200 = 'h200_sxm_r580_idle.xml'


def h200_with_headroom(tlimit):
    """The real H200 capture with its T.Limit headroom changed (a hotter GPU)."""
    text = read_fixture('nvidia_smi', H200)
    assert '<gpu_temp_tlimit>54 C</gpu_temp_tlimit>' in text
    return text.replace('<gpu_temp_tlimit>54 C</gpu_temp_tlimit>', '<gpu_temp_tlimit>%s C</gpu_temp_tlimit>' % tlimit)


def temperature_checks(text):
    facts = _facts.from_report(_nvidia_smi.parse(text), [], pci_ids={})
    return [c for c in _health.evaluate(facts)['checks'] if c['check'] == 'temperature']


def test_h200_on_driver_580_has_a_temperature_check_from_tlimit():
    checks = temperature_checks(read_fixture('nvidia_smi', H200))
    assert len(checks) == 1
    assert checks[0]['status'] == 'ok' and checks[0]['value'] == 33
    assert '56 C below its slowdown temperature' in checks[0]['message']
    assert 'T.Limit' in checks[0]['message']


@pytest.mark.parametrize('tlimit,margin,status', [
    (54, 56, 'ok'), (4, 6, 'ok'), (3, 5, 'warn'), (0, 2, 'warn'), (-2, 0, 'fail'), (-5, -3, 'fail'),
])
def test_tlimit_margin_decides(tlimit, margin, status):
    report = _nvidia_smi.parse(h200_with_headroom(tlimit))
    assert report['gpus'][0]['temperature_slowdown_margin_c'] == margin
    assert [c['status'] for c in temperature_checks(h200_with_headroom(tlimit))] == [status]


def test_absolute_threshold_where_the_driver_reports_no_tlimit():
    checks = temperature_checks(read_fixture('nvidia_smi', 'gtx1660ti_r418.xml'))
    assert [(c['status'], c['value']) for c in checks] == [('ok', 41)]
    assert 'slowdown at 93 C' in checks[0]['message']


def test_no_threshold_at_all_is_judged_against_the_fallback():
    text = read_fixture('nvidia_smi', 'rtx4090_consumer_r550.xml')
    checks = temperature_checks(text)
    assert [c['status'] for c in checks] == ['ok'] and 'reports no slowdown threshold' in checks[0]['message']
    hot = text.replace('<gpu_temp>38 C</gpu_temp>', '<gpu_temp>84 C</gpu_temp>')
    assert hot != text
    assert [c['status'] for c in temperature_checks(hot)] == ['warn']


# --- PCI ID database ---------------------------------------------------------------------------------

def test_pci_ids_excerpt_parses_only_nvidia_devices():
    names, path = _pci.load_pci_ids()
    assert path.endswith('/pci_ids/pci.ids')
    assert names['10de:102d'] == 'GK210GL [Tesla K80]'
    assert names['10de:1d01'] == 'GP108 [GeForce GT 1030]'
    assert names['10de:2330'] == 'GH100[H100 SXM5 80GB]'
    assert '10de:0100' not in names and all(k.startswith('10de:') for k in names)   # Evans & Sutherland's 0100


@pytest.mark.parametrize('pci_id,arch,source', [
    ('10de:102d', 'Kepler', 'pci.ids'),        # Tesla K80, GK210
    ('10de:1d01', 'Pascal', 'pci.ids'),        # GeForce GT 1030, GP108
    ('10de:2182', 'Turing', 'pci.ids'),        # GeForce GTX 1660 Ti, TU116
    ('10de:1c82', 'Pascal', 'pci.ids'),        # GeForce GTX 1050 Ti: only the database knows it
    ('10de:2330', 'Hopper', 'pci.ids'),        # "GH100[H100 SXM5 80GB]": no space before the bracket
    ('10de:2335', 'Hopper', 'pci_device_id'),  # H200: newer than this database, the embedded table knows it
    ('10de:ffff', None, None),
])
def test_architecture_of(pci_id, arch, source):
    names, _path = _pci.load_pci_ids()
    assert _pci.architecture_of(pci_id, names) == (arch, source)


def test_no_database_on_the_host(tmp_path):
    assert _pci.load_pci_ids([str(tmp_path / 'pci.ids')]) == ({}, None)


def test_sysfs_device_named_from_the_database(tmp_path):
    names, _path = _pci.load_pci_ids()
    dev = _pci.describe('0000:01:00.0', '10de', '1c82', _pci.CLASS_VGA, 'nouveau', pci_ids=names)
    assert (dev['architecture'], dev['product']) == ('Pascal', 'GeForce GTX 1050 Ti')


@pytest.mark.parametrize('name,arch', [
    ('GK210GL [Tesla K80]', 'Kepler'), ('GM204GL [Tesla M60]', 'Maxwell'), ('GP108', 'Pascal'),
    ('GV100GL [Tesla V100 SXM2 32GB]', 'Volta'), ('TU116 [GeForce GTX 1660 Ti]', 'Turing'),
    ('GA100 [A100 SXM4 80GB]', 'Ampere'), ('AD102 [GeForce RTX 4090]', 'Ada Lovelace'),
    ('GH100[H100 SXM5 80GB]', 'Hopper'), ('GB202 [GeForce RTX 5090]', 'Blackwell'),
    ('GF100 [GeForce GTX 480]', None), ('GAME', None), (None, None),
])
def test_chip_architecture(name, arch):
    assert _gpu_lookup.chip_architecture(name) == arch


# --- CUDA release table ------------------------------------------------------------------------------

def test_every_release_row_parses_and_minimum_drivers_never_go_down():
    keys = [_compat_cuda._release_key(cuda, release) for cuda, release, _driver in _data_cuda.CUDA_RELEASES]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    drivers = [driver for _cuda, _release, driver in _data_cuda.CUDA_RELEASES]
    for older, newer in zip(drivers, drivers[1:]):
        assert _compat_versions.version_ge(newer, older), (older, newer)
    for cuda, _release, _driver in _data_cuda.CUDA_RELEASES:
        assert cuda in _compat_cuda.known_cuda_versions()


@pytest.mark.parametrize('cuda,driver', [
    ('13.0.2', '580.95.05'), ('13.1', '590.44.01'), ('13.1.1', '590.48.01'), ('13.2', '595.45.04'),
    ('13.2.1', '595.58.03'), ('13.3', '610.43.02'), ('13.3.1', '610.43.02'), ('12.2.1', '535.86.09'),
    ('12.3.1', '545.23.08'), ('11.7.1', '515.48.07'), ('11.6.1', '510.47.03'),
])
def test_cuda_releases_after_13_1_and_missing_updates(cuda, driver):
    assert _compat_cuda.cuda_min_driver(cuda) == driver


def test_cuda_13_2_is_checked_against_its_driver():
    assert _compat.check(cuda='13.2', driver='595.45.04')['mode'] == 'full'
    result = _compat.check(cuda='13.2', driver='580.159.04')
    assert result['ok'] and result['mode'] == 'minor'
    assert _compat_cuda.driver_cuda_version('595.45.04') == '13.2'
    assert int(_compat.check(cuda='13.2', architectures=['Hopper'], allow_minor=False)['suggested_driver_branch']) >= 595


def test_a_malformed_release_row_is_refused():
    with pytest.raises(ValueError, match='neither GA'):
        _compat_cuda._release_key('13.4', 'Developer Preview')
