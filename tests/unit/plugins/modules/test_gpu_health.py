# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import time

import pytest
import yaml

from ansible.module_utils import basic

from ansible_collections.gpuops.gpu_server.plugins.modules import gpu_health
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import (
    build_sysfs, fixture_path, load_yaml, make_executable, nvidia_smi_with)

with open(os.path.join(os.path.dirname(__file__), 'test_gpu_health.yml')) as _f:
    CASES = yaml.safe_load(_f)
NO_DRIVER = load_yaml('nvidia_smi', 'no_driver.yml')


def fake_nvidia_smi(tmp_path, spec):
    if 'fixture' in spec:
        return make_executable(tmp_path, 'nvidia-smi', stdout_file=fixture_path('nvidia_smi', spec['fixture']))
    out = NO_DRIVER[spec['no_driver']]
    return make_executable(tmp_path, 'nvidia-smi', stdout=out['stdout'], stderr=out['stderr'], rc=out['rc'])


@pytest.mark.parametrize('case', CASES, ids=[case['name'] for case in CASES])
def test_health_case(case, tmp_path, run_module):
    sysfs = build_sysfs(tmp_path / 'sys', case['sysfs']) if case['sysfs'] else str(tmp_path / 'no-sysfs')
    args = dict(case['args'])
    args.update(nvidia_smi_path=fake_nvidia_smi(tmp_path, case['nvidia_smi']), sysfs_root=sysfs,
                kernel_log_path=fixture_path('kernel_log', case['kernel_log']))
    result = run_module(gpu_health.main, args)
    assert result['status'] == case['status'], result['checks']
    assert result.failed is case['failed'], result.get('msg')
    assert result['changed'] is False
    not_ok = sorted([c['check'], c['gpu'] if c['gpu'] is not None else -1, c['status']]
                    for c in result['checks'] if c['status'] != 'ok')
    want = sorted([c, g if g is not None else -1, s] for c, g, s in case['not_ok'])
    assert not_ok == want
    for fragment in case.get('msg_contains', []):
        assert fragment in result['msg']
    assert result['kernel_log_source'] == 'file'
    rank = {'ok': 0, 'warn': 1, 'fail': 2}
    assert result['reaches'] == {'warn': rank[result['status']] >= 1, 'fail': rank[result['status']] >= 2,
                                 'never': False}


def test_ok_checks_are_reported_too(tmp_path, run_module):
    args = dict(nvidia_smi_path=fake_nvidia_smi(tmp_path, {'fixture': 'a100_mig_r535.xml'}),
                sysfs_root=str(tmp_path), kernel_log_path=fixture_path('kernel_log', 'no_xid.txt'))
    result = run_module(gpu_health.main, args)
    assert result['status'] == 'ok'
    checks = set(c['check'] for c in result['checks'])
    assert {'driver_loaded', 'gpu_count', 'ecc_uncorrectable', 'ecc_correctable', 'row_remapping', 'pcie_link_width',
            'temperature', 'persistence_mode', 'clock_slowdown'} <= checks
    assert 'retired_pages' not in checks      # A100 reports N/A: it uses row remapping instead


def test_check_mode_reads_the_same(tmp_path, run_module):
    args = dict(nvidia_smi_path=fake_nvidia_smi(tmp_path, {'fixture': 'a100_ecc_remap_r525.xml'}),
                sysfs_root=str(tmp_path), kernel_log_path=fixture_path('kernel_log', 'dmesg_ctime.txt'), fail_on='never')
    normal = run_module(gpu_health.main, args)
    args['_ansible_check_mode'] = True
    checked = run_module(gpu_health.main, args)
    assert checked['checks'] == normal['checks']
    assert checked['changed'] is False


def test_hung_nvidia_smi_fails(tmp_path, run_module):
    args = dict(nvidia_smi_path=make_executable(tmp_path, 'nvidia-smi', sleep=30), timeout=1,
                sysfs_root=str(tmp_path), kernel_log_path=fixture_path('kernel_log', 'no_xid.txt'))
    result = run_module(gpu_health.main, args)
    assert result.failed
    assert 'did not finish within 1 seconds' in result['msg']


def test_unreadable_kernel_log_path_fails(tmp_path, run_module):
    args = dict(nvidia_smi_path=fake_nvidia_smi(tmp_path, {'fixture': 'a100_mig_r535.xml'}),
                sysfs_root=str(tmp_path), kernel_log_path=str(tmp_path / 'missing.log'))
    result = run_module(gpu_health.main, args)
    assert result.failed
    assert 'missing.log could not be read' in result['msg']


@pytest.fixture
def readers(tmp_path, monkeypatch):
    """Fake journalctl and dmesg that the module finds instead of the host's."""
    def make(journal_stdout='', journal_stderr='', journal_rc=0, dmesg_fixture='dmesg_raw.txt'):
        bin_dir = tmp_path / 'bin'
        bin_dir.mkdir()
        tools = {
            'journalctl': make_executable(bin_dir, 'journalctl', stdout=journal_stdout, stderr=journal_stderr,
                                          rc=journal_rc),
            'dmesg': make_executable(bin_dir, 'dmesg', stdout_file=fixture_path('kernel_log', dmesg_fixture)),
        }
        real = basic.AnsibleModule.get_bin_path

        def get_bin_path(self, arg, required=False, opt_dirs=None):
            if arg in tools:
                return tools[arg]
            return real(self, arg, required=required, opt_dirs=opt_dirs)
        monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', get_bin_path)
    return make


