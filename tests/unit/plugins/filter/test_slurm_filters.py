# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The slurm filters: their input checks (a clear error, never a traceback) around _slurm."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import slurm

SLURMD_C = 'NodeName=n CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=1000'


def test_node_lines_in_order():
    nodes = [{'name': 'b', 'address': '10.0.0.2', 'hardware': SLURMD_C, 'gpus': [{'name': 'NVIDIA H200'}] * 2},
             {'name': 'a', 'address': '', 'hardware': SLURMD_C, 'gpus': [], 'features': ['cpu']}]
    lines = slurm.FilterModule().filters()['slurm_node_lines'](nodes)
    assert lines[0].startswith('NodeName=b NodeAddr=10.0.0.2 CPUs=4') and 'Gres=gpu:h200:2' in lines[0]
    assert lines[1].startswith('NodeName=a CPUs=4') and 'Features=cpu' in lines[1]


def test_node_lines_name_the_node_without_hardware():
    with pytest.raises(AnsibleFilterError, match='node c7: slurmd -C printed no'):
        slurm.slurm_node_lines([{'name': 'c7', 'hardware': ''}])


@pytest.mark.parametrize('bad', ['c1', {'name': 'c1'}, [['c1']]])
def test_node_lines_refuse_what_is_not_a_list_of_nodes(bad):
    with pytest.raises(AnsibleFilterError, match='slurm_node_lines: expected'):
        slurm.slurm_node_lines(bad)


def test_gres_and_gres_lines():
    gpus = [{'name': 'NVIDIA H200', 'minor_number': 1}, {'name': 'NVIDIA H200', 'minor_number': 0}]
    assert slurm.slurm_gres(gpus) == 'gpu:h200:2' and slurm.slurm_gres([]) == ''
    assert slurm.slurm_gres_lines(gpus, '/dev/') == ['Name=gpu Type=h200 File=/dev/nvidia0', 'Name=gpu Type=h200 File=/dev/nvidia1']
    for function in (slurm.slurm_gres, slurm.slurm_gres_lines):
        with pytest.raises(AnsibleFilterError, match='expected'):
            function(['NVIDIA H200'])
        with pytest.raises(AnsibleFilterError, match='expected a list'):
            function('NVIDIA H200')


def test_cloud_config_and_its_problems():
    filters = slurm.FilterModule().filters()
    groups = [{'names': 'cloud[1-2]', 'cpus': 1, 'real_memory': 500}]
    assert filters['slurm_cloud_problems'](groups) == []
    config = filters['slurm_cloud_config'](groups, 'cloud')
    assert config['partitions'] == [['cloud', 'cloud[1-2]']] and config['gres'] == []
    with pytest.raises(AnsibleFilterError, match=r'slurm_cloud_config: slurm_cloud_nodes\[0\].cpus must be'):
        filters['slurm_cloud_config']([{'names': 'c1', 'cpus': 'x', 'real_memory': 1}], 'cloud')
