# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""amd_gpu_facts: amd-smi, then rocm-smi, then sysfs (hand-built trees in tmp_path); missing tools and no driver give a
reason, never a failure; hostile sysfs (links, FIFOs, huge or odd files) gives unknown values."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_facts
from ansible_collections.gpuops.gpu_server.plugins.modules import amd_gpu_facts
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path, make_executable, read_fixture

GiB = 1024 ** 3


def card(root, n, bus, device='0x740c', vendor='0x1002', pci_class='0x038000', driver='amdgpu', vram=64 * GiB,
         temps=(('edge', 32000, 100000, 105000), ('junction', 35000, 110000, 115000), ('mem', 43000, 95000, 105000)),
         power=89000000, cap=560000000, ras=None, bad_pages=None, busy=0):
    """One card as the kernel lays it out: class/drm/card<n> -> a PCI device directory (links, as in real sysfs)."""
    dev = os.path.join(str(root), 'devices', 'pci0000:00', bus)
    os.makedirs(os.path.join(dev, 'hwmon', 'hwmon%d' % n))
    files = {'vendor': vendor, 'device': device, 'class': pci_class}
    if vram is not None:
        files['mem_info_vram_total'] = str(vram)
    if busy is not None:
        files['gpu_busy_percent'] = str(busy)
    for name, text in files.items():
        with open(os.path.join(dev, name), 'w') as f:
            f.write(text + '\n')
    hw = os.path.join(dev, 'hwmon', 'hwmon%d' % n)
    for i, (label, value, crit, emerg) in enumerate(temps, 1):
        for suffix, text in (('label', label), ('input', value), ('crit', crit), ('emergency', emerg)):
            if text is not None:
                with open(os.path.join(hw, 'temp%d_%s' % (i, suffix)), 'w') as f:
                    f.write('%s\n' % text)
    for name, value in (('power1_average', power), ('power1_cap', cap)):
        if value is not None:
            with open(os.path.join(hw, name), 'w') as f:
                f.write('%s\n' % value)
    if ras is not None or bad_pages is not None:
        os.makedirs(os.path.join(dev, 'ras'))
        for block, (ue, ce) in (ras or {}).items():
            with open(os.path.join(dev, 'ras', '%s_err_count' % block), 'w') as f:
                f.write('ue: %s\nce: %s\n' % (ue, ce))
        if bad_pages is not None:
            with open(os.path.join(dev, 'ras', 'gpu_vram_bad_pages'), 'w') as f:
                f.write(bad_pages)
    if driver:
        drv = os.path.join(str(root), 'bus', 'pci', 'drivers', driver)
        if not os.path.isdir(drv):
            os.makedirs(drv)
        os.symlink(drv, os.path.join(dev, 'driver'))
    drm = os.path.join(str(root), 'class', 'drm', 'card%d' % n)
    os.makedirs(drm)
    os.symlink(dev, os.path.join(drm, 'device'))
    return dev


@pytest.fixture
def sysfs(tmp_path):
    root = tmp_path / 'sys'
    (root / 'class' / 'drm').mkdir(parents=True)
    return root


def facts_of(run_module, sysfs_root, amd_smi=None, rocm_smi=None, **extra):
    args = dict(sysfs_root=str(sysfs_root), amd_smi_path=amd_smi or '/nonexistent/amd-smi',
                rocm_smi_path=rocm_smi or '/nonexistent/rocm-smi')
    args.update(extra)
    result = run_module(amd_gpu_facts.main, args)
    assert not result.failed, result
    assert result['changed'] is False
    return result['ansible_facts']['amd']


def fake_amd_smi(tmp_path, static, metric, topology='[]', rc=0, stderr=''):
    """An amd-smi that prints each document for its subcommand (static, metric, topology)."""
    docs = {}
    for name, text in (('static', static), ('metric', metric), ('topology', topology)):
        path = tmp_path / ('amd-smi.%s.json' % name)
        path.write_text(text)
        docs[name] = str(path)
    exe = tmp_path / 'amd-smi'
    exe.write_text('#!/bin/sh\necho "$@" >> %s\ncase "$1" in\n%s\nesac\n%sexit %d\n' % (
        tmp_path / 'amd-smi.calls', '\n'.join("  %s) cat '%s' ;;" % (k, v) for k, v in docs.items()),
        ("printf '%%s' '%s' >&2\n" % stderr) if stderr else '', rc))
    exe.chmod(0o755)
    return str(exe)


