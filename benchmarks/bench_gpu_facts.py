#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How long gpu_facts takes: parsing an 8-GPU capture, and a whole module run against a fake nvidia-smi.

Run from the repository root:  .venv/bin/python benchmarks/bench_gpu_facts.py [--runs N]
The module run goes through a fresh Python interpreter per run (as Ansible runs a module), with a fake
nvidia-smi that prints the recorded capture, so it measures interpreter start, imports, the subprocess,
parsing and JSON output; not Ansible's transport.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(ROOT, '.cache', 'collections')
CAPTURE = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'nvidia_smi', 'hgx_h200_8gpu_r570.xml')
sys.path.insert(0, COLLECTIONS)

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi  # noqa: E402


def bench_parse(runs):
    with open(CAPTURE) as f:
        text = f.read()
    assert len(_nvidia_smi.parse(text)['gpus']) == 8
    timer = timeit.Timer(lambda: _nvidia_smi.parse(text))
    samples = [t / 10.0 for t in timer.repeat(repeat=runs, number=10)]
    return samples, len(text)


def bench_module(runs):
    tmp = tempfile.mkdtemp(prefix='bench-gpu-facts-')
    fake = os.path.join(tmp, 'nvidia-smi')
    with open(fake, 'w') as f:
        f.write("#!/bin/sh\ncat '%s'\n" % CAPTURE)
    os.chmod(fake, 0o755)
    args = os.path.join(tmp, 'args.json')
    with open(args, 'w') as f:
        json.dump({'ANSIBLE_MODULE_ARGS': {'nvidia_smi_path': fake, 'sysfs_root': tmp}}, f)
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    argv = [sys.executable, '-m', 'ansible_collections.gpuops.gpu_server.plugins.modules.gpu_facts', args]
    samples = []
    for _i in range(runs):
        start = time.perf_counter()
        out = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout
        samples.append(time.perf_counter() - start)
        assert json.loads(out)['ansible_facts']['nvidia']['gpu_count'] == 8
    # The fake nvidia-smi alone, to tell our cost from the subprocess cost.
    fake_samples = []
    for _i in range(runs):
        start = time.perf_counter()
        subprocess.run([fake], stdout=subprocess.PIPE, check=True)
        fake_samples.append(time.perf_counter() - start)
    return samples, fake_samples


def fmt(samples, unit=1e3, suffix='ms'):
    return 'median %.3f %s (min %.3f, max %.3f, n=%d)' % (
        statistics.median(samples) * unit, suffix, min(samples) * unit, max(samples) * unit, len(samples))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--runs', type=int, default=200, help='parse repetitions (module runs: a tenth of it)')
    opts = parser.parse_args()
    parse_samples, size = bench_parse(opts.runs)
    print('parse 8-GPU capture (%d bytes):      %s' % (size, fmt(parse_samples)))
    module_samples, fake_samples = bench_module(max(5, opts.runs // 10))
    print('gpu_facts module run (fresh python): %s' % fmt(module_samples))
    print('  of which fake nvidia-smi alone:    %s' % fmt(fake_samples))


if __name__ == '__main__':
    main()
