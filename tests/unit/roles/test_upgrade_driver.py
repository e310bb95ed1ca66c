# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/upgrade_driver: every variable is fed by the playbook's name for it, and the one drain hook file runs each
kind's commands (Slurm, Kubernetes, a user command as argv or string, none) in order, for the drain and the undrain."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import role_yaml

ROLE = os.path.join(ROOT, 'roles', 'upgrade_driver')


def test_every_variable_reads_the_playbook_name_that_vars_maps_it_to():
    defaults = role_yaml('upgrade_driver', 'defaults', 'main.yml')
    names = role_yaml('upgrade_driver', 'vars', 'main.yml')['_upgrade_driver_playbook_names']
    assert set(names) == set(defaults)
    for variable, playbook_name in names.items():
        assert playbook_name.startswith('gpuops_upgrade_'), variable
        assert re.match(r"^\{\{ %s \| default\(" % playbook_name, defaults[variable]), (variable, defaults[variable])
    # The argument specs show the same defaults; where a template cannot be the default of its type (bool, int), the
    # description names the playbook's variable and the value.
    options = role_yaml('upgrade_driver', 'meta', 'argument_specs.yml')['argument_specs']['main']['options']
    for name, spec in options.items():
        if 'default' in spec:
            assert spec['default'] == defaults[name], name
        else:
            said = "Default: the playbook's C(%s), else V(" % names[name]
            assert spec['type'] in ('bool', 'int') and said in ' '.join(spec['description']), name


# The hook's drain then undrain, on localhost, with fake scontrol/kubectl/hook commands that log their arguments.
PLAY = """
- hosts: all
  gather_facts: false
  tasks:
    - name: Drain, then undrain
      ansible.builtin.include_role:
        name: gpuops.gpu_server.upgrade_driver
        tasks_from: hook.yml
      vars:
        __upgrade_driver_hook_action: "{{ item }}"
      loop: [drain, undrain]
"""


@pytest.fixture
def fake(tmp_path):
    """A command at tmp_path/<name> that appends '<name> <args>' to tmp_path/log."""
    def make(name):
        path = tmp_path / name
        path.write_text('#!/bin/sh\necho "%s $*" >> "%s"\n' % (name, tmp_path / 'log'))
        path.chmod(0o755)
        return str(path)
    return make


@pytest.fixture
def fake_scontrol(tmp_path):
    """scontrol at tmp_path/scontrol: `show node N -o` prints the node in STATE (not logged), anything else is logged
    as by `fake`."""
    def make(state='IDLE+DRAIN'):
        path = tmp_path / 'scontrol'
        path.write_text('#!/bin/sh\nif [ "$1" = show ]; then echo "NodeName=$3 Arch=x86_64 State=%s Partitions=gpu"; exit 0; fi\n'
                        'echo "scontrol $*" >> "%s"\n' % (state, tmp_path / 'log'))
        path.chmod(0o755)
        return str(path)
    return make


def hook(ansible_play, extra, rc=0):
    # No sudo on the test machine: the hook's become (root on the host) goes through su, root to root.
    proc, _out = ansible_play(PLAY, extra=dict(extra, ansible_become_method='su'))
    assert (proc.returncode == 0) == (rc == 0), proc.stdout
    hook.stdout = proc.stdout
    log = ansible_play.dir / 'log'
    return log.read_text().splitlines() if log.exists() else []


def test_slurm_drains_with_the_reason_then_resumes(ansible_play, fake_scontrol):
    assert hook(ansible_play, {'gpuops_upgrade_drain': 'slurm', 'gpuops_upgrade_scontrol': fake_scontrol(),
                               'gpuops_upgrade_driver_branch': '570'}) == [
        'scontrol update nodename=localhost state=drain reason=gpuops driver upgrade to 570',
        'scontrol update nodename=localhost state=resume']


@pytest.mark.parametrize('state', ['MIXED+DRAIN', 'ALLOCATED+DRAIN', 'IDLE+COMPLETING+DRAIN', 'IDLE'])
def test_slurm_drain_waits_for_the_nodes_jobs_and_fails_closed(ansible_play, fake_scontrol, state):
    # Jobs still on the node after the bound: the hook fails and the node stays drained (no resume in the log).
    log = hook(ansible_play, {'gpuops_upgrade_drain': 'slurm', 'gpuops_upgrade_scontrol': fake_scontrol(state),
                              'gpuops_upgrade_driver_branch': '570', 'gpuops_upgrade_wait_timeout': 2,
                              'gpuops_upgrade_wait_delay': 1}, rc=1)
    assert log == ['scontrol update nodename=localhost state=drain reason=gpuops driver upgrade to 570']
    assert 'Slurm node localhost (localhost) still runs jobs after 2 s' in hook.stdout.replace('\n', ' ')
    assert 'State=%s' % state in hook.stdout


def test_kubernetes_cordons_drains_with_the_wait_timeout_then_uncordons(ansible_play, fake):
    assert hook(ansible_play, {'gpuops_upgrade_drain': 'kubernetes', 'gpuops_upgrade_kubectl': fake('kubectl'),
                               'gpuops_upgrade_kubernetes_node': 'gpu-7', 'gpuops_upgrade_wait_timeout': 60}) == [
        'kubectl cordon gpu-7',
        'kubectl drain gpu-7 --ignore-daemonsets --delete-emptydir-data --timeout=60s',
        'kubectl uncordon gpu-7']


def test_a_command_hook_takes_an_argv_list_or_a_string_without_a_shell(ansible_play, fake):
    command = fake('hook')
    assert hook(ansible_play, {'gpuops_upgrade_drain': 'command', 'gpuops_upgrade_drain_command': [command, 'drained', 'a b'],
                               'gpuops_upgrade_undrain_command': "%s ready 'c d' | true" % command}) == [
        'hook drained a b', 'hook ready c d | true']


def test_the_role_name_wins_over_the_playbook_name_and_none_runs_nothing(ansible_play, fake_scontrol):
    assert hook(ansible_play, {'gpuops_upgrade_drain': 'slurm', 'upgrade_driver_drain': 'none',
                               'gpuops_upgrade_scontrol': fake_scontrol()}) == []
    assert hook(ansible_play, {'gpuops_upgrade_drain': 'none', 'upgrade_driver_drain': 'slurm', 'upgrade_driver_slurm_node': 'n1',
                               'upgrade_driver_drain_reason': 'firmware', 'upgrade_driver_scontrol': fake_scontrol()}) == [
        'scontrol update nodename=n1 state=drain reason=firmware', 'scontrol update nodename=n1 state=resume']