# amd-smi --------------------------------------------------------------------------------------------------------

def test_amd_smi_capture_with_sysfs_filling_what_it_left_out(tmp_path, sysfs, run_module):
    static = json.loads(read_fixture('amd_smi', 'static_mi210_gpu_data.json'))
    static['gpu_data'][0]['bus'] = {'bdf': '0000:83:00.0'}     # the capture has no bdf: give it the card's address
    card(sysfs, 0, '0000:83:00.0', device='0x740f', ras={'umc': (0, 2), 'gfx': (0, 1)},
         bad_pages='0x00000001 : 0x00001000 : R\n0x00000002 : 0x00001000 : P\n')
    exe = fake_amd_smi(tmp_path, json.dumps(static), read_fixture('amd_smi', 'metric_power_flat.json'),
                       read_fixture('amd_smi', 'topology_flat.json'))
    amd = facts_of(run_module, sysfs, amd_smi=exe)
    assert (tmp_path / 'amd-smi.calls').read_text() == 'static --json\nmetric --json\ntopology --json\n'
    assert amd['driver_loaded'] is True and amd['reason'] is None and amd['source'] == 'amd-smi'
    [gpu] = amd['gpus']
    assert (gpu['model'], gpu['gfx_target'], gpu['memory_total_mib']) == ('MI210', 'gfx90a', 65520)
    assert gpu['power_draw_w'] == 10 and gpu['power_limit_w'] == 300    # amd-smi's, not sysfs'
    assert gpu['temperatures_c'] == {'edge': 32.0, 'junction': 35.0, 'mem': 43.0}       # from sysfs
    assert gpu['ecc_errors']['volatile'] == {'corrected': 3, 'uncorrected': 0}          # from sysfs RAS
    assert gpu['bad_pages'] == {'retired': 1, 'pending': 1, 'unreservable': 0}
    assert amd['pci_devices'] == [{'pci_bus_id': '0000:83:00.0', 'pci_device_id': '1002:740f', 'model': 'MI210',
                                   'driver': 'amdgpu'}]
    assert set(gpu) >= {'index', 'name', 'pci_bus_id', 'pci_device_id', 'memory_total_mib', 'temperature_c',
                        'power_draw_w', 'power_limit_w', 'ecc_errors', 'gfx_target', 'xgmi_links'}


def test_a_failing_amd_smi_falls_back_to_rocm_smi(tmp_path, sysfs, run_module):
    card(sysfs, 0, '0000:2f:00.0')
    amd_smi = fake_amd_smi(tmp_path, '', '', rc=1, stderr='Unable to detect any GPU devices')
    rocm = make_executable(tmp_path, 'rocm-smi', stdout_file=fixture_path('rocm_smi', 'mi250_rocm_smi_a.json'))
    amd = facts_of(run_module, sysfs, amd_smi=amd_smi, rocm_smi=rocm)
    assert amd['source'] == 'rocm-smi' and amd['driver_loaded'] is True
    assert 'Unable to detect any GPU devices' in amd['notes'][0]
    [gpu] = amd['gpus']
    assert gpu['model'] == 'MI250' and gpu['memory_total_mib'] == 65536               # VRAM from sysfs
    assert gpu['power_draw_w'] == 89.0                                                  # rocm-smi's


def test_unreadable_amd_smi_output_is_a_note_not_a_failure(tmp_path, sysfs, run_module):
    card(sysfs, 0, '0000:2f:00.0')
    exe = fake_amd_smi(tmp_path, '{"gpu_data": [', '[]')
    amd = facts_of(run_module, sysfs, amd_smi=exe)
    assert amd['source'] == 'sysfs' and amd['driver_loaded'] is True
    assert 'amd-smi static --json printed no valid JSON' in amd['notes'][0]
    assert amd['gpus'][0]['memory_total_mib'] == 65536 and amd['gpus'][0]['model'] == 'MI250X/MI250'


def test_a_broken_topology_still_gives_the_gpus(tmp_path, sysfs, run_module):
    exe = fake_amd_smi(tmp_path, read_fixture('amd_smi', 'static_mi210_gpu_data.json'),
                       read_fixture('amd_smi', 'metric_power_flat.json'), topology='{"x": 1}')
    amd = facts_of(run_module, sysfs, amd_smi=exe)
    assert amd['source'] == 'amd-smi' and amd['gpu_count'] == 1
    assert any('XGMI links not read' in n for n in amd['notes'])
    assert amd['gpus'][0]['xgmi_links'] is None


