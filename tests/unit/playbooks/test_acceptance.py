# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/acceptance.yml (the gpu_acceptance role) against localhost with a fake nvidia-smi and nvcc: without a GPU
it says SKIPPED and fails (never a vacuous pass); on the 8-GPU H200 capture (tests/unit/fixtures/nvidia_smi/README.md)
it runs every step, multi-GPU links included, and each failure names its GPU; the one-GPU H200 capture passes with the
variable names before 0.3.0; a bad variable is refused before anything is written; check mode writes nothing."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys


from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT, needs_ansible_playbook, run_playbook
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path

PLAYBOOK = os.path.join(ROOT, 'playbooks', 'acceptance.yml')
BIN = os.path.dirname(sys.executable)
HGX = fixture_path('nvidia_smi', 'hgx_h200_8gpu_r570.xml')
UUID3 = 'GPU-5a1c0e03-6c1d-4e5b-9a2f-3c2b1a000003'

pytestmark = needs_ansible_playbook

# The "sample" the fake nvcc builds: saxpy/bandwidth/p2p answers chosen by environment variables. p2p prints the
# sample's line for every ordered pair of FAKE_GPUS GPUs, or the file FAKE_P2P.
FAKE_SAMPLE = r'''#!/bin/sh
case "$1" in
  bandwidth)
    if [ "$CUDA_VISIBLE_DEVICES" = "${FAKE_SLOW_UUID:-none}" ]; then echo "bandwidth_gbps=3000.0"; exit 0; fi
    echo "bandwidth_gbps=${FAKE_BANDWIDTH:-4300.0}"; exit 0 ;;
  p2p)
    if [ -n "$FAKE_P2P" ]; then cat "$FAKE_P2P"; exit "${FAKE_P2P_RC:-0}"; fi
    a=0
    while [ $a -lt "${FAKE_GPUS:-8}" ]; do
      b=0
      while [ $b -lt "${FAKE_GPUS:-8}" ]; do
        if [ $a -ne $b ]; then echo "p2p $a $b access=yes copy=ok"; fi
        b=$((b + 1))
      done
      a=$((a + 1))
    done
    exit 0 ;;
esac
if [ "$CUDA_VISIBLE_DEVICES" = "${FAKE_WRONG_UUID:-none}" ]; then
  echo "saxpy WRONG: y[17] = 2.000000, expected 4.0"; exit 1
fi
echo "saxpy ok: 1048576 elements = 4.0"
'''

FAKE_NVIDIA_SMI = r'''#!/bin/sh
case "$*" in
  "-q -x") cat "$FAKE_XML" ;;
  *compute_cap*) i=0; while [ $i -lt "${FAKE_GPUS:-8}" ]; do echo 9.0; i=$((i + 1)); done ;;
  "topo -m") cat "$FAKE_TOPO" ;;
  "nvlink -s") cat "$FAKE_NVLINK" ;;
  *) echo "nvidia-smi $*" ;;
esac
'''


def fake_bin(tmp_path):
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    (tmp_path / 'sample.sh').write_text(FAKE_SAMPLE)
    scripts = {
        'nvidia-smi': FAKE_NVIDIA_SMI,
        # nvcc ... -o OUT SRC: "compile" by copying the fake sample, and keep the arguments
        'nvcc': '#!/bin/sh\necho "$@" > \'%s\'\nwhile [ "$1" != "-o" ]; do shift; done\ncp \'%s\' "$2"\nchmod 755 "$2"\n'
                % (tmp_path / 'nvcc.args', tmp_path / 'sample.sh'),
    }
    for name, text in scripts.items():
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    return str(bindir)


def run(tmp_path, *extra, **env):
    """The playbook on localhost; with gpus=True (the default) on the fake 8-GPU H200."""
    gpus = env.pop('gpus', True)
    path = ('%s:%s:/usr/bin:/bin' % (fake_bin(tmp_path), BIN)) if gpus else ('%s:/usr/bin:/bin' % BIN)
    fake = {'FAKE_XML': HGX, 'FAKE_GPUS': '8',
            'FAKE_TOPO': fixture_path('nvidia_smi', 'hgx_h200_8gpu_r570.topo-m.txt'),
            'FAKE_NVLINK': fixture_path('nvidia_smi', 'hgx_h200_8gpu_r570.nvlink-s.txt')}
    fake.update(env)
    args = ['-e', 'gpuops_acceptance_hosts=localhost', '-e', 'gpuops_acceptance_become=false',
            '-e', 'gpu_acceptance_dir=%s' % (tmp_path / 'acceptance')]
    if gpus:
        args += ['-e', 'gpu_acceptance_nvcc=%s' % (tmp_path / 'bin' / 'nvcc'), '-e', 'gpu_acceptance_health_fail_on=never']
    proc = run_playbook(PLAYBOOK, *(args + list(extra)), env=dict(fake, PATH=path), timeout=180)
    return proc.returncode, proc.stdout


def test_syntax_check():
    proc = run_playbook(PLAYBOOK, '--syntax-check', local=False)
    assert proc.returncode == 0, proc.stdout


def test_no_gpu_is_skipped_and_not_a_pass(tmp_path):
    rc, out = run(tmp_path, gpus=False)
    assert rc != 0, out
    assert 'SKIPPED: no NVIDIA GPU/driver on this host' in out
    assert 'PASSED' not in out


