# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_slurm_power: CLOUD nodes as EC2 instances (against moto's EC2: RunInstances, DescribeInstances,
TerminateInstances) and as containers (a fake docker), and resume's handling of a node that fails."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _slurm_power

boto3 = pytest.importorskip('boto3')
moto = pytest.importorskip('moto')


@pytest.fixture
def ec2():
    with moto.mock_aws():
        client = boto3.client('ec2', region_name='eu-central-1')
        image = client.describe_images(Owners=['amazon'])['Images'][0]['ImageId']
        template = client.create_launch_template(
            LaunchTemplateName='gpu-node', LaunchTemplateData={'ImageId': image, 'InstanceType': 'p5.48xlarge'})
        yield client, template['LaunchTemplate']['LaunchTemplateId']


def live(client):
    out = {}
    for reservation in client.describe_instances()['Reservations']:
        for instance in reservation['Instances']:
            if instance['State']['Name'] in _slurm_power.EC2_LIVE_STATES:
                tags = dict((t['Key'], t['Value']) for t in instance.get('Tags', []))
                out.setdefault((tags.get(_slurm_power.TAG_CLUSTER), tags.get(_slurm_power.TAG_NODE)), []).append(instance)
    return out


def test_resume_starts_one_instance_per_node_and_a_second_resume_reuses_it(ec2):
    client, template = ec2
    backend = _slurm_power.Ec2Backend(client, 'gpuops', launch_template_id=template, user_data='#cloud-config\n',
                                      tags={'team': 'ml'})
    told = []
    results = _slurm_power.resume(['cloud1', 'cloud2'], backend, lambda node, address: told.append((node, address)))
    assert [error for _n, _a, error in results] == ['', '']
    instances = live(client)
    assert sorted(instances) == [('gpuops', 'cloud1'), ('gpuops', 'cloud2')]
    first = instances[('gpuops', 'cloud1')][0]
    assert told[0] == ('cloud1', first['PrivateIpAddress'])
    tags = dict((t['Key'], t['Value']) for t in first['Tags'])
    assert tags['Name'] == 'cloud1' and tags['team'] == 'ml'
    again = _slurm_power.resume(['cloud1'], backend, lambda node, address: None)
    assert again == [('cloud1', first['PrivateIpAddress'], '')]
    assert len(live(client)[('gpuops', 'cloud1')]) == 1


def test_suspend_ends_only_this_clusters_instances_of_the_nodes(ec2):
    client, template = ec2
    ours = _slurm_power.Ec2Backend(client, 'gpuops', 'gpu-node')
    theirs = _slurm_power.Ec2Backend(client, 'other', launch_template_id=template)
    _slurm_power.resume(['cloud1', 'cloud2'], ours, lambda n, a: None)
    _slurm_power.resume(['cloud1'], theirs, lambda n, a: None)
    ended = ours.stop(['cloud1'])
    assert [(node, len(ids), error) for node, ids, error in ended] == [('cloud1', 1, '')]
    assert sorted(live(client)) == [('gpuops', 'cloud2'), ('other', 'cloud1')]
    assert ours.stop(['cloud1']) == [('cloud1', [], '')]


def test_a_launch_template_that_does_not_exist_fails_that_node_only(ec2):
    client, _template = ec2
    backend = _slurm_power.Ec2Backend(client, 'gpuops', launch_template_id='lt-0123456789abcdef0')
    results = _slurm_power.resume(['cloud1'], backend, lambda n, a: None)
    assert results[0][1] == '' and results[0][2].startswith('cloud1: RunInstances failed:')
    with pytest.raises(_slurm_power.PowerError, match='needs a launch template'):
        _slurm_power.Ec2Backend(client, 'gpuops', '')


class FakeDocker(object):
    """docker container inspect / create / cp / start / rm over a dict of containers, each {labels, running, address,
    files}; FAIL names a verb that fails."""

    def __init__(self, containers=None, fail=None):
        self.containers = containers or {}
        self.calls = []
        self.fail = fail

    def __call__(self, argv, timeout=None):
        self.calls.append(argv[1:])
        verb, name = argv[1], argv[-1]
        if verb == self.fail:
            return 1, '', '%s: boom' % verb
        if argv[1:3] == ['container', 'inspect']:
            c = self.containers.get(name)
            if c is None:
                return 1, '', 'Error: No such container: %s' % name
            if '-f' in argv:
                return 0, c['labels'].get(_slurm_power.LABEL_CLUSTER, '') + '\n', ''
            return 0, json.dumps([{'Config': {'Labels': c['labels']}, 'State': {'Running': c['running']},
                                   'NetworkSettings': {'Networks': {'slurm': {'IPAddress': c['address']}}}}]), ''
        if verb == 'create':
            node = argv[argv.index('--name') + 1]
            label = argv[argv.index('--label') + 1].split('=', 1)
            self.containers[node] = {'labels': {label[0]: label[1]}, 'running': False, 'address': '', 'files': {}}
            return 0, 'abc123\n', ''
        if verb == 'cp':
            node, path = argv[3].split(':', 1)
            with open(argv[2]) as f:
                self.containers[node]['files'][path] = f.read()
            return 0, '', ''
        if verb == 'start':
            self.containers[name].update(running=True, address='172.30.0.%d' % (9 + len(self.containers)))
            return 0, name + '\n', ''
        if verb == 'rm':
            self.containers.pop(name, None)
            return 0, name + '\n', ''
        return 2, '', 'unexpected %r' % argv


