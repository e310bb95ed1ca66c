# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""_slurm's CLOUD node groups (slurm_cloud_nodes) and feature lists under hostile input (issue 52, item 8): every field
is parsed into a typed value or refused with the entry named, and slurm.conf's lines are written only from those."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _slurm

GOOD = {'names': 'gpu[1-2]', 'cpus': 8, 'real_memory': 64000, 'gpus': 2, 'gpu_type': 'h200', 'features': ['gpu', 'h200']}


def group(**changes):
    entry = dict(GOOD)
    for key, value in changes.items():
        if value is KeyError:
            entry.pop(key)
        else:
            entry[key] = value
    return entry


def slurm_conf_lines(text):
    """What slurm.conf's reader sees: one setting per line, key=value pairs split at spaces."""
    return [line for line in text.splitlines() if line.strip()]


def test_a_good_group_is_typed_and_written_from_its_typed_values():
    groups, problems = _slurm.parse_cloud_nodes([group(cpus='8')], ['node1'])
    assert problems == [] and groups[0]['cpus'] == 8 and groups[0]['nodes'] == ['gpu1', 'gpu2']
    assert _slurm.cloud_config([group(cpus='8')], 'cloud')['nodes'] == [
        'NodeName=gpu[1-2] CPUs=8 RealMemory=64000 Gres=gpu:h200:2 Features=gpu,h200 State=CLOUD']


# Features: the reproduction (a string is the letters g, p, u) and a line break that adds a slurm.conf line.
@pytest.mark.parametrize('features,said', [
    ('gpu', "slurm_cloud_nodes[0].features must be a list of feature names such as [gpu, h200], got the string 'gpu'"),
    ('gpu,h200', 'got the string'),
    (['gpu\nPartitionName=evil Nodes=ALL'], 'slurm_cloud_nodes[0].features[0] must be a feature name'),
    (['gpu\r'], 'features[0] must be a feature name'),
    (['a b'], 'features[0]'), (['a,b'], 'features[0]'), (['a=b'], 'features[0]'), (['a&b'], 'features[0]'),
    (['a|b'], 'features[0]'), ([''], 'features[0]'), (['-x'], 'features[0]'), (['gpü'], 'features[0]'),
    (['x' * 65], 'features[0]'), ([7], 'features[0]'), ([None], 'features[0]'), ([['gpu']], 'features[0]'),
    (['ok', 'ok'], 'names the feature ok twice'),
    ({'gpu': 1}, 'must be a list of feature names'), (5, 'must be a list of feature names'),
])
def test_features_are_a_list_of_strict_names(features, said):
    problems = _slurm.cloud_node_problems([group(features=features)])
    assert len(problems) == 1 and said in problems[0], problems
    with pytest.raises(ValueError, match=r'slurm_cloud_nodes\[0\]\.features'):
        _slurm.cloud_config([group(features=features)], 'cloud')


def test_negative_control_the_old_join_wrote_g_p_u_and_a_second_line():
    # What the old writer did with the same input (','.join of the raw value): the detector sees both defects.
    assert 'Features=%s' % ','.join('gpu') == 'Features=g,p,u'
    old = 'NodeName=x CPUs=1 RealMemory=1 Features=%s State=CLOUD' % ','.join(['gpu\nPartitionName=evil Nodes=ALL'])
    assert len(slurm_conf_lines(old)) == 2
    # The new writer refuses both before writing any line.
    for features in ('gpu', ['gpu\nPartitionName=evil Nodes=ALL']):
        with pytest.raises(ValueError):
            _slurm.cloud_config([group(features=features)], 'cloud')


@pytest.mark.parametrize('features', [None, [], ['gpu'], ['h200', 'nvlink', 'rack_1', 'az.eu-1a', '100gbe']])
def test_good_feature_lists_pass(features):
    assert _slurm.cloud_node_problems([group(features=features)]) == []
    assert _slurm.feature_problems(features, 'slurm_node_features') == []