def test_a_hung_amd_smi_fails_the_module(tmp_path, sysfs, run_module):
    exe = make_executable(tmp_path, 'amd-smi', sleep=30)
    result = run_module(amd_gpu_facts.main, dict(sysfs_root=str(sysfs), amd_smi_path=exe, timeout=1,
                                                 rocm_smi_path='/nonexistent'))
    assert result.failed and 'hung amd-smi' in result['msg']


@pytest.mark.parametrize('timeout', [0, -5])
def test_a_timeout_below_one_is_refused(sysfs, run_module, timeout):
    result = run_module(amd_gpu_facts.main, dict(sysfs_root=str(sysfs), timeout=timeout))
    assert result.failed and result['msg'] == 'timeout must be a positive number, got %d' % timeout


# No ROCm: sysfs -------------------------------------------------------------------------------------------------

def test_sysfs_only_host(sysfs, run_module):
    card(sysfs, 0, '0000:0c:00.0', device='0x74a1', pci_class='0x120000', vram=192 * GiB,
         ras={'umc': (2, 10), 'sdma': (0, 0)}, bad_pages='')
    card(sysfs, 1, '0000:22:00.0', device='0x74a1', pci_class='0x120000', vram=192 * GiB, power=None, cap=None)
    amd = facts_of(run_module, sysfs)
    assert amd['source'] == 'sysfs' and amd['driver_loaded'] is True and amd['gpu_count'] == 2
    assert amd['notes'] == [
        'Command /nonexistent/amd-smi static --json could not be started: No such file or directory',
        'Command /nonexistent/rocm-smi -a --json could not be started: No such file or directory']
    assert [d['driver'] for d in amd['pci_devices']] == ['amdgpu', 'amdgpu']
    assert 'driver' not in amd['gpus'][0]
    g0, g1 = amd['gpus']
    assert (g0['model'], g0['gfx_target'], g0['memory_total_mib']) == ('MI300X', 'gfx942', 196608)
    assert g0['ecc_errors']['volatile'] == {'corrected': 10, 'uncorrected': 2}
    assert g0['bad_pages'] == {'retired': 0, 'pending': 0, 'unreservable': 0}
    assert g0['temperature_limits_c']['junction'] == {'critical': 110.0, 'emergency': 115.0}
    assert (g0['power_draw_w'], g0['power_limit_w']) == (89.0, 560.0)
    assert (g1['power_draw_w'], g1['power_limit_w'], g1['bad_pages']) == (None, None, None)
    assert g1['ecc_errors']['volatile'] == {'corrected': None, 'uncorrected': None}


def test_no_tools_and_no_driver_gives_a_reason(sysfs, run_module):
    card(sysfs, 0, '0000:2f:00.0', driver=None)
    amd = facts_of(run_module, sysfs)
    assert amd['driver_loaded'] is False and amd['gpus'] == [] and amd['gpu_count'] == 0
    assert amd['reason'].startswith('1 AMD GPU(s) on the PCI bus but none is bound to the amdgpu kernel driver')
    assert 'amd-smi' in amd['reason'] and 'rocm-smi' in amd['reason']


def test_no_amd_gpu_at_all(sysfs, run_module):
    card(sysfs, 0, '0000:01:00.0', vendor='0x10de', device='0x2330', driver='nvidia')
    amd = facts_of(run_module, sysfs)
    assert amd['driver_loaded'] is False and amd['pci_devices'] == []
    assert amd['reason'].startswith('no AMD GPU under ')


def test_no_sysfs(tmp_path, run_module):
    amd = facts_of(run_module, tmp_path / 'nothing')
    assert amd['driver_loaded'] is False and amd['reason'].startswith('no DRM devices under ')


def test_tools_not_on_path(tmp_path, run_module, monkeypatch):
    monkeypatch.setenv('PATH', str(tmp_path))
    monkeypatch.setattr(_amd_facts, 'BIN_DIRS', [str(tmp_path)])
    result = run_module(amd_gpu_facts.main, dict(sysfs_root=str(tmp_path)))
    amd = result['ansible_facts']['amd']
    assert amd['notes'] == ['amd-smi was not found on PATH', 'rocm-smi was not found on PATH']
    assert amd['driver_loaded'] is False


def test_non_gpu_functions_are_not_gpus(sysfs, run_module):
    card(sysfs, 0, '0000:2f:00.1', pci_class='0x040300')            # the HD audio function of a Radeon
    assert facts_of(run_module, sysfs)['pci_devices'] == []


