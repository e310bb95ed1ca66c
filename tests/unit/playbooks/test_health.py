# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/health.yml against localhost with a recorded H200: one nvidia-smi read, the table, the verdict."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import subprocess
import sys

import pytest

from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(ROOT, 'playbooks', 'health.yml')
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')

pytestmark = pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason='ansible-playbook not in this venv')


def run(tmp_path, kernel_log, *extra):
    calls = tmp_path / 'calls'
    smi = tmp_path / 'nvidia-smi'
    smi.write_text("#!/bin/sh\necho \"$*\" >> '%s'\ncat '%s'\n" % (calls, fixture_path('nvidia_smi', 'h200_sxm_r580_idle.xml')))
    smi.chmod(0o755)
    environ = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.cache', 'collections'),
                   ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1')
    argv = [ANSIBLE_PLAYBOOK, PLAYBOOK, '-i', 'localhost,', '-c', 'local', '-e', 'gpuops_health_hosts=localhost',
            '-e', 'ansible_python_interpreter=%s' % sys.executable, '-e', 'gpuops_health_nvidia_smi_path=%s' % smi,
            '-e', 'gpuops_health_kernel_log_path=%s' % fixture_path('kernel_log', kernel_log)] + list(extra)
    proc = subprocess.run(argv, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120,
                          universal_newlines=True, check=False)
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
