# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_monitoring_node textfile collector on the real H200 capture: the T.Limit thresholds reach Prometheus."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path, load_script, make_executable


def load_collector():
    return load_script('gpuops_gpu_collector', 'roles', 'gpu_monitoring_node', 'files', 'gpuops-gpu-collector.py')


def samples(text, metric):
    return [line for line in text.splitlines() if line.startswith(metric + '{')]


def test_h200_on_driver_580_exports_its_slowdown_margin(tmp_path):
    collector = load_collector()
    exe = make_executable(tmp_path, 'nvidia-smi', stdout_file=fixture_path('nvidia_smi', 'h200_sxm_r580_idle.xml'))
    text, success = collector.collect(exe, None, 10)
    assert success
    assert samples(text, 'gpuops_gpu_slowdown_temperature_celsius') == []      # driver 580 prints none
    margin = samples(text, 'gpuops_gpu_slowdown_margin_celsius')
    assert len(margin) == 1 and margin[0].endswith(' 56') and 'gpu="0"' in margin[0]
    assert samples(text, 'gpuops_gpu_tlimit_headroom_celsius')[0].endswith(' 54')
    assert samples(text, 'gpuops_gpu_slowdown_tlimit_celsius')[0].endswith(' -2')


def test_absolute_threshold_gives_the_margin_too(tmp_path):
    collector = load_collector()
    exe = make_executable(tmp_path, 'nvidia-smi', stdout_file=fixture_path('nvidia_smi', 'gtx1660ti_r418.xml'))
    text, _success = collector.collect(exe, None, 10)
    assert samples(text, 'gpuops_gpu_slowdown_margin_celsius')[0].endswith(' 52')
    assert samples(text, 'gpuops_gpu_tlimit_headroom_celsius') == []