# Hostile sysfs: unknown values, never an error ------------------------------------------------------------------

def test_links_at_the_last_component_are_not_followed(tmp_path, sysfs, run_module):
    secret = tmp_path / 'secret'
    secret.write_text('68719476736\n')
    dev = card(sysfs, 0, '0000:2f:00.0', vram=None)
    os.symlink(str(secret), os.path.join(dev, 'mem_info_vram_total'))
    hw = os.path.join(dev, 'hwmon', 'hwmon0', 'temp2_input')
    os.remove(hw)
    os.symlink(str(secret), hw)
    gpu = facts_of(run_module, sysfs)['gpus'][0]
    assert gpu['memory_total_mib'] is None and gpu['temperatures_c']['junction'] is None
    assert gpu['temperatures_c']['edge'] == 32.0


def test_fifos_directories_and_huge_files_are_unknown(tmp_path, sysfs, run_module):
    dev = card(sysfs, 0, '0000:2f:00.0', vram=None, busy=None, ras={'umc': (0, 0)})
    os.mkfifo(os.path.join(dev, 'mem_info_vram_total'))                 # a read would block
    os.mkdir(os.path.join(dev, 'gpu_busy_percent'))
    with open(os.path.join(dev, 'ras', 'gpu_vram_bad_pages'), 'w') as f:
        f.write('0x00000001 : 0x00001000 : R\n' * 10000)                  # over the bound: unknown, not 10000
    gpu = facts_of(run_module, sysfs)['gpus'][0]
    assert gpu['memory_total_mib'] is None and gpu['gpu_busy_percent'] is None and gpu['bad_pages'] is None


@pytest.mark.parametrize('text', ['', 'N/A', '\u0666\u0664\n', '1' * 40, '-5', '12 34', '0x10', '68719476736\r\n9',
                                  '\xff\xfe'])
def test_odd_numbers_in_sysfs_are_unknown(sysfs, run_module, text):
    dev = card(sysfs, 0, '0000:2f:00.0', vram=None)
    with open(os.path.join(dev, 'mem_info_vram_total'), 'w', encoding='utf-8') as f:
        f.write(text)
    gpu = facts_of(run_module, sysfs)['gpus'][0]
    assert gpu['memory_total_mib'] is None


@pytest.mark.parametrize('content', ['ue: x\nce: 1\n', 'ce: 1\n', 'ue: \u0661\nce: 1\n',
                                     'ue: %s\nce: 0\n' % ('9' * 30)])
def test_odd_ras_counts_are_unknown(sysfs, run_module, content):
    dev = card(sysfs, 0, '0000:2f:00.0', ras={})
    with open(os.path.join(dev, 'ras', 'umc_err_count'), 'w', encoding='utf-8') as f:
        f.write(content)
    assert facts_of(run_module, sysfs)['gpus'][0]['ecc_errors']['volatile'] == {'corrected': None, 'uncorrected': None}


@pytest.mark.parametrize('content', ['garbage\n', '0x1 : 0x1000 : X\n', '0x1 : 0x1000 : R\nrm -rf /\n'])
def test_odd_bad_page_tables_are_unknown_not_zero(sysfs, run_module, content):
    card(sysfs, 0, '0000:2f:00.0', bad_pages=content)
    assert facts_of(run_module, sysfs)['gpus'][0]['bad_pages'] is None


def test_unreadable_files_are_unknown(sysfs, run_module, monkeypatch):
    """EACCES (a file mode root ignores, so the denial is simulated at open) gives an unknown value."""
    card(sysfs, 0, '0000:2f:00.0')
    real_open = os.open

    def deny(path, *args):
        if str(path).endswith('mem_info_vram_total'):
            raise PermissionError(13, 'Permission denied', path)
        return real_open(path, *args)
    monkeypatch.setattr(os, 'open', deny)  # the os module _amd_facts reads files through
    gpu = facts_of(run_module, sysfs)['gpus'][0]
    assert gpu['memory_total_mib'] is None and gpu['temperatures_c']['edge'] == 32.0


def test_read_file_bounds(tmp_path):
    big = tmp_path / 'big'
    big.write_text('1' * 100)
    assert _amd_facts.read_file(str(big), 99) is None and _amd_facts.read_file(str(big), 100) == '1' * 100
    assert _amd_facts.read_file(str(tmp_path / 'missing')) is None
