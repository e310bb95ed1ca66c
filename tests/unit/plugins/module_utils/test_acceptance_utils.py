# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_acceptance: nvcc's target arguments and the bandwidth verdict, on the GPUs of the recorded captures."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _acceptance as a
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path


def gpus_of(name):
    with open(fixture_path('nvidia_smi', name)) as f:
        return _nvidia_smi.parse(f.read())['gpus']


HGX = gpus_of('hgx_h200_8gpu_r570.xml')


def test_nvcc_args_for_eight_h200():
    assert a.nvcc_arch_args(['9.0'] * 8, 'sm_70') == ['-gencode=arch=compute_90,code=sm_90']


def test_nvcc_args_for_mixed_gpus_keep_the_order_first_seen():
    assert a.nvcc_arch_args(['8.6', ' 9.0 ', '8.6', '[N/A]', ''], 'sm_70') == [
        '-gencode=arch=compute_86,code=sm_86', '-gencode=arch=compute_90,code=sm_90']


@pytest.mark.parametrize('lines', [[], None, ['Field "compute_cap" is not a valid field to query.']])
def test_nvcc_args_fall_back_when_no_capability_is_printed(lines):
    assert a.nvcc_arch_args(lines, 'sm_80') == ['-arch=sm_80']


@pytest.mark.parametrize('fallback', ['', '70', 'sm 70', None, 'sm_70; rm -rf /'])
def test_nvcc_args_refuse_a_bad_fallback(fallback):
    with pytest.raises(ValueError, match='nvcc architecture such as "sm_70"'):
        a.nvcc_arch_args(['9.0'], fallback)


def test_nvcc_args_refuse_text_for_lines():
    with pytest.raises(ValueError, match='expected the lines'):
        a.nvcc_arch_args('9.0', 'sm_70')


@pytest.mark.parametrize('name,gbps', [
    ('NVIDIA H200', 4800.0), ('NVIDIA H100 80GB HBM3', 3350.0), ('NVIDIA A100-SXM4-80GB', 2039.0),
    ('NVIDIA A100-PCIE-40GB', 1555.0), ('Tesla K80', 240.0), ('NVIDIA GeForce RTX 4090', 1008.0),
    ('Tesla V100-SXM2-32GB', 900.0), ('GeForce GT 1030', 48.0), ('GeForce GTX 1660 Ti', 288.0)])
def test_nominal_bandwidth_of_the_recorded_gpus(name, gbps):
    assert a.nominal_bandwidth(name) == (gbps, 'datasheet')


def test_nominal_bandwidth_unknown_model_and_user_pairs_first():
    assert a.nominal_bandwidth('NVIDIA RTX PRO 6000 Blackwell Server Edition') == (None, None)
    assert a.nominal_bandwidth('NVIDIA H200', [['H200', 4000]]) == (4000.0, 'gpu_acceptance_nominal_bandwidth_gbps')
    assert a.nominal_bandwidth('NVIDIA H200', [['L4', 300]]) == (4800.0, 'datasheet')


@pytest.mark.parametrize('extra,message', [
    ('H200=4000', 'must be a list'),
    ([['H200']], 'entry 0 must be a pair'),
    ([['H200', True]], 'entry 0 must be a pair'),
    ([['(H200', 4000]], 'is not a regular expression'),
    ([['H200', 'fast']], 'is not a number of GB/s'),
    ([['L4', 300], ['H200', 0]], 'entry 1: the nominal bandwidth of .H200. must be a number of GB/s more than 0'),
    ([['H200', 'nan']], 'entry 0: the nominal bandwidth of .H200. must be a number of GB/s more than 0'),
    ([['H200', 'inf']], 'entry 0: the nominal bandwidth of .H200. must be a number of GB/s more than 0'),
])
def test_bad_user_pairs_are_refused_naming_the_entry(extra, message):
    with pytest.raises(ValueError, match=message):
        a.nominal_bandwidth('NVIDIA H200', extra)


def test_each_gpu_of_the_8_gpu_h200_passes_at_4300():
    verdicts = [a.bandwidth_verdict(gpu, 'copied 1024 MiB 20 times in 9.9 ms\nbandwidth_gbps=4300.0\n', 0.85) for gpu in HGX]
    assert [v['ok'] for v in verdicts] == [True] * 8
    assert verdicts[3]['message'] == 'GPU 3 (NVIDIA H200, 0000:5d:00.0): 4300 GB/s (nominal 4800 GB/s, minimum 4080)'
    assert verdicts[0]['minimum_gbps'] == pytest.approx(4080.0)


def test_a_slow_gpu_fails_naming_it():
    verdict = a.bandwidth_verdict(HGX[5], 'bandwidth_gbps=3900.5', 0.85)
    assert not verdict['ok']
    assert verdict['message'] == ('GPU 5 (NVIDIA H200, 0000:ab:00.0): copy bandwidth 3900 GB/s is below 4080 GB/s '
                                  '(0.85 x the nominal 4800 GB/s)')


def test_the_boundary_passes_and_just_below_fails():
    assert a.bandwidth_verdict(HGX[0], 'bandwidth_gbps=4080.0', 0.85)['ok']
    assert not a.bandwidth_verdict(HGX[0], 'bandwidth_gbps=4079.9', 0.85)['ok']


def test_unknown_model_fails_or_warns():
    gpu = {'index': 0, 'name': 'NVIDIA RTX PRO 6000 Blackwell Server Edition', 'pci_bus_id': '0000:01:00.0'}
    failed = a.bandwidth_verdict(gpu, 'bandwidth_gbps=1500', 0.85)
    warned = a.bandwidth_verdict(gpu, 'bandwidth_gbps=1500', 0.85, unknown_model='warn')
    assert not failed['ok'] and warned['ok']
    assert 'add [name regex, GB/s] to gpu_acceptance_nominal_bandwidth_gbps' in failed['message']
    assert warned['message'].endswith('(not compared)')


def test_no_measurement_fails_even_for_a_known_model():
    verdict = a.bandwidth_verdict(HGX[0], 'CUDA error: cudaMalloc(&src, bytes): out of memory\n', 0.85)
    assert not verdict['ok'] and verdict['measured_gbps'] is None
    assert 'printed no bandwidth_gbps= line: CUDA error' in verdict['message']


@pytest.mark.parametrize('ratio', [0, -0.5, 1.5, 'much', None, float('nan')])
def test_bad_ratio_is_refused(ratio):
    with pytest.raises(ValueError, match='minimum ratio'):
        a.bandwidth_verdict(HGX[0], 'bandwidth_gbps=4300', ratio)


def test_ratio_as_text_from_extra_vars_is_read():
    assert a.bandwidth_verdict(HGX[0], 'bandwidth_gbps=4300', '0.9')['minimum_gbps'] == pytest.approx(4320.0)


def test_bad_unknown_model_is_refused():
    with pytest.raises(ValueError, match=r"unknown_model \(gpu_acceptance_unknown_model\) must be 'fail' or 'warn'"):
        a.bandwidth_verdict(HGX[0], 'bandwidth_gbps=4300', 0.85, unknown_model='skip')
