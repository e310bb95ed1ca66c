# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.module_utils import basic

from ansible_collections.gpuops.gpu_server.plugins.modules import gpu_facts
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import (
    build_sysfs, fixture_path, load_yaml, make_executable, nvidia_smi_with)

EXPECTED = load_yaml('nvidia_smi', 'expected.yml')
NO_DRIVER = load_yaml('nvidia_smi', 'no_driver.yml')


def counting_nvidia_smi(tmp_path, fixture):
    """A fake nvidia-smi that prints a capture and appends its argv to a file, so calls can be counted."""
    log = tmp_path / 'calls'
    path = tmp_path / 'nvidia-smi'
    path.write_text('#!/bin/sh\necho "$@" >> \'%s\'\ncat \'%s\'\n' % (log, fixture_path('nvidia_smi', fixture)))
    path.chmod(0o755)
    return str(path), log


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_facts_from_capture(name, tmp_path, run_module):
    exe, log = counting_nvidia_smi(tmp_path, name)
    result = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=str(tmp_path / 'none')))
    assert log.read_text() == '-q -x\n'          # exactly one run, with exactly these arguments
    nvidia = result['ansible_facts']['nvidia']
    assert result['changed'] is False
    assert nvidia['driver_loaded'] is True and nvidia['reason'] is None
    assert nvidia['driver_version'] == EXPECTED[name]['driver_version']
    assert nvidia['gpu_count'] == EXPECTED[name]['gpu_count'] == len(nvidia['gpus'])
    assert nvidia['attached_gpus'] == EXPECTED[name]['attached_gpus']
    for gpu in nvidia['gpus']:
        assert gpu['architecture'] is not None, gpu['name']


def test_architecture_and_cuda_from_tables_for_old_drivers(tmp_path, run_module):
    """R390 prints neither product_architecture nor cuda_version: the architecture comes from the host's
    pci.ids (GK210GL: Kepler), the CUDA version from the release table."""
    exe, _log = counting_nvidia_smi(tmp_path, 'k80_r390.xml')
    nvidia = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=str(tmp_path)))['ansible_facts']['nvidia']
    assert nvidia['cuda_version'] == '9.1'
    assert [(g['architecture'], g['architecture_source']) for g in nvidia['gpus']] == \
        [('Kepler', 'pci.ids'), ('Kepler', 'pci.ids')]


@pytest.mark.parametrize('fixture,arch', [
    ('k80_r390.xml', 'Kepler'), ('gt1030_r440.xml', 'Pascal'), ('gtx1660ti_r418.xml', 'Turing'),
])
def test_old_gpus_get_their_architecture_from_the_pci_id_database(fixture, arch, tmp_path, run_module):
    """Captures without <product_architecture>: the chip code name in pci.ids names the architecture."""
    exe, _log = counting_nvidia_smi(tmp_path, fixture)
    nvidia = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=str(tmp_path)))['ansible_facts']['nvidia']
    assert set((g['architecture'], g['architecture_source']) for g in nvidia['gpus']) == {(arch, 'pci.ids')}


def test_without_a_pci_id_database_the_table_and_the_name_answer(tmp_path, run_module, monkeypatch):
    from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pci
    monkeypatch.setattr(_pci, 'PCI_IDS_PATHS', (str(tmp_path / 'no-pci.ids'),))
    exe, _log = counting_nvidia_smi(tmp_path, 'gt1030_r440.xml')
    nvidia = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=str(tmp_path)))['ansible_facts']['nvidia']
    assert [(g['architecture'], g['architecture_source']) for g in nvidia['gpus']] == [('Pascal', 'pci_device_id')]


def test_pci_devices_are_listed_with_the_driver(tmp_path, run_module):
    exe, _log = counting_nvidia_smi(tmp_path, 'hgx_h200_8gpu_r570.xml')
    sysfs = build_sysfs(tmp_path / 'sys', 'hgx_h200.yml')
    nvidia = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=sysfs))['ansible_facts']['nvidia']
    kinds = [d['kind'] for d in nvidia['pci_devices']]
    assert kinds.count('gpu') == 8 and kinds.count('nvswitch') == 4
    assert [g['pci_bus_id'] for g in nvidia['gpus']] == \
        [d['pci_bus_id'] for d in nvidia['pci_devices'] if d['kind'] == 'gpu']


@pytest.mark.parametrize('case', sorted(NO_DRIVER))
def test_no_driver_does_not_fail(case, tmp_path, run_module):
    out = NO_DRIVER[case]
    exe = make_executable(tmp_path, 'nvidia-smi', stdout=out['stdout'], stderr=out['stderr'], rc=out['rc'])
    sysfs = build_sysfs(tmp_path / 'sys', 'workstation_no_driver.yml')
    result = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=sysfs))
    assert not result.failed
    nvidia = result['ansible_facts']['nvidia']
    assert nvidia['driver_loaded'] is False
    assert nvidia['gpus'] == [] and nvidia['gpu_count'] == 0
    for fragment in out['reason_contains']:
        assert fragment in nvidia['reason']
    assert [(d['pci_device_id'], d['kind'], d['driver']) for d in nvidia['pci_devices']] == \
        [('10de:2684', 'gpu', 'nouveau'), ('10de:22ba', 'other', 'snd_hda_intel')]


