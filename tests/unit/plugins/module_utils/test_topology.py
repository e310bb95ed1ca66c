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
    assert seen == {'problems': [], 'gpus': 1, 'nvlink_pairs': 0, 'p2p_ok': 0, 'nvlinks_up': {}, 'nvlinks_expected': {}}


# Issue 52, item 10: dead NVLinks, SXM boards without NVLink, fewer links than the model has, the worst p2p result. ----

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_gpu  # noqa: E402
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi  # noqa: E402

HGX_GPUS = _nvidia_smi.parse(read('hgx_h200_8gpu_r570.xml'))['gpus']
REAL_H200 = _nvidia_smi.parse(read('h200_sxm_r580_idle.xml'))['gpus']          # recorded on a real H200 SXM
# The matrix of 8 GPUs that no NVLink joins: PCIe within a NUMA node, SYS across.
TOPO8_PCIE = TOPO8
for _a in range(8):
    for _b in range(8):
        if _a != _b:
            TOPO8_PCIE = TOPO8_PCIE.replace('NV18', 'NODE' if (_a < 4) == (_b < 4) else 'SYS', 1)
OLD_CLASSES = ('are joined by NVLink (', 'copy=WRONG: the data', 'links are up')


def gpu_block(text, index):
    """The lines of GPU index in nvlink -s text (its GPU line and its Link lines)."""
    lines = text.splitlines(True)
    start = next(i for i, line in enumerate(lines) if line.startswith('GPU %d:' % index))
    end = next((i for i, line in enumerate(lines[start + 1:], start + 1) if line.startswith('GPU ')), len(lines))
    return ''.join(lines[start:end])


def with_links(text, index, transform):
    block = gpu_block(text, index)
    changed = ''.join(line if line.startswith('GPU ') else transform(line) for line in block.splitlines(True))
    assert changed != block or transform('x') == 'x'
    return text.replace(block, changed)


def inactive(line):
    return line.replace('26.562 GB/s', '<inactive>')


def only_new_classes(problems):
    """None of the messages is one the code before issue 52 gave (the negative control: with those inputs, the old
    checks found nothing, so the host passed)."""
    return not any(c in p for p in problems for c in OLD_CLASSES)


def test_the_real_h200_passes_and_its_model_has_18_nvlinks():
    """The H200 SXM recorded for this project (one GPU in a VM): nothing to join, and the data knows its count."""
    assert [(g['index'], g['name']) for g in REAL_H200] == [(0, 'NVIDIA H200')]
    topo = '\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-15\t0\t\tN/A\n\nLegend:\n'
    seen = t.link_problems(topo, '', '', REAL_H200)
    assert seen['problems'] == [] and seen['nvlinks_expected'] == {0: 18}


def test_the_8_gpu_h200_passes_with_its_gpus():
    seen = t.link_problems(TOPO8, NVLINK8, p2p(8), HGX_GPUS)
    assert seen['problems'] == []
    assert seen['nvlinks_expected'] == dict((i, 18) for i in range(8))


@pytest.mark.parametrize('gpus', [None, HGX_GPUS], ids=['names from nvlink -s', 'names from gpu_facts'])
def test_a_gpu_shown_nv18_with_every_link_inactive_fails_naming_it(gpus):
    nvlink = with_links(NVLINK8, 3, inactive)
    seen = t.link_problems(TOPO8, nvlink, p2p(8), gpus)      # PCIe carries the copies: every copy arrives right
    assert seen['problems'] == [
        'GPU 3 (NVIDIA H200): topo -m joins it by NVLink to GPU 0 (NV18), GPU 1 (NV18), GPU 2 (NV18), GPU 4 (NV18), '
        'GPU 5 (NV18), GPU 6 (NV18), GPU 7 (NV18), but all its 18 NVLinks are inactive: peer copies go over PCIe']
    assert seen['nvlinks_up'][3] == 0
    assert only_new_classes(seen['problems'])


