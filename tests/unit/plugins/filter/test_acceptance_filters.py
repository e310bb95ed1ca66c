# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The acceptance filters: loop results of the 8-GPU H200 in, verdicts out; bad input refused with AnsibleFilterError."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import acceptance as f
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path


def read(name):
    with open(fixture_path('nvidia_smi', name)) as fh:
        return fh.read()


HGX = _nvidia_smi.parse(read('hgx_h200_8gpu_r570.xml'))['gpus']
P2P8 = ''.join('p2p %d %d access=yes copy=ok\n' % (a, b) for a in range(8) for b in range(8) if a != b)


def results(*gbps):
    return [{'item': gpu, 'stdout': 'bandwidth_gbps=%s' % value, 'rc': 0} for gpu, value in zip(HGX, gbps)]


def test_filters_are_registered():
    assert set(f.FilterModule().filters()) == {'nvcc_arch_args', 'gpu_bandwidth_verdicts', 'gpu_link_check'}


def test_bandwidth_verdicts_of_the_8_gpu_h200_name_the_slow_one():
    verdicts = f.gpu_bandwidth_verdicts(results(4300, 4310, 4290, 4300, 4305, 3100, 4300, 4300))
    assert [v['ok'] for v in verdicts] == [True] * 5 + [False] + [True] * 2
    assert verdicts[5]['message'].startswith('GPU 5 (NVIDIA H200, 0000:ab:00.0): copy bandwidth 3100 GB/s is below 4080')


def test_bandwidth_verdicts_with_user_figures_and_ratio():
    verdicts = f.gpu_bandwidth_verdicts(results(3100), min_ratio='0.5', nominal=[['H200', 6000]])
    assert verdicts[0]['ok'] and verdicts[0]['nominal_source'] == 'gpu_acceptance_nominal_bandwidth_gbps'


@pytest.mark.parametrize('kwargs,message', [
    ({'min_ratio': 2}, 'minimum ratio'),
    ({'unknown_model': 'ignore'}, 'unknown_model'),
    ({'nominal': [['H200']]}, 'entry 0 must be a pair'),
])
def test_bandwidth_arguments_are_checked_even_without_results(kwargs, message):
    with pytest.raises(AnsibleFilterError, match='gpu_bandwidth_verdicts: .*' + message):
        f.gpu_bandwidth_verdicts([], **kwargs)


@pytest.mark.parametrize('value', ['bandwidth_gbps=1', {'item': 1}, [{'stdout': 'x'}]])
def test_bandwidth_input_that_is_not_loop_results_is_refused(value):
    with pytest.raises(AnsibleFilterError, match='gpu_bandwidth_verdicts: '):
        f.gpu_bandwidth_verdicts(value)


def test_link_check_of_the_8_gpu_h200():
    seen = f.gpu_link_check(read('hgx_h200_8gpu_r570.topo-m.txt'), read('hgx_h200_8gpu_r570.nvlink-s.txt'), P2P8)
    assert seen['problems'] == [] and seen['nvlink_pairs'] == 28


def test_link_check_with_links_down():
    seen = f.gpu_link_check(read('hgx_h200_8gpu_r570.topo-m.txt'),
                            read('hgx_h200_8gpu_r570_gpu3_links_down.nvlink-s.txt'), P2P8)
    assert seen['problems'] == ['GPU 3 (NVIDIA H200): NVLink Link 7, Link 12 inactive while 16 links are up']


def test_link_check_with_the_gpus_of_gpu_facts():
    gpus = [{'index': i, 'name': 'NVIDIA H200', 'pci_bus_id': 'x'} for i in range(8)]
    nvlink = read('hgx_h200_8gpu_r570.nvlink-s.txt')
    seen = f.gpu_link_check(read('hgx_h200_8gpu_r570.topo-m.txt'), nvlink, P2P8, gpus)
    assert seen['problems'] == [] and seen['nvlinks_expected'] == dict((i, 18) for i in range(8))
    dead = f.gpu_link_check(read('hgx_h200_8gpu_r570.topo-m.txt'), '', P2P8, gpus)
    assert len(dead['problems']) == 8 and dead['problems'][0].startswith('GPU 0 (NVIDIA H200): topo -m joins it')


@pytest.mark.parametrize('gpus', ['GPU0', [{'index': 0}], [None], {'0': 'NVIDIA H200'}])
def test_link_check_refuses_gpus_that_are_not_gpu_facts(gpus):
    with pytest.raises(AnsibleFilterError, match='gpu_link_check: gpus'):
        f.gpu_link_check(read('hgx_h200_8gpu_r570.topo-m.txt'), '', P2P8, gpus)


def test_link_check_refuses_text_without_a_matrix():
    with pytest.raises(AnsibleFilterError, match='gpu_link_check: nvidia-smi topo -m: no matrix header'):
        f.gpu_link_check('nvidia-smi: command not found')


def test_nvcc_arch_args():
    assert f.nvcc_arch_args(['9.0'] * 8) == ['-gencode=arch=compute_90,code=sm_90']
    assert f.nvcc_arch_args([], 'sm_75') == ['-arch=sm_75']
    with pytest.raises(AnsibleFilterError, match='nvcc_arch_args: the fallback architecture'):
        f.nvcc_arch_args([], '75')
