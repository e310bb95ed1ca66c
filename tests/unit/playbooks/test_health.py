# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/health.yml against localhost with a recorded H200: one nvidia-smi read, the table, the verdict."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT, needs_ansible_playbook, run_playbook
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path

PLAYBOOK = os.path.join(ROOT, 'playbooks', 'health.yml')

pytestmark = needs_ansible_playbook


def run(tmp_path, kernel_log, *extra):
    calls = tmp_path / 'calls'
    smi = tmp_path / 'nvidia-smi'
    smi.write_text("#!/bin/sh\necho \"$*\" >> '%s'\ncat '%s'\n" % (calls, fixture_path('nvidia_smi', 'h200_sxm_r580_idle.xml')))
    smi.chmod(0o755)
    proc = run_playbook(PLAYBOOK, '-e', 'gpuops_health_hosts=localhost', '-e', 'gpuops_health_nvidia_smi_path=%s' % smi,
                        '-e', 'gpuops_health_kernel_log_path=%s' % fixture_path('kernel_log', kernel_log), *extra)
    return proc.returncode, proc.stdout, calls.read_text().splitlines()


def test_healthy_h200_reads_nvidia_smi_once_and_prints_its_line(tmp_path):
    rc, out, calls = run(tmp_path, 'no_xid.txt', '-e', 'gpuops_health_fail_on=fail')
    assert rc == 0, out
    assert calls == ['-q -x']
    assert 'HOST                     GPU NAME                         STATUS FAILING CHECKS' in out
    assert 'localhost                0   NVIDIA H200' in out, out


def test_xid_events_fail_the_host_after_the_table(tmp_path):
    rc, out, _calls = run(tmp_path, 'journal_short_iso.txt')
    assert rc != 0, out
    assert 'FAILING CHECKS' in out and 'xid' in out
    assert 'GPU health is fail' in out


def test_fail_on_never_only_reports(tmp_path):
    rc, out, _calls = run(tmp_path, 'journal_short_iso.txt', '-e', 'gpuops_health_fail_on=never')
    assert rc == 0, out
