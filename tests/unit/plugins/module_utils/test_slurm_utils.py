# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_slurm: slurmd -C's line, the GRES of the 8-GPU HGX H200 capture, slurm.conf's and gres.conf's lines, and the
health check's drain/resume decision."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi, _slurm
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import read_fixture

# slurmd -C on a Debian 12 container of this machine (Slurm 22.05.8), and on an HGX H200 host as Slurm documents it.
SLURMD_C = ('NodeName=gpuops-slurm-c1 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 '
            'RealMemory=23999\nUpTime=0-01:02:03\n')


def hgx_gpus():
    return _nvidia_smi.parse(read_fixture('nvidia_smi', 'hgx_h200_8gpu_r570.xml'))['gpus']


def test_parse_node_config_reads_the_hardware_keys():
    assert _slurm.parse_node_config(SLURMD_C) == {'CPUs': 2, 'Boards': 1, 'SocketsPerBoard': 1, 'CoresPerSocket': 2,
                                                  'ThreadsPerCore': 1, 'RealMemory': 23999}


@pytest.mark.parametrize('text', ['', 'NodeName=x CPUs=2', 'slurmd: error: something', None])
def test_parse_node_config_names_what_is_missing(text):
    with pytest.raises(ValueError, match='slurmd -C printed no'):
        _slurm.parse_node_config(text)


def test_parse_node_config_refuses_a_value_that_is_no_number():
    with pytest.raises(ValueError, match='not a number'):
        _slurm.parse_node_config(SLURMD_C.replace('CPUs=2', 'CPUs=two'))


@pytest.mark.parametrize('name,expected', [
    ('NVIDIA H200', 'h200'), ('NVIDIA A100-SXM4-80GB', 'a100-sxm4-80gb'), ('Tesla V100-SXM2-32GB', 'v100-sxm2-32gb'),
    ('NVIDIA GeForce RTX 4090', 'geforce_rtx_4090'), ('NVIDIA', 'nvidia'), ('', 'gpu'), (None, 'gpu'), ('NVIDIA H100 80GB HBM3', 'h100_80gb_hbm3'),
])
def test_gres_type(name, expected):
    assert _slurm.gres_type(name) == expected


def test_the_hgx_capture_is_eight_h200s_in_one_gres():
    gpus = hgx_gpus()
    assert _slurm.gres(gpus) == 'gpu:h200:8'
    line = _slurm.node_line('gpu1', '10.0.0.11', _slurm.parse_node_config(SLURMD_C), gpus)
    assert line == ('NodeName=gpu1 NodeAddr=10.0.0.11 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 '
                    'RealMemory=23999 Gres=gpu:h200:8 State=UNKNOWN')
    lines = _slurm.gres_lines(gpus)
    assert lines == ['Name=gpu Type=h200 File=/dev/nvidia%d' % i for i in range(8)]


def test_mixed_models_and_no_gpus():
    gpus = [{'name': 'NVIDIA A100-SXM4-80GB', 'minor_number': 1}, {'name': 'NVIDIA H200', 'minor_number': 0},
            {'name': 'NVIDIA A100-SXM4-80GB', 'minor_number': 2}]
    assert _slurm.gres(gpus) == 'gpu:a100-sxm4-80gb:2,gpu:h200:1'
    assert _slurm.gres_lines(gpus) == ['Name=gpu Type=h200 File=/dev/nvidia0', 'Name=gpu Type=a100-sxm4-80gb File=/dev/nvidia1',
                                       'Name=gpu Type=a100-sxm4-80gb File=/dev/nvidia2']
    line = _slurm.node_line('cpu1', '', _slurm.parse_node_config(SLURMD_C), [], ['cpu', 'highmem'])
    assert 'Gres=' not in line and 'NodeAddr' not in line and line.endswith('Features=cpu,highmem State=UNKNOWN')
    assert _slurm.gres([]) == '' and _slurm.gres_lines(None) == []


def test_a_gpu_without_a_minor_number_uses_its_index():
    assert _slurm.gres_lines([{'name': 'NVIDIA H200', 'index': 3, 'minor_number': None}]) == [
        'Name=gpu Type=h200 File=/dev/nvidia3']


