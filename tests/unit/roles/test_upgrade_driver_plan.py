# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The whole upgrade_driver role on this machine in check mode (which stops at the plan), with a recorded H200 on
driver 580 and a new branch: the driver mode, where no kernel fact is read.

The plan's message once read `_upgrade_driver_in_container`, a fact only the kernel mode sets, and failed every driver
upgrade before the drain (molecule nvidia_driver_cuda_repo_590 found it). Here both modes reach the plan; a host already
on the branch is the negative control (no plan printed)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import needs_ansible_playbook, run_playbook
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path

pytestmark = needs_ansible_playbook

PLAY = """
- hosts: all
  gather_facts: false
  roles:
    - role: gpuops.gpu_server.upgrade_driver
"""


def run(tmp_path, branch):
    smi = tmp_path / 'nvidia-smi'
    smi.write_text("#!/bin/sh\ncat '%s'\n" % fixture_path('nvidia_smi', 'h200_sxm_r580_idle.xml'))
    smi.chmod(0o755)
    playbook = tmp_path / 'play.yml'
    playbook.write_text(PLAY)
    proc = run_playbook(playbook, '--check', '-e', 'upgrade_driver_branch=%s' % branch,
                        '-e', 'upgrade_driver_nvidia_smi_path=%s' % smi, '-e', 'upgrade_driver_drain=none')
    return proc.returncode, proc.stdout


@pytest.mark.parametrize('branch', ['590', '590-open'])
def test_the_driver_mode_reaches_the_plan(tmp_path, branch):
    rc, out = run(tmp_path, branch)
    assert rc == 0, out
    assert 'TASK [gpuops.gpu_server.upgrade_driver : Show the plan for the host]' in out
    assert 'is undefined' not in out, out
    assert 'PLAN localhost: driver 580.' in out and '-> branch %s;' % branch in out, out


def test_a_host_on_the_branch_gets_no_plan(tmp_path):
    rc, out = run(tmp_path, '580')
    assert rc == 0, out
    assert 'already runs driver 580' in out, out
    assert 'PLAN localhost' not in out, out