def test_8_gpu_h200_passes_every_step(tmp_path):
    rc, out = run(tmp_path)
    assert rc == 0, out
    for index, bus in enumerate(['18', '2a', '3a', '5d', '9a', 'ab', 'ba', 'db']):
        assert 'GPU %d (NVIDIA H200, 0000:%s:00.0): 4300 GB/s (nominal 4800 GB/s, minimum 4080)' % (index, bus) in out
    assert 'peer-to-peer: 56 copies right, 28 pairs joined by NVLink' in out, out
    assert 'PASSED: 8 GPU(s)' in out
    # compiled once for the GPUs' compute capability 9.0
    assert (tmp_path / 'nvcc.args').read_text().startswith('-gencode=arch=compute_90,code=sm_90 -o ')
    assert (tmp_path / 'acceptance' / 'sample.cu').read_text().count('cudaMemcpyPeer') == 1


def test_one_gpu_h200_passes_with_the_variable_names_before_0_3_0(tmp_path):
    bindir = fake_bin(tmp_path)
    env = dict(PATH='%s:%s:/usr/bin:/bin' % (bindir, BIN), FAKE_XML=fixture_path('nvidia_smi', 'h200_sxm_r580_idle.xml'),
               FAKE_GPUS='1', FAKE_TOPO='/nonexistent', FAKE_NVLINK='/nonexistent')
    proc = run_playbook(PLAYBOOK, '-e', 'gpuops_acceptance_hosts=localhost', '-e', 'gpuops_acceptance_become=false',
                        '-e', 'gpuops_acceptance_dir=%s' % (tmp_path / 'old'), '-e', 'gpuops_acceptance_nvcc=%s/nvcc' % bindir,
                        '-e', 'gpuops_acceptance_health_fail_on=never', '-e', 'gpuops_acceptance_bandwidth_min_ratio=0.8',
                        env=env, timeout=180)
    assert proc.returncode == 0, proc.stdout
    assert 'GPU 0 (NVIDIA H200, 0000:00:06.0): 4300 GB/s (nominal 4800 GB/s, minimum 3840)' in proc.stdout
    assert 'PASSED: 1 GPU(s)' in proc.stdout and 'peer-to-peer: ' not in proc.stdout
    assert (tmp_path / 'old' / 'sample').exists()


def test_wrong_result_names_the_gpu(tmp_path):
    rc, out = run(tmp_path, FAKE_WRONG_UUID=UUID3)
    assert rc != 0
    assert 'GPU 3 (NVIDIA H200, 0000:5d:00.0, %s) computed wrong' % UUID3 in out and 'saxpy WRONG' in out, out
    assert 'PASSED' not in out


def test_slow_gpu_fails_naming_it(tmp_path):
    rc, out = run(tmp_path, FAKE_SLOW_UUID=UUID3)
    assert rc != 0
    assert 'GPU 3 (NVIDIA H200, 0000:5d:00.0): copy bandwidth 3000 GB/s is below 4080 GB/s' in out, out
    assert 'PASSED' not in out


def test_nvlink_links_down_fail_naming_the_gpu(tmp_path):
    rc, out = run(tmp_path, FAKE_NVLINK=fixture_path('nvidia_smi', 'hgx_h200_8gpu_r570_gpu3_links_down.nvlink-s.txt'))
    assert rc != 0
    assert 'GPU 3 (NVIDIA H200): NVLink Link 7, Link 12 inactive while 16 links are up' in out, out
    assert 'PASSED' not in out


def test_wrong_peer_copy_fails_naming_the_pair(tmp_path):
    p2p = tmp_path / 'p2p.txt'
    p2p.write_text(''.join('p2p %d %d access=yes copy=%s\n' % (a, b, 'WRONG' if (a, b) == (1, 4) else 'ok')
                           for a in range(8) for b in range(8) if a != b))
    rc, out = run(tmp_path, FAKE_P2P=str(p2p), FAKE_P2P_RC='1')
    assert rc != 0
    assert 'peer-to-peer sample failed (rc 1)' in out
    assert 'GPU 1 and GPU 4 are joined by NVLink (NV18) but cannot copy peer to peer (access=yes copy=WRONG)' in out, out
    assert 'PASSED' not in out


def test_bad_ratio_is_refused_before_anything_is_written(tmp_path):
    rc, out = run(tmp_path, '-e', 'gpu_acceptance_bandwidth_min_ratio=1.5')
    assert rc != 0
    assert 'the minimum ratio (gpu_acceptance_bandwidth_min_ratio) must be more than 0 and at most 1' in out, out
    assert not (tmp_path / 'acceptance').exists()


def test_argument_specs_refuse_a_bad_choice(tmp_path):
    rc, out = run(tmp_path, '-e', 'gpu_acceptance_no_gpu=ignore')
    assert rc != 0
    assert 'gpu_acceptance_no_gpu' in out and 'fail, skip' in out, out
    assert not (tmp_path / 'acceptance').exists()


def test_check_mode_runs_the_preflight_only(tmp_path):
    rc, out = run(tmp_path, '--check')
    assert rc == 0, out
    assert 'Check mode: the acceptance test runs the GPUs for real only' in out
    assert not (tmp_path / 'acceptance').exists() and not (tmp_path / 'nvcc.args').exists()