def test_node_line_needs_a_name():
    with pytest.raises(ValueError, match='needs a name'):
        _slurm.node_line('', '', _slurm.parse_node_config(SLURMD_C), [])


# scontrol show node -o, Slurm 22.05 (one line).
IDLE = ('NodeName=c1 Arch=x86_64 CoresPerSocket=2 CPUAlloc=0 CPUTot=2 Gres=gpu:h200:8 NodeAddr=172.18.0.3 '
        'State=IDLE ThreadsPerCore=1 Partitions=gpu BootTime=2026-12-05T21:00:00 CfgTRES=cpu=2')
OURS = ('NodeName=c1 Gres=gpu:h200:8 State=IDLE+DRAIN ThreadsPerCore=1 Partitions=gpu '
        'Reason=gpuops gpu_health: GPU 0 (0000:18:00.0): Xid 79 at unknown time: GPU has fallen off the bus '
        '[root@2026-12-05T21:10:00] Comment=(null)')
BY_HAND = 'NodeName=c1 State=IDLE+DRAIN Reason=maintenance by hand [root@2026-12-05T21:10:00]'
FAILING = {'status': 'fail', 'failing': [{'status': 'fail', 'message': 'GPU 0: Xid 79: GPU has fallen off the bus'},
                                         {'status': 'warn', 'message': 'kernel log not read'}]}
HEALTHY = {'status': 'ok', 'failing': []}


def test_parse_node_state():
    assert _slurm.parse_node_state(IDLE) == {'state': ['IDLE'], 'reason': ''}
    ours = _slurm.parse_node_state(OURS)
    assert ours['state'] == ['IDLE', 'DRAIN']
    assert ours['reason'] == ('gpuops gpu_health: GPU 0 (0000:18:00.0): Xid 79 at unknown time: GPU has fallen off the '
                              'bus')
    assert _slurm.parse_node_state(BY_HAND)['reason'] == 'maintenance by hand'
    down = _slurm.parse_node_state('NodeName=c2 State=DOWN*+DRAIN Reason=Not responding [slurm@t]')
    assert down['state'] == ['DOWN', 'DRAIN']


def test_a_failing_healthy_node_is_drained_with_the_fail_messages_only():
    action, reason = _slurm.health_action(FAILING, _slurm.parse_node_state(IDLE))
    assert action == 'drain'
    assert reason == 'gpuops gpu_health: GPU 0: Xid 79: GPU has fallen off the bus'


def test_the_reason_is_kept_short_and_printable():
    many = {'status': 'fail', 'failing': [{'status': 'fail', 'message': 'GPU %d: \u00e9rror\n' % i * 5} for i in range(20)]}
    _action, reason = _slurm.health_action(many, _slurm.parse_node_state(IDLE))
    assert len(reason) <= _slurm.REASON_MAX and reason.endswith('...') and all(32 <= ord(c) < 127 for c in reason)


def test_no_second_drain_and_no_resume_of_someone_elses_drain():
    assert _slurm.health_action(FAILING, _slurm.parse_node_state(OURS))[0] is None
    assert _slurm.health_action(HEALTHY, _slurm.parse_node_state(BY_HAND)) == (
        None, 'drained by someone else: maintenance by hand')
    assert _slurm.health_action(HEALTHY, _slurm.parse_node_state(IDLE)) == (None, 'healthy')


def test_a_healed_node_that_this_check_drained_is_resumed():
    assert _slurm.health_action(HEALTHY, _slurm.parse_node_state(OURS)) == ('resume', '')
    # warn is not fail: a warning never drains, and it resumes a node the check drained.
    assert _slurm.health_action({'status': 'warn', 'failing': []}, _slurm.parse_node_state(OURS)) == ('resume', '')


CLOUD = [{'names': 'gpu-cloud[1-4]', 'cpus': 96, 'real_memory': 1900000, 'gpus': 8, 'gpu_type': 'h200',
          'features': ['cloud', 'h200']},
         {'names': 'cpu-cloud1', 'cpus': 4, 'real_memory': 15000},
         {'names': 'big[1-2]', 'cpus': 192, 'real_memory': 2000000, 'gpus': 1, 'gpu_type': 'h200', 'partition': 'big'}]