def test_a_bridged_pair_of_an_uncounted_model_with_inactive_links_fails_too():
    """Not a model of the table (a pair of RTX 3090 joined by a bridge): topo -m's NV4 with no link up still fails."""
    topo = '\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \tNV4\t0-15\t0\t\tN/A\nGPU1\tNV4\t X \t0-15\t0\t\tN/A\n'
    nvlink = ''.join('GPU %d: NVIDIA GeForce RTX 3090 (UUID: GPU-%d)\n' % (i, i) + ''.join(
        '\t Link %d: <inactive>\n' % n for n in range(4)) for i in range(2))
    seen = t.link_problems(topo, nvlink, p2p(2))
    assert [p.split(':')[0] for p in seen['problems']] == ['GPU 0 (NVIDIA GeForce RTX 3090)', 'GPU 1 (NVIDIA GeForce RTX 3090)']
    assert seen['nvlinks_expected'] == {}


@pytest.mark.parametrize('nvlink', [
    '', 'NVML: Unable to retrieve NVLink information as all links are inActive\n'])
def test_nv_in_topo_without_any_nvlink_status_fails_every_such_gpu(nvlink):
    seen = t.link_problems(TOPO8, nvlink, p2p(8), HGX_GPUS)
    assert len(seen['problems']) == 8
    assert all('nvidia-smi nvlink -s shows no link of it' in p for p in seen['problems'])


@pytest.mark.parametrize('nvlink', [
    '', 'NVML: Unable to retrieve NVLink information as all links are inActive\n', 'all inactive'])
def test_an_sxm_board_with_no_nvlink_pair_fails(nvlink):
    if nvlink == 'all inactive':
        nvlink = NVLINK8.replace('26.562 GB/s', '<inactive>')
    seen = t.link_problems(TOPO8_PCIE, nvlink, p2p(8, dict(((a, b), 'access=no copy=skipped')
                                                           for a in range(8) for b in range(8))), HGX_GPUS)
    assert len(seen['problems']) == 8
    assert seen['problems'][0].startswith(
        'GPU 0 (NVIDIA H200) has 18 NVLinks (an SXM module, _data_gpu.NVLINKS_PER_GPU) but topo -m joins it to no '
        'other GPU by NVLink (GPU1 NODE, GPU2 NODE, GPU3 NODE, GPU4 SYS, GPU5 SYS, GPU6 SYS, GPU7 SYS)')
    assert seen['nvlink_pairs'] == 0
    assert only_new_classes(seen['problems'])


def test_an_sxm_board_without_gpu_facts_is_judged_from_the_nvlink_names():
    seen = t.link_problems(TOPO8_PCIE, NVLINK8.replace('26.562 GB/s', '<inactive>'), '')
    assert len(seen['problems']) == 8


def test_fewer_links_up_than_the_model_has_fails():
    """nvidia-smi lists 12 links of GPU 5, all up: the H200 has 18 (the other six are not even listed)."""
    block = gpu_block(NVLINK8, 5)
    short = ''.join(line for line in block.splitlines(True) if not any(
        line.strip().startswith('Link %d:' % n) for n in range(12, 18)))
    seen = t.link_problems(TOPO8, NVLINK8.replace(block, short), p2p(8), HGX_GPUS)
    assert seen['problems'] == ['GPU 5 (NVIDIA H200): 12 of its 18 NVLinks up (nvidia-smi nvlink -s lists 12): lost '
                                'NVLink bandwidth']
    assert only_new_classes(seen['problems'])


def test_a_partly_inactive_gpu_is_named_once():
    seen = t.link_problems(TOPO8, read('hgx_h200_8gpu_r570_gpu3_links_down.nvlink-s.txt'), p2p(8), HGX_GPUS)
    assert seen['problems'] == ['GPU 3 (NVIDIA H200): NVLink Link 7, Link 12 inactive while 16 links are up']


@pytest.mark.parametrize('lines,kept', [
    (['access=yes copy=WRONG', 'access=yes copy=ok'], 'WRONG'),     # the reproduction
    (['access=yes copy=ok', 'access=yes copy=WRONG'], 'WRONG'),
    (['access=yes copy=ok', 'access=yes copy=WRONG', 'access=yes copy=ok'], 'WRONG'),
    (['access=no copy=skipped', 'access=yes copy=ok'], 'skipped'),
    (['access=yes copy=failed', 'access=no copy=skipped', 'access=yes copy=ok'], 'failed'),
    (['access=yes copy=ok', 'access=yes copy=ok'], 'ok'),
])
def test_a_pair_keeps_its_worst_result(lines, kept):
    text = ''.join('p2p 1 4 %s\n' % line for line in lines)
    assert t.parse_p2p(text)[(1, 4)]['copy'] == kept