def test_static_node_features_are_checked_the_same_way():
    assert _slurm.feature_problems('gpu', 'slurm_node_features') == [
        "slurm_node_features must be a list of feature names such as [gpu, h200], got the string 'gpu': write it as a list"]
    hardware = {'CPUs': 2, 'Boards': 1, 'SocketsPerBoard': 1, 'CoresPerSocket': 2, 'ThreadsPerCore': 1, 'RealMemory': 100}
    with pytest.raises(ValueError, match=r'slurm_node_features\[0\] must be a feature name'):
        _slurm.node_line('node1', '10.0.0.1', hardware, [], ['gpu\nNodeName=evil'])
    for name in ('node1\nNodeName=evil', 'node 1', 'node1,node2', 'nöde', 'n[1-2]'):
        with pytest.raises(ValueError, match='is no host name'):
            _slurm.node_line(name, '10.0.0.1', hardware, [], [])
    for address in ('10.0.0.9\n0.0.0.0 github.com', '10.0.0.5 alias', 'host.example'):
        with pytest.raises(ValueError, match='is no IP address'):
            _slurm.node_line('node1', address, hardware, [], [])
    assert _slurm.node_line('node1', 'fd00::1', hardware, [], ['gpu']).endswith('Features=gpu State=UNKNOWN')


# Numbers: whole numbers only, in range. 1.9 was read as 1.
@pytest.mark.parametrize('key', ['cpus', 'real_memory', 'gpus'])
@pytest.mark.parametrize('value', [1.9, 2.0, True, False, None, '1.9', ' 8', '8\n', '+8', '8_0', '0x8', '٨', '８', '', [8],
                                   {'n': 8}, -1, '-1', 10 ** 30])
def test_numbers_are_whole_and_in_range(key, value):
    if key == 'gpus' and value is None:
        value = 'x'  # None is not "absent" for cpus; for gpus the absence is the default 0
    problems = _slurm.cloud_node_problems([group(**{key: value})])
    assert len(problems) == 1 and problems[0].startswith('slurm_cloud_nodes[0].%s ' % key), problems


@pytest.mark.parametrize('key,value', [('cpus', 0), ('real_memory', 0), ('cpus', 65534), ('gpus', 255), ('gpus', -2)])
def test_zero_negative_and_huge_counts_are_refused(key, value):
    problems = _slurm.cloud_node_problems([group(**{key: value})])
    assert len(problems) == 1 and 'must be' in problems[0] and 'got %d' % value in problems[0], problems


@pytest.mark.parametrize('key,value', [('cpus', 65533), ('gpus', 254), ('gpus', 0), ('gpus', '4'), ('real_memory', 2 ** 40)])
def test_the_largest_counts_slurm_and_the_driver_take_pass(key, value):
    assert _slurm.cloud_node_problems([group(**{key: value})]) == []


def test_no_gpus_needs_no_type_but_a_bad_type_is_refused_anyway():
    assert _slurm.cloud_node_problems([group(gpus=0, gpu_type=KeyError)]) == []
    for bad in ('h200\n', 'H200', 'NVIDIA H200', 'h 200', '', 7, 'h200\nNodeName=x'):
        problems = _slurm.cloud_node_problems([group(gpus=0, gpu_type=bad)])
        assert len(problems) == 1 and '.gpu_type must be' in problems[0], (bad, problems)


# Host lists: strict grammar, ranges low to high, one width, bounded, no node twice.
@pytest.mark.parametrize('names,said', [
    ('x[4-1]', 'has a reversed range 4-1: write it from low to high (1-4)'),
    ('x[1-65537]', 'names more than 65536 nodes'),
    ('x[0-99999999999]', 'names more than 65536 nodes'),
    ('x[1-40000,50000-90000]', 'names more than 65536 nodes'),
    ('x[01-100]', 'differ in width'),
    ('x[1-3,2]', 'names x2 twice'),
    ('x[1-2][3-4]', 'must be a node name or a hostlist'),
    ('x[]', 'must be'), ('x[1-]', 'not N or N-M'), ('x[-1]', 'not N or N-M'), ('x[1--2]', 'not N or N-M'),
    ('x[1,,2]', 'not N or N-M'), ('x[1-2', 'must be'), ('x1-2]', 'must be'),
    ('x[١-٤]', 'must be'), ('x[１-４]', 'must be'), ('gpü1', 'must be'),
    ('gpu1\n', 'must be'), ('gpu1\nPartitionName=evil', 'must be'), ('gpu1 gpu2', 'must be'), ('gpu1,gpu2', 'must be'),
    ('Gpu1', 'must be'), ('1gpu', 'must be'), ('', 'must be'), (None, 'must be'), (7, 'must be'), (['gpu1'], 'must be'),
    ('gpu-', 'no host name'), ('x' * 64, 'no host name'), ('x[1-2]' + 'y' * 62, 'no host name'),
])
def test_hostlists_are_parsed_strictly(names, said):
    problems = _slurm.cloud_node_problems([group(names=names)])
    assert len(problems) == 1 and problems[0].startswith('slurm_cloud_nodes[0].names ') and said in problems[0], problems


