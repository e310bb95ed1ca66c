# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/acceptance.yml against localhost: without a GPU it says SKIPPED and fails (never a vacuous pass);
with a recorded H200 (fake nvidia-smi and nvcc) it runs every step and names the GPU that computed wrong."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT, needs_ansible_playbook, run_playbook
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path

PLAYBOOK = os.path.join(ROOT, 'playbooks', 'acceptance.yml')
BIN = os.path.dirname(sys.executable)

pytestmark = needs_ansible_playbook

# The "sample" the fake nvcc builds: saxpy/bandwidth/p2p answers chosen by environment variables.
FAKE_SAMPLE = r'''#!/bin/sh
case "$1" in
  bandwidth) echo "bandwidth_gbps=${FAKE_BANDWIDTH:-4300.0}"; exit 0 ;;
  p2p) exit 0 ;;
esac
if [ "$CUDA_VISIBLE_DEVICES" = "${FAKE_WRONG_UUID:-none}" ]; then
  echo "saxpy WRONG: y[17] = 2.000000, expected 4.0"; exit 1
fi
echo "saxpy ok: 1048576 elements = 4.0"
'''


def fake_bin(tmp_path):
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    (tmp_path / 'sample.sh').write_text(FAKE_SAMPLE)
    scripts = {
        'nvidia-smi': '#!/bin/sh\ncase "$*" in\n  "-q -x") cat \'%s\' ;;\n  *compute_cap*) echo 9.0 ;;\n'
                      '  *) echo "nvidia-smi $*" ;;\nesac\n' % fixture_path('nvidia_smi', 'h200_sxm_r580_idle.xml'),
        # nvcc ... -o OUT SRC: "compile" by copying the fake sample
        'nvcc': '#!/bin/sh\nwhile [ "$1" != "-o" ]; do shift; done\ncp \'%s\' "$2"\nchmod 755 "$2"\n'
                % (tmp_path / 'sample.sh'),
    }
    for name, text in scripts.items():
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    return str(bindir)


def run(tmp_path, path, *extra, **env):
    proc = run_playbook(PLAYBOOK, '-e', 'gpuops_acceptance_hosts=localhost', '-e', 'gpuops_acceptance_become=false',
                        '-e', 'gpuops_acceptance_dir=%s' % (tmp_path / 'acceptance'), *extra, env=dict(env, PATH=path))
    return proc.returncode, proc.stdout


def test_syntax_check():
    proc = run_playbook(PLAYBOOK, '--syntax-check')
    assert proc.returncode == 0, proc.stdout


def test_no_gpu_is_skipped_and_not_a_pass(tmp_path):
    rc, out = run(tmp_path, '%s:/usr/bin:/bin' % BIN)
    assert rc != 0, out
    assert 'SKIPPED: no NVIDIA GPU/driver on this host' in out
    assert 'PASSED' not in out


def test_h200_passes_every_step(tmp_path):
    rc, out = run(tmp_path, '%s:%s:/usr/bin:/bin' % (fake_bin(tmp_path), BIN),
                  '-e', 'gpuops_acceptance_nvcc=%s' % (tmp_path / 'bin' / 'nvcc'), '-e', 'gpuops_acceptance_health_fail_on=never')
    assert rc == 0, out
    assert 'GPU 0 (NVIDIA H200): 4300 GB/s (nominal 4800 GB/s, minimum 4080)' in out
    assert 'PASSED: 1 GPU(s)' in out


def test_wrong_result_names_the_gpu(tmp_path):
    rc, out = run(tmp_path, '%s:%s:/usr/bin:/bin' % (fake_bin(tmp_path), BIN),
                  '-e', 'gpuops_acceptance_nvcc=%s' % (tmp_path / 'bin' / 'nvcc'), '-e', 'gpuops_acceptance_health_fail_on=never',
                  FAKE_WRONG_UUID='GPU-00000000-0000-0000-0000-000000000001')
    assert rc != 0
    assert 'GPU 0 (NVIDIA H200, 0000:00:06.0' in out and 'saxpy WRONG' in out, out
    assert 'PASSED' not in out