def test_ok_after_wrong_is_still_a_wrong_copy():
    lines = p2p(8, {(1, 4): 'access=yes copy=WRONG'}) + 'p2p 1 4 access=yes copy=ok\n'
    seen = t.link_problems(TOPO8, NVLINK8, lines, HGX_GPUS)
    assert seen['problems'] == [
        'GPU 1 and GPU 4 are joined by NVLink (NV18) but cannot copy peer to peer (access=yes copy=WRONG)',
        'p2p 1 4 access=yes copy=WRONG: the data GPU 1 copied to GPU 4 arrived wrong']
    assert seen['p2p_ok'] == 55


def test_negative_control_last_result_wins_hid_the_wrong_copy():
    """The parse before issue 52 kept the last line of a pair: the WRONG copy above was not seen."""
    import re
    text = 'p2p 1 4 access=yes copy=WRONG\np2p 1 4 access=yes copy=ok\n'
    last = dict(((int(m.group(1)), int(m.group(2))), m.group(4)) for m in re.finditer(
        r'^p2p (\d+) (\d+) access=(yes|no) copy=(\S+)$', text, re.M))
    assert last[(1, 4)] == 'ok'
    assert t.parse_p2p(text)[(1, 4)]['copy'] == 'WRONG'


@pytest.mark.parametrize('name', ['NVIDIA H100 PCIe', 'NVIDIA H100 NVL', 'NVIDIA H200 NVL', 'NVIDIA A100-PCIE-40GB',
                                  'NVIDIA L4', 'NVIDIA H800', 'NVIDIA A800-SXM4-80GB', 'NVIDIA GH200 480GB', None, 7])
def test_negative_control_models_without_a_count_are_not_counted(name):
    """PCIe and NVL cards (optional bridges) and SXM models without a source: their GPUs without NVLink pass."""
    assert t.nvlink_count(name) is None
    topo = '\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \tSYS\t0-15\t0\t\tN/A\nGPU1\tSYS\t X \t16-31\t1\t\tN/A\n'
    gpus = [{'index': 0, 'name': name if isinstance(name, str) else 'x'}, {'index': 1, 'name': 'x'}]
    assert t.link_problems(topo, '', 'p2p 0 1 access=no copy=skipped\np2p 1 0 access=no copy=skipped\n', gpus)['problems'] == []


def test_negative_control_a_single_sxm_gpu_is_not_asked_for_a_peer():
    topo = '\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-15\t0\t\tN/A\n'
    assert t.link_problems(topo, NVLINK8.replace('26.562 GB/s', '<inactive>'), '', HGX_GPUS[:1])['problems'] == []


@pytest.mark.parametrize('gpus,match', [
    ('NVIDIA H200', 'expected the GPUs as gpuops.gpu_server.gpu_facts reports them'),
    ({'index': 0, 'name': 'x'}, 'expected the GPUs'),
    ([{'name': 'NVIDIA H200'}], 'gpus entry 0: expected a GPU'),
    ([{'index': True, 'name': 'x'}], 'gpus entry 0'),
    ([{'index': -1, 'name': 'x'}], 'gpus entry 0'),
    ([{'index': '\u0663', 'name': 'x'}], 'gpus entry 0'),           # an Arabic-Indic 3
    ([{'index': 0, 'name': None}], 'gpus entry 0'),
    ([{'index': 0, 'name': 'x'}, 'GPU 1'], 'gpus entry 1'),
])
def test_gpus_that_are_not_gpu_facts_are_refused(gpus, match):
    with pytest.raises(ValueError, match=match):
        t.link_problems(TOPO8, NVLINK8, p2p(8), gpus)


def test_a_string_index_from_facts_is_read():
    gpus = [dict(g, index=str(g['index'])) for g in HGX_GPUS]
    assert t.link_problems(TOPO8, NVLINK8, p2p(8), gpus)['problems'] == []


@pytest.mark.parametrize('pattern,count,example', _data_gpu.NVLINKS_PER_GPU,
                         ids=[row[2] for row in _data_gpu.NVLINKS_PER_GPU])
def test_each_nvlink_row_matches_its_example_and_no_other(pattern, count, example):
    assert isinstance(count, int) and 0 < count <= 18
    assert [row[2] for row in _data_gpu.NVLINKS_PER_GPU if __import__('re').search(row[0], example)] == [example]
    assert t.nvlink_count(example) == count
