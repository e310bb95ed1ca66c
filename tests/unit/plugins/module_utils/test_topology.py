# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_topology on the 8-GPU H200 host's topo -m and nvlink -s (tests/unit/fixtures/nvidia_smi/README.md says how they were
made), on variants with NVLink errors, and on the negative controls: PCIe-only GPUs and a single GPU."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _topology as t
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path

H200 = 'NVIDIA H200'


def read(name):
    with open(fixture_path('nvidia_smi', name)) as f:
        return f.read()


def p2p(gpus, override=None):
    """The sample's p2p lines for every ordered pair, all copying right unless override says otherwise."""
    override = override or {}
    return '\n'.join('p2p %d %d %s' % (a, b, override.get((a, b), 'access=yes copy=ok'))
                     for a in range(gpus) for b in range(gpus) if a != b) + '\n'


TOPO8 = read('hgx_h200_8gpu_r570.topo-m.txt')
NVLINK8 = read('hgx_h200_8gpu_r570.nvlink-s.txt')


def test_topo_matrix_of_the_8_gpu_h200():
    topo = t.parse_topo_matrix(TOPO8)
    assert topo['devices'] == ['GPU%d' % i for i in range(8)]
    assert [g['index'] for g in topo['gpus']] == list(range(8))
    for gpu in topo['gpus']:
        assert gpu['links'] == dict((peer, 'NV18') for peer in range(8) if peer != gpu['index'])
        assert gpu['nvlinks'] == dict((peer, 18) for peer in range(8) if peer != gpu['index'])
        assert gpu['gpu_numa_id'] == 'N/A'
    assert topo['gpus'][0]['cpu_affinity'] == '0-47,96-143' and topo['gpus'][0]['numa_affinity'] == '0'
    assert topo['gpus'][7]['cpu_affinity'] == '48-95,144-191' and topo['gpus'][7]['numa_affinity'] == '1'


def test_topo_matrix_aligned_with_spaces_reads_the_same():
    spaced = TOPO8.replace('\t\t', '\t').replace('\t', '    ')
    a, b = t.parse_topo_matrix(TOPO8), t.parse_topo_matrix(spaced)
    assert [g['links'] for g in a['gpus']] == [g['links'] for g in b['gpus']]
    assert [g['cpu_affinity'] for g in a['gpus']] == [g['cpu_affinity'] for g in b['gpus']]


def test_topo_matrix_with_nics_and_pcie_links():
    text = ('\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n'
            'GPU0\t X \tPHB\tPIX\t0-15\t0\t\tN/A\n'
            'GPU1\tPHB\t X \tSYS\t16-31\t1\t\tN/A\n'
            'NIC0\tPIX\tSYS\t X \n\nLegend:\n\n  X    = Self\n')
    topo = t.parse_topo_matrix(text)
    assert topo['devices'] == ['GPU0', 'GPU1', 'NIC0']
    assert topo['gpus'][0]['links'] == {1: 'PHB'} and topo['gpus'][0]['nvlinks'] == {}
    assert topo['gpus'][1]['cpu_affinity'] == '16-31' and topo['gpus'][1]['numa_affinity'] == '1'


@pytest.mark.parametrize('text', ['', 'NVML: Unable to determine the device topology\n', 'GPU0\tX\n'])
def test_topo_without_a_matrix_is_refused(text):
    with pytest.raises(ValueError, match='no matrix header'):
        t.parse_topo_matrix(text)


def test_topo_row_short_of_cells_is_refused():
    with pytest.raises(ValueError, match='row of GPU1 has 1 cells for 2 devices'):
        t.parse_topo_matrix('\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\n')


def test_topo_rejects_what_is_not_text():
    with pytest.raises(ValueError, match='expected the text nvidia-smi printed'):
        t.parse_topo_matrix(['GPU0'])


def test_nvlink_status_of_the_8_gpu_h200():
    gpus = t.parse_nvlink_status(NVLINK8)
    assert [(g['index'], g['name']) for g in gpus] == [(i, H200) for i in range(8)]
    assert gpus[3]['uuid'] == 'GPU-5a1c0e03-6c1d-4e5b-9a2f-3c2b1a000003'
    for gpu in gpus:
        assert [link['link'] for link in gpu['links']] == list(range(18))
        assert all(link['state'] == 'up' and link['gbps'] == 26.562 for link in gpu['links'])


def test_nvlink_status_states():
    text = ('GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-x)\n\t Link 0: 25.781 GB/s\n\t Link 1: <inactive>\n'
            '\t Link 2: Disabled\nGPU 1: Tesla T4 (UUID: GPU-y)\n')
    gpus = t.parse_nvlink_status(text)
    assert [(link['state'], link['gbps']) for link in gpus[0]['links']] == [('up', 25.781), ('inactive', None), ('unknown', None)]
    assert gpus[1]['links'] == []