def test_cloud_config_gives_slurm_conf_and_gres_conf_lines():
    config = _slurm.cloud_config(CLOUD, 'cloud')
    assert config['nodes'] == [
        'NodeName=gpu-cloud[1-4] CPUs=96 RealMemory=1900000 Gres=gpu:h200:8 Features=cloud,h200 State=CLOUD',
        'NodeName=cpu-cloud1 CPUs=4 RealMemory=15000 State=CLOUD',
        'NodeName=big[1-2] CPUs=192 RealMemory=2000000 Gres=gpu:h200:1 State=CLOUD']
    assert config['gres'] == ['NodeName=gpu-cloud[1-4] Name=gpu Type=h200 File=/dev/nvidia[0-7]',
                              'NodeName=big[1-2] Name=gpu Type=h200 File=/dev/nvidia0']
    assert config['partitions'] == [('cloud', 'gpu-cloud[1-4],cpu-cloud1'), ('big', 'big[1-2]')]
    assert config['names'] == 'gpu-cloud[1-4],cpu-cloud1,big[1-2]'


@pytest.mark.parametrize('entry, problem', [
    ({'names': 'Cloud1', 'cpus': 1, 'real_memory': 1}, 'slurm_cloud_nodes[0].names must be a node name or a hostlist'),
    ({'names': 'c[1-2', 'cpus': 1, 'real_memory': 1}, '.names must be'),
    ({'names': 'c1', 'cpus': 0, 'real_memory': 1}, '.cpus must be 1 to 65533, got 0'),
    ({'names': 'c1', 'cpus': 1, 'real_memory': 'lots'}, '.real_memory must be'),
    ({'names': 'c1', 'cpus': 1, 'real_memory': 1, 'gpus': 8}, ".gpu_type must be the GPUs' GRES type"),
    ({'names': 'c1', 'cpus': 1, 'real_memory': 1, 'gpus': 8, 'gpu_type': 'NVIDIA H200'}, '.gpu_type must be'),
    ({'names': 'c1', 'cpus': 1, 'real_memory': 1, 'partition': 'a b'}, '.partition must be a plain partition name'),
    ('c1', 'slurm_cloud_nodes[0] must be a dict'),
])
def test_cloud_node_problems_name_the_entry_and_the_fix(entry, problem):
    problems = _slurm.cloud_node_problems([entry])
    assert len(problems) == 1 and problem in problems[0]
    with pytest.raises(ValueError, match='slurm_cloud_nodes'):
        _slurm.cloud_config([entry], 'cloud')


def test_cloud_node_problems_pass_good_groups_and_refuse_a_group_twice():
    assert _slurm.cloud_node_problems(CLOUD) == []
    assert _slurm.cloud_node_problems(CLOUD + CLOUD[:1]) == [
        'slurm_cloud_nodes[3].names gpu-cloud[1-4] names gpu-cloud1, gpu-cloud2, gpu-cloud3, gpu-cloud4, which '
        'slurm_cloud_nodes[0] (gpu-cloud[1-4]) already names: each node belongs to one group']
    assert _slurm.cloud_node_problems('c1') == ["slurm_cloud_nodes must be a list of node groups, got 'c1'"]


@pytest.mark.parametrize('text, count', [
    ('NodeName=cloud1 Arch=x86_64 Gres=gpu:h200:8(S:0-1) NodeAddr=10.0.0.5', 8),
    ('NodeName=cloud1 Gres=gpu:h200:4,gpu:a100:2 State=IDLE', 6),
    ('NodeName=cloud1 Gres=gpu:2', 2),
    ('NodeName=cloud1 Gres=gpu', 1),
    ('NodeName=cloud1 Gres=(null) State=IDLE+CLOUD', 0),
    ('NodeName=cloud1 State=IDLE', 0),
])
def test_gres_gpu_count_reads_scontrol_show_node(text, count):
    assert _slurm.gres_gpu_count(text) == count