def host_args(tmp_path, **extra):
    args = dict(nvidia_smi_path=fake_nvidia_smi(tmp_path, {'fixture': 'a100_mig_r535.xml'}), sysfs_root=str(tmp_path))
    args.update(extra)
    return args


def test_empty_journal_does_not_hide_the_xids_in_dmesg(tmp_path, run_module, readers):
    """Issue 17: journald keeps no kernel messages, journalctl -q answers nothing with exit 0; dmesg has the Xids."""
    readers()
    result = run_module(gpu_health.main, host_args(tmp_path, fail_on='never'))
    assert result['kernel_log_source'] == 'dmesg'
    assert [e['code'] for e in result['xid_events']] == [13, 13, 43, 79]
    assert result['status'] == 'fail'


def test_bad_kernel_log_since_fails(tmp_path, run_module, readers):
    readers(journal_stderr='Failed to parse timestamp: not-a-time\n', journal_rc=1)
    result = run_module(gpu_health.main, host_args(tmp_path, kernel_log_since='not-a-time', fail_on='never'))
    assert result.failed
    assert "kernel_log_since 'not-a-time' is not a time journalctl understands" in result['msg']


@pytest.mark.parametrize('since', ['', '   '])
def test_empty_kernel_log_since_fails(since, tmp_path, run_module):
    result = run_module(gpu_health.main, host_args(tmp_path, kernel_log_since=since))
    assert result.failed and 'kernel_log_since must not be empty' in result['msg']


@pytest.mark.parametrize('kind', ['fifo', 'dev_zero', 'directory'])
def test_kernel_log_path_that_is_not_a_file_fails_at_once(kind, tmp_path, run_module):
    if kind == 'fifo':
        path = str(tmp_path / 'fifo')
        os.mkfifo(path)
    elif kind == 'dev_zero':
        path = '/dev/zero'
    else:
        path = str(tmp_path)
    start = time.monotonic()
    result = run_module(gpu_health.main, host_args(tmp_path, kernel_log_path=path))
    assert time.monotonic() - start < 10
    assert result.failed
    assert 'kernel_log_path %s is ' % path in result['msg'] and 'not a regular file' in result['msg']


@pytest.mark.parametrize('option,value,needs', [
    ('expected_gpu_count', -1, '0 or more'), ('ecc_correctable_max', -1, '0 or more'),
    ('retired_pages_max', -5, 'a positive number'), ('retired_pages_max', 0, 'a positive number'),
    ('temperature_margin_c', -3, '0 or more'), ('timeout', 0, 'a positive number'), ('timeout', -1, 'a positive number'),
])
def test_out_of_range_options_fail(option, value, needs, tmp_path, run_module):
    result = run_module(gpu_health.main, host_args(tmp_path, kernel_log_path=fixture_path('kernel_log', 'no_xid.txt'),
                                                   **{option: value}))
    assert result.failed
    assert result['msg'] == '%s must be %s, got %d' % (option, needs, value)


def test_empty_report_fails_the_driver_check(tmp_path, run_module):
    """Issue 17: an empty <nvidia_smi_log/> is not 'NVIDIA driver None loaded'."""
    args = host_args(tmp_path, kernel_log_path=fixture_path('kernel_log', 'no_xid.txt'), fail_on='never')
    args['nvidia_smi_path'] = make_executable(tmp_path, 'nvidia-smi', stdout='<nvidia_smi_log/>')
    result = run_module(gpu_health.main, args)
    driver = [c for c in result['checks'] if c['check'] == 'driver_loaded']
    assert [c['status'] for c in driver] == ['fail']
    assert 'None' not in driver[0]['message'] and 'names no driver version' in driver[0]['message']


# Issue 29: junk in nvidia-smi's report or the kernel log is judged, never a crash.


@pytest.mark.parametrize('text', ['9' * 400 + '.5 C', '9' * 5000 + ' C'])
def test_temperature_that_is_no_reading_is_judged_without_it(text, tmp_path, run_module):
    """Issue 29: a temperature that overflowed to infinity made the module raise OverflowError ('%d' of inf);
    one of 5000 digits raised ValueError. Now it is unreadable: the margin to T.Limit is judged alone."""
    args = dict(nvidia_smi_path=nvidia_smi_with(tmp_path, 'h200_sxm_r580_idle.xml', 'gpu_temp', text),
                sysfs_root=str(tmp_path), kernel_log_path=fixture_path('kernel_log', 'no_xid.txt'), fail_on='never')
    result = run_module(gpu_health.main, args)
    assert not result.failed, result.get('msg')
    assert result['nvidia']['gpus'][0]['temperature_c'] is None
    temperature = [c for c in result['checks'] if c['check'] == 'temperature']
    assert [(c['status'], c['value']) for c in temperature] == [('ok', 56)]


def test_xid_with_an_unreadable_code_warns(tmp_path, run_module):
    """Issue 29: a 5000-digit Xid code raised ValueError; it is an Xid whose code could not be read (warn)."""
    log = tmp_path / 'kern.log'
    log.write_text('[ 12.5] NVRM: Xid (PCI:0000:00:06): %s, pid=1, name=x\n' % ('7' * 5000))
    args = dict(nvidia_smi_path=fake_nvidia_smi(tmp_path, {'fixture': 'h200_sxm_r580_idle.xml'}),
                sysfs_root=str(tmp_path), kernel_log_path=str(log), fail_on='never')
    result = run_module(gpu_health.main, args)
    xid = [c for c in result['checks'] if c['check'] == 'xid']
    assert [(c['status'], c['value'], c['gpu']) for c in xid] == [('warn', None, 0)]
    assert 'Xid ? at 12.5' in xid[0]['message']
    assert result['xid_events'][0]['code'] is None