@pytest.mark.parametrize('names,nodes', [
    ('gpu-cloud[1-4]', ['gpu-cloud1', 'gpu-cloud2', 'gpu-cloud3', 'gpu-cloud4']),
    ('gpu[08-11]', ['gpu08', 'gpu09', 'gpu10', 'gpu11']),
    ('n[1,3,5-6]-a', ['n1-a', 'n3-a', 'n5-a', 'n6-a']),
    ('cpu1', ['cpu1']), ('x[7]', ['x7']), ('x[0-0]', ['x0']),
])
def test_hostlists_expand_as_slurm_does(names, nodes):
    assert _slurm.expand_hostlist(names) == nodes


def test_the_largest_group_passes_and_the_total_is_bounded_too():
    assert len(_slurm.expand_hostlist('x[1-65536]')) == 65536
    problems = _slurm.cloud_node_problems([group(names='a[1-40000]'), group(names='b[1-40000]')])
    assert problems == ['slurm_cloud_nodes[1]: slurm_cloud_nodes names more than 65536 nodes in all: make the groups smaller']


def test_overlapping_groups_are_refused_naming_both_entries():
    # The reproduction: gpu[1-4], gpu[3-6] and gpu3.
    problems = _slurm.cloud_node_problems([group(names='gpu[1-4]'), group(names='gpu[3-6]'), group(names='gpu3')])
    assert problems == [
        'slurm_cloud_nodes[1].names gpu[3-6] names gpu3, gpu4, which slurm_cloud_nodes[0] (gpu[1-4]) already names: '
        'each node belongs to one group',
        'slurm_cloud_nodes[2].names gpu3 names gpu3, which slurm_cloud_nodes[0] (gpu[1-4]) already names: each node '
        'belongs to one group']
    # The same names spelt differently are the same nodes.
    assert len(_slurm.cloud_node_problems([group(names='gpu[1-2]'), group(names='gpu[2,5]')])) == 1
    # Negative control: neighbours that do not overlap, and the same digits in another width (gpu01 is not gpu1).
    assert _slurm.cloud_node_problems([group(names='gpu[1-4]'), group(names='gpu[5-6]'), group(names='gpu[01-04]')]) == []


def test_a_cloud_node_named_like_a_static_node_is_refused():
    problems = _slurm.cloud_node_problems([group(names='node[1-3]')], ['node2', 'ctl'])
    assert problems == ['slurm_cloud_nodes[0].names node[1-3] names node2, a host of the Slurm cluster (its controller or '
                        'a static compute node): give the CLOUD nodes names of their own']
    assert _slurm.cloud_node_problems([group(names='node[1-3]')], ['Node2']) != []
    assert _slurm.cloud_node_problems([group(names='node[1-3]')], ['node4', 'ctl']) == []
    with pytest.raises(ValueError, match='a host of the Slurm cluster'):
        _slurm.cloud_config([group(names='node[1-3]')], 'cloud', ['node2'])


@pytest.mark.parametrize('entry,said', [
    (group(weight=10), "has the key(s) 'weight', which a group does not take"),
    (group(instance_type='p5.48xlarge'), "'instance_type'"),
    (group(feature=['gpu']), "'feature'"),
    (group(partition='cloud\n'), '.partition must be a plain partition name'),
    (group(partition='a b'), '.partition'), (group(partition=''), '.partition'), (group(partition=7), '.partition'),
    (group(partition='clöud'), '.partition'),
])
def test_other_fields_and_unknown_keys(entry, said):
    problems = _slurm.cloud_node_problems([entry])
    assert len(problems) == 1 and problems[0].startswith('slurm_cloud_nodes[0]') and said in problems[0], problems


def test_every_problem_of_one_entry_is_named_and_the_later_entries_still_checked():
    problems = _slurm.cloud_node_problems([group(names='x[4-1]', cpus=1.9, features='gpu'), group(names='ok1', gpus=-1)])
    assert [p.split(' ', 1)[0] for p in problems] == [
        'slurm_cloud_nodes[0].names', 'slurm_cloud_nodes[0].cpus', 'slurm_cloud_nodes[0].features',
        'slurm_cloud_nodes[1].gpus']


@pytest.mark.parametrize('partition', ['cloud\n', 'a b', None, ''])
def test_the_default_partition_is_checked_where_it_is_written(partition):
    with pytest.raises(ValueError, match='default partition'):
        _slurm.cloud_config([GOOD], partition)