def test_docker_resume_runs_a_labelled_container_and_reuses_a_running_one():
    docker = FakeDocker()
    backend = _slurm_power.DockerBackend('gpuops', 'local/node:latest', 'slurm', ['--cap-add', 'SYS_ADMIN'], runner=docker,
                                         command=['/lib/systemd/systemd'])
    assert backend.start('cloud1') == '172.30.0.10'
    create = [c for c in docker.calls if c[0] == 'create'][0]
    assert create[-4:] == ['--cap-add', 'SYS_ADMIN', 'local/node:latest', '/lib/systemd/systemd'] and '--hostname' in create
    assert docker.containers['cloud1']['files'] == {}
    assert backend.start('cloud1') == '172.30.0.10'
    assert len([c for c in docker.calls if c[0] == 'create']) == 1


def test_docker_gives_each_node_its_own_user_data_before_it_starts():
    docker = FakeDocker()
    template = '#!/bin/sh\nexec join %s\n' % _slurm_power.NODE_PLACEHOLDER
    backend = _slurm_power.DockerBackend('gpuops', 'img', 'slurm', runner=docker, user_data=template)
    backend.start('cloud1')
    backend.start('cloud2')
    assert docker.containers['cloud2']['files'] == {_slurm_power.DOCKER_USER_DATA: '#!/bin/sh\nexec join cloud2\n'}
    verbs = [c[0] for c in docker.calls if c[0] in ('create', 'cp', 'start')]
    assert verbs == ['create', 'cp', 'start'] * 2


def test_docker_removes_a_container_that_did_not_start():
    docker = FakeDocker(fail='start')
    backend = _slurm_power.DockerBackend('gpuops', 'img', 'slurm', runner=docker, user_data='#!/bin/sh\n')
    with pytest.raises(_slurm_power.PowerError, match='cloud1: docker start failed: start: boom'):
        backend.start('cloud1')
    assert docker.containers == {}


def test_ec2_gives_each_instance_its_nodes_user_data(ec2):
    client, template = ec2
    backend = _slurm_power.Ec2Backend(client, 'gpuops', launch_template_id=template,
                                      user_data='node=%s\n' % _slurm_power.NODE_PLACEHOLDER)
    _slurm_power.resume(['cloud7'], backend, lambda n, a: None)
    instance = live(client)[('gpuops', 'cloud7')][0]
    data = client.describe_instance_attribute(InstanceId=instance['InstanceId'], Attribute='userData')
    assert base64.b64decode(data['UserData']['Value']) == b'node=cloud7\n'


def test_docker_replaces_a_stopped_container_and_leaves_another_clusters_alone():
    docker = FakeDocker({'cloud1': {'labels': {_slurm_power.LABEL_CLUSTER: 'gpuops'}, 'running': False, 'address': ''},
                         'cloud2': {'labels': {}, 'running': True, 'address': '172.30.0.2'}})
    backend = _slurm_power.DockerBackend('gpuops', 'img', 'slurm', runner=docker)
    assert backend.start('cloud1').startswith('172.30.0.')
    assert ['rm', '-f', 'cloud1'] in docker.calls
    with pytest.raises(_slurm_power.PowerError, match='not of cluster gpuops'):
        backend.start('cloud2')
    assert backend.stop(['cloud1', 'cloud2', 'cloud3']) == [('cloud1', ['cloud1'], ''), ('cloud2', [], ''), ('cloud3', [], '')]
    assert 'cloud2' in docker.containers


def test_resume_goes_on_after_a_node_that_fails():
    class Half(object):
        def start(self, node):
            if node == 'bad':
                raise _slurm_power.PowerError('bad: no capacity')
            return '10.0.0.1'

    told = []
    assert _slurm_power.resume(['bad', 'good'], Half(), lambda n, a: told.append(n)) == [
        ('bad', '', 'bad: no capacity'), ('good', '10.0.0.1', '')]
    assert told == ['good']