@pytest.mark.parametrize('text', ['', None, 'NVML: Unable to retrieve NVLink information as all links are inActive\n'])
def test_nvlink_status_without_gpus_is_empty(text):
    assert t.parse_nvlink_status(text) == []


def test_the_8_gpu_h200_with_every_copy_right_has_no_problem():
    seen = t.link_problems(TOPO8, NVLINK8, p2p(8))
    assert seen['problems'] == []
    assert seen['gpus'] == 8 and seen['nvlink_pairs'] == 28 and seen['p2p_ok'] == 56
    assert seen['nvlinks_up'] == dict((i, 18) for i in range(8))


def test_links_down_on_one_gpu_are_named():
    seen = t.link_problems(TOPO8, read('hgx_h200_8gpu_r570_gpu3_links_down.nvlink-s.txt'), p2p(8))
    assert seen['problems'] == ['GPU 3 (NVIDIA H200): NVLink Link 7, Link 12 inactive while 16 links are up']
    assert seen['nvlinks_up'][3] == 16 and seen['nvlinks_up'][2] == 18


def test_links_in_an_unknown_state_are_named_with_their_text():
    text = NVLINK8.replace('GPU 5: NVIDIA H200 (UUID: GPU-5a1c0e05-6c1d-4e5b-9a2f-3c2b1a000005)\n\t Link 0: 26.562 GB/s',
                           'GPU 5: NVIDIA H200 (UUID: GPU-5a1c0e05-6c1d-4e5b-9a2f-3c2b1a000005)\n\t Link 0: Disabled')
    assert text != NVLINK8
    assert t.nvlink_problems(t.parse_nvlink_status(text)) == [
        'GPU 5 (NVIDIA H200): NVLink Link 0 not up (Disabled) while 17 links are up']


def test_nvlink_pair_without_peer_access_is_named_both_ways():
    seen = t.link_problems(TOPO8, NVLINK8, p2p(8, {(2, 6): 'access=no copy=skipped', (6, 2): 'access=no copy=skipped'}))
    assert seen['problems'] == [
        'GPU 2 and GPU 6 are joined by NVLink (NV18) but cannot copy peer to peer (access=no copy=skipped)',
        'GPU 6 and GPU 2 are joined by NVLink (NV18) but cannot copy peer to peer (access=no copy=skipped)']
    assert seen['p2p_ok'] == 54


def test_a_wrong_copy_and_a_missing_result_are_named():
    lines = p2p(8, {(1, 4): 'access=yes copy=WRONG'}).replace('p2p 7 0 access=yes copy=ok\n', '')
    seen = t.link_problems(TOPO8, NVLINK8, lines)
    assert seen['problems'] == [
        'GPU 1 and GPU 4 are joined by NVLink (NV18) but cannot copy peer to peer (access=yes copy=WRONG)',
        'GPU 7 and GPU 0 are joined by NVLink (NV18) but cannot copy peer to peer (no result)',
        'p2p 1 4 access=yes copy=WRONG: the data GPU 1 copied to GPU 4 arrived wrong']


def test_the_sample_failing_before_any_pair_names_every_nvlink_pair():
    seen = t.link_problems(TOPO8, NVLINK8, 'CUDA error: cudaGetDeviceCount(&count): no CUDA-capable device is detected\n')
    assert len(seen['problems']) == 56 and seen['p2p_ok'] == 0


def test_negative_control_pcie_gpus_without_nvlink_need_no_peer_access():
    topo = '\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \tSYS\t0-15\t0\t\tN/A\nGPU1\tSYS\t X \t16-31\t1\t\tN/A\n'
    nvlink = ('GPU 0: NVIDIA L4 (UUID: GPU-a)\n\t Link 0: <inactive>\nGPU 1: NVIDIA L4 (UUID: GPU-b)\n'
              '\t Link 0: <inactive>\n')
    seen = t.link_problems(topo, nvlink, 'p2p 0 1 access=no copy=skipped\np2p 1 0 access=no copy=skipped\n')
    assert seen['problems'] == [] and seen['nvlink_pairs'] == 0 and seen['p2p_ok'] == 0


def test_negative_control_a_single_gpu_has_nothing_to_join():
    topo = '\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-15\t0\t\tN/A\n\nLegend:\n'
    seen = t.link_problems(topo, '', '')
    assert seen == {'problems': [], 'gpus': 1, 'nvlink_pairs': 0, 'p2p_ok': 0, 'nvlinks_up': {}}