def test_nvidia_smi_not_installed(tmp_path, run_module, monkeypatch):
    real = basic.AnsibleModule.get_bin_path

    def get_bin_path(self, name, *args, **kwargs):
        return None if name == 'nvidia-smi' else real(self, name, *args, **kwargs)
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', get_bin_path)
    result = run_module(gpu_facts.main, dict(sysfs_root=str(tmp_path)))
    nvidia = result['ansible_facts']['nvidia']
    assert nvidia['driver_loaded'] is False
    assert 'nvidia-smi was not found' in nvidia['reason']


def test_nvidia_smi_path_that_does_not_exist(tmp_path, run_module):
    result = run_module(gpu_facts.main, dict(nvidia_smi_path=str(tmp_path / 'nope'), sysfs_root=str(tmp_path)))
    assert result['ansible_facts']['nvidia']['driver_loaded'] is False
    assert 'could not be started' in result['ansible_facts']['nvidia']['reason']


def test_hung_nvidia_smi_fails_clearly(tmp_path, run_module):
    exe = make_executable(tmp_path, 'nvidia-smi', sleep=30)
    result = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, timeout=1, sysfs_root=str(tmp_path)))
    assert result.failed
    assert 'nvidia-smi -q -x' in result['msg'] and 'did not finish within 1 seconds' in result['msg']


def test_garbage_output_fails_clearly(tmp_path, run_module):
    exe = make_executable(tmp_path, 'nvidia-smi', stdout='<nvidia_smi_log><gpu>', rc=0)
    result = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=str(tmp_path)))
    assert result.failed
    assert 'could not be read' in result['msg']


def test_check_mode(tmp_path, run_module):
    exe, log = counting_nvidia_smi(tmp_path, 'a100_mig_r535.xml')
    result = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=str(tmp_path), _ansible_check_mode=True))
    assert result['changed'] is False
    assert result['ansible_facts']['nvidia']['gpus'][0]['mig_mode'] is True
    assert log.read_text() == '-q -x\n'


@pytest.mark.parametrize('report', ['<nvidia_smi_log/>', '<?xml version="1.0" ?>\n<nvidia_smi_log>\n</nvidia_smi_log>\n'])
def test_empty_report_is_not_a_loaded_driver(report, tmp_path, run_module):
    """Issue 17: nvidia-smi exits 0 with an empty report; that says nothing about a loaded driver."""
    exe = make_executable(tmp_path, 'nvidia-smi', stdout=report)
    result = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=str(tmp_path / 'none')))
    nvidia = result['ansible_facts']['nvidia']
    assert not result.failed
    assert nvidia['driver_loaded'] is False and nvidia['driver_version'] is None
    assert 'names no driver version' in nvidia['reason']


@pytest.mark.parametrize('timeout', [0, -5])
def test_timeout_must_be_positive(timeout, tmp_path, run_module):
    exe = make_executable(tmp_path, 'nvidia-smi', stdout='<nvidia_smi_log/>')
    result = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=str(tmp_path), timeout=timeout))
    assert result.failed
    assert 'timeout must be a positive number, got %d' % timeout in result['msg']


@pytest.mark.parametrize('tag,text,key', [
    ('gpu_temp', '9' * 5000 + ' C', 'temperature_c'),                   # int() refuses more than 4300 digits
    ('gpu_temp', '9' * 400 + '.5 C', 'temperature_c'),                  # float() overflows to infinity
    ('total', '\u0668\u0661\u0665\u0665\u0669 MiB', 'memory_total_mib'),  # Arabic-Indic digits
    ('max_power_limit', '9' * 400 + '.5 W', 'power_limit_max_w'),
])
def test_a_figure_that_is_no_reading_is_null(tag, text, key, tmp_path, run_module):
    """Issue 29: such a field is unreadable (null, like N/A); it neither fails the module nor turns into inf."""
    exe = nvidia_smi_with(tmp_path, 'h200_sxm_r580_idle.xml', tag, text)
    result = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=str(tmp_path / 'none')))
    assert not result.failed, result.get('msg')
    gpu = result['ansible_facts']['nvidia']['gpus'][0]
    assert gpu[key] is None
    assert gpu['name'] == 'NVIDIA H200' and gpu['architecture'] == 'Hopper'


def test_an_unreadable_report_fails_with_the_reason(tmp_path, run_module):
    capture = tmp_path / 'capture.xml'
    capture.write_text('<?xml version="1.0"?><!DOCTYPE a [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
                       '<nvidia_smi_log><driver_version>&b;</driver_version></nvidia_smi_log>')
    exe = make_executable(tmp_path, 'nvidia-smi', stdout_file=str(capture))
    result = run_module(gpu_facts.main, dict(nvidia_smi_path=exe, sysfs_root=str(tmp_path / 'none')))
    assert result.failed
    assert 'could not be read' in result['msg']
