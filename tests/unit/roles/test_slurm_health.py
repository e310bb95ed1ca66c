# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The slurm role's health check (files/gpuops-slurm-health.py) on the 8-GPU HGX H200 capture: healthy, an Xid 79 in
the kernel log drains the node, a healed node it drained is resumed, and fake scontrol/nvidia-smi failures."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path, load_script, make_executable

XID_79 = '[  123.456789] NVRM: Xid (PCI:0000:18:00): 79, pid=0, name=, GPU has fallen off the bus.\n'


@pytest.fixture
def health():
    return load_script('gpuops_slurm_health', 'roles', 'slurm', 'files', 'gpuops-slurm-health.py')


def setup(tmp_path, state='State=IDLE', kernel_log='', expected=8):
    """A config with a fake nvidia-smi (the HGX capture) and a fake scontrol that logs its arguments."""
    smi = make_executable(tmp_path, 'nvidia-smi', stdout_file=fixture_path('nvidia_smi', 'hgx_h200_8gpu_r570.xml'))
    log = tmp_path / 'scontrol.log'
    scontrol = tmp_path / 'scontrol'
    scontrol.write_text('#!/bin/sh\necho "$*" >> %s\n[ "$1" = show ] && echo "NodeName=c1 %s" ; exit 0\n' % (log, state))
    os.chmod(str(scontrol), 0o755)
    kernel = tmp_path / 'kern.log'
    kernel.write_text(kernel_log)
    config = tmp_path / 'config.json'
    config.write_text(json.dumps({'node_name': 'c1', 'expected_gpu_count': expected, 'nvidia_smi': smi,
                                  'scontrol': str(scontrol), 'check_kernel_log': True, 'kernel_log_path': str(kernel),
                                  # The capture's GPUs idle with persistence on: the defaults hold.
                                  'thresholds': {'require_persistence_mode': True}, 'timeout': 10}))
    return str(config), log


def calls(log):
    return log.read_text().splitlines() if log.exists() else []


def test_healthy_node_is_left_alone(health, tmp_path, capsys):
    config, log = setup(tmp_path)
    assert health.main(['--config', config]) == 0
    assert calls(log) == ['show node c1 -o']
    # The capture holds two warnings (GPU 3 near its slowdown temperature, GPU 5's PCIe link degraded): a warning
    # never drains.
    assert 'c1: warn (healthy)' in capsys.readouterr().out


def test_an_xid_79_drains_the_node_with_the_reason(health, tmp_path):
    config, log = setup(tmp_path, kernel_log=XID_79)
    assert health.main(['--config', config]) == 1
    drain = calls(log)[1]
    # The fail messages only, not the capture's two warnings.
    assert drain == ('update NodeName=c1 State=DRAIN Reason=gpuops gpu_health: GPU 0 (0000:18:00): Xid 79 at 123.456789: '
                     'GPU has fallen off the bus')


def test_dry_run_judges_and_acts_on_nothing(health, tmp_path, capsys):
    config, log = setup(tmp_path, kernel_log=XID_79)
    assert health.main(['--config', config, '--dry-run']) == 1
    assert calls(log) == []
    out = capsys.readouterr().out
    assert 'c1: fail (' in out and 'fail: GPU 0 (0000:18:00): Xid 79' in out


def test_a_lost_gpu_drains_too(health, tmp_path):
    config, log = setup(tmp_path, expected=9)
    assert health.main(['--config', config]) == 1
    assert 'nvidia-smi describes 8 GPUs, expected 9' in calls(log)[1]


def test_a_healed_node_drained_by_the_check_resumes_and_one_drained_by_hand_stays(health, tmp_path):
    config, log = setup(tmp_path, state='State=IDLE+DRAIN Reason=gpuops gpu_health: GPU 0: Xid 79 [root@t]')
    assert health.main(['--config', config]) == 0
    assert calls(log)[1] == 'update NodeName=c1 State=RESUME'
    config, log = setup(tmp_path, state='State=IDLE+DRAIN Reason=maintenance [root@t]')
    log.unlink()
    assert health.main(['--config', config]) == 0
    assert calls(log) == ['show node c1 -o']


def test_a_cpu_node_has_nothing_to_check(health, tmp_path):
    config, log = setup(tmp_path, expected=0, kernel_log=XID_79)
    assert health.main(['--config', config]) == 0


def test_scontrol_missing_is_said_not_raised(health, tmp_path, capsys):
    config, _log = setup(tmp_path)
    data = json.load(open(config))
    data['scontrol'] = str(tmp_path / 'no-such-scontrol')
    open(config, 'w').write(json.dumps(data))
    assert health.main(['--config', config]) == 0
    assert 'scontrol show node failed' in capsys.readouterr().out


def test_an_unreadable_kernel_log_warns_but_does_not_drain(health, tmp_path):
    config, log = setup(tmp_path)
    data = json.load(open(config))
    data['kernel_log_path'] = str(tmp_path / 'missing.log')
    open(config, 'w').write(json.dumps(data))
    assert health.main(['--config', config]) == 0
    assert calls(log) == ['show node c1 -o']


def test_first_boot_writes_the_settings_of_a_node_with_the_gpus_the_controller_expects(health, tmp_path, capsys):
    config, log = setup(tmp_path, state='State=IDLE+CLOUD+POWERING_UP Gres=gpu:h200:8(S:0-1)', expected=0)
    assert health.main(['--config', config, '--first-boot', 'cloud1']) == 0
    assert calls(log) == ['show node cloud1 -o']
    written = json.loads(open(config).read())
    assert (written['node_name'], written['expected_gpu_count']) == ('cloud1', 8)
    assert 'cloud1: first boot: warn, 8 GPU(s) as expected' in capsys.readouterr().out


def test_first_boot_of_a_node_without_its_gpus_sets_it_down_and_powers_it_down(health, tmp_path, capsys):
    # Negative control of the test above: the same capture, a node the controller expects nine GPUs of.
    config, log = setup(tmp_path, state='State=IDLE+CLOUD+POWERING_UP Gres=gpu:h200:9', expected=0)
    before = open(config).read()
    assert health.main(['--config', config, '--first-boot', 'cloud1']) == 1
    reason = 'Reason=gpuops first boot: nvidia-smi describes 8 GPUs, expected 9'
    # DOWN, then powered down: the node stays DOWN+POWERED_DOWN (POWER_DOWN_FORCE would reset it to IDLE).
    assert calls(log)[1:] == ['update NodeName=cloud1 State=DOWN ' + reason,
                              'update NodeName=cloud1 State=POWER_DOWN ' + reason]
    assert open(config).read() == before
    assert 'not joining (State=DOWN done, State=POWER_DOWN done)' in capsys.readouterr().out


def test_first_boot_without_the_controller_does_not_join(health, tmp_path, capsys):
    config, _log = setup(tmp_path, expected=0)
    settings = json.loads(open(config).read())
    settings['scontrol'] = str(tmp_path / 'no-scontrol')
    open(config, 'w').write(json.dumps(settings))
    assert health.main(['--config', config, '--first-boot', 'cloud1']) == 1
    assert 'first boot: scontrol show node failed' in capsys.readouterr().out
