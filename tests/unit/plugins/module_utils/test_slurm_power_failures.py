# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_slurm_power's failures (issue 52): each node's error is its own and the rest go on; a stopped or stopping EC2
instance is started again, not reported up at its old address; a large suspend ends every instance although EC2
refuses a filter with too many values; a launch template is a name or an id by what it is given as, never by its
spelling. Against moto's EC2, with EC2's filter limit and a still-stopping instance added where moto has neither."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _slurm_power

boto3 = pytest.importorskip('boto3')
moto = pytest.importorskip('moto')
from botocore.exceptions import ClientError  # noqa: E402 pylint: disable=wrong-import-position

CLUSTER = 'gpuops'


IMAGE = 'ami-0123456789abcdef0'


@pytest.fixture
def ec2(monkeypatch):
    # moto's thousands of public AMIs are not needed here (any image id is taken): seconds per test saved.
    monkeypatch.setenv('MOTO_EC2_LOAD_DEFAULT_AMIS', 'false')
    with moto.mock_aws():
        client = boto3.client('ec2', region_name='eu-central-1')
        client.create_launch_template(LaunchTemplateName='gpu-node',
                                      LaunchTemplateData={'ImageId': IMAGE, 'InstanceType': 't3.micro'})
        yield client


def instances(client, node=None):
    """[(node, state, instance)] of the cluster's instances (every state), optionally of NODE only."""
    out = []
    reservations = [r for page in client.get_paginator('describe_instances').paginate() for r in page['Reservations']]
    for reservation in reservations:
        for instance in reservation['Instances']:
            tags = dict((t['Key'], t['Value']) for t in instance.get('Tags', []))
            if tags.get(_slurm_power.TAG_CLUSTER) == CLUSTER and node in (None, tags.get(_slurm_power.TAG_NODE)):
                out.append((tags.get(_slurm_power.TAG_NODE), instance['State']['Name'], instance))
    return out


def running(client):
    return sorted(node for node, state, _i in instances(client) if state in ('pending', 'running'))


def filter_limit(client, limit=200):
    """EC2's refusal of a filter with more than LIMIT values (moto accepts any number): a ClientError, as botocore
    raises for EC2's FilterLimitExceeded answer."""
    def check(params, **_kwargs):
        for f in params.get('Filters') or []:
            if len(f.get('Values') or []) > limit:
                raise ClientError({'Error': {'Code': 'FilterLimitExceeded',
                                             'Message': 'The maximum number of filter values specified on a single '
                                                        'call is %d' % limit}}, 'DescribeInstances')
    client.meta.events.register('provide-client-params.ec2.DescribeInstances', check)


# -- the launch template: by name or by id, as given ------------------------------------------------------------------

@pytest.mark.parametrize('name,template_id,expected', [
    ('gpu-node', '', {'LaunchTemplateName': 'gpu-node'}),
    ('lt-gpu-nodes', '', {'LaunchTemplateName': 'lt-gpu-nodes'}),          # starts with lt-: still a name
    ('lt-0123456789abcdef0x', '', {'LaunchTemplateName': 'lt-0123456789abcdef0x'}),
    ('team/gpu_(h200).v2', None, {'LaunchTemplateName': 'team/gpu_(h200).v2'}),
    ('', 'lt-0123456789abcdef0', {'LaunchTemplateId': 'lt-0123456789abcdef0'}),
    (None, 'lt-0123abcd', {'LaunchTemplateId': 'lt-0123abcd'}),           # the short ids of before 2018
])
def test_a_launch_template_is_a_name_or_an_id_as_given(name, template_id, expected):
    assert _slurm_power.launch_template_spec(name, template_id) == expected


@pytest.mark.parametrize('name,template_id,message', [
    ('', '', 'needs a launch template'),
    (None, None, 'needs a launch template'),
    ('gpu-node', 'lt-0123456789abcdef0', 'both set'),
    ('lt-0123456789abcdef0', '', 'has the form of a launch template id: give an id as launch_template_id'),
    ('lt-0123abcd', '', 'has the form of a launch template id'),
    ('', 'gpu-node', 'is not a launch template id'),
    ('', 'lt-gpu-nodes', 'is not a launch template id'),
    ('', 'lt-0123456789ABCDEF0', 'is not a launch template id'),          # EC2's ids are lower case
    ('', 'lt-0123456789abcdef0\n', 'is not a launch template id'),        # $ would let the line break through
    ('', ' lt-0123456789abcdef0', 'is not a launch template id'),
    ('', 'lt-\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668', 'is not a launch template id'),  # Arabic-Indic digits
    ('', 'lt-0123456789abcdef01', 'is not a launch template id'),         # 18 digits
    ('gp', '', 'is not a launch template name'),
    ('gpu node', '', 'is not a launch template name'),
    ('gpu-node\n', '', 'is not a launch template name'),
    ('gpu-node\r', '', 'is not a launch template name'),
    ('g\u00fcpu-node', '', 'is not a launch template name'),
    ('x' * 129, '', 'is not a launch template name'),
    (5, '', 'launch_template: expected a string, got 5'),
    (True, '', 'expected a string'),
    (['gpu-node'], '', 'expected a string'),
    ('', {'id': 'lt-0123456789abcdef0'}, 'launch_template_id: expected a string'),
])
def test_a_launch_template_that_is_neither_is_refused_with_the_setting_named(name, template_id, message):
    with pytest.raises(_slurm_power.PowerError, match=message.replace('(', r'\(')):
        _slurm_power.launch_template_spec(name, template_id)
    # the backend refuses it before any EC2 call
    with pytest.raises(_slurm_power.PowerError):
        _slurm_power.Ec2Backend(object(), CLUSTER, name, launch_template_id=template_id)


def test_a_template_named_lt_something_is_launched_by_its_name(ec2, monkeypatch):
    ec2.create_launch_template(LaunchTemplateName='lt-gpu-nodes', LaunchTemplateData={'ImageId': IMAGE})
    backend = _slurm_power.Ec2Backend(ec2, CLUSTER, 'lt-gpu-nodes')
    assert [error for _n, _a, error in _slurm_power.resume(['cloud1'], backend, lambda n, a: None)] == ['']
    assert running(ec2) == ['cloud1']
    # Negative control: the old rule (a value starting with lt- is an id) sends the name as an id, which names no
    # template (EC2 answers InvalidLaunchTemplateId.Malformed; moto's lookup fails), and no instance starts.
    monkeypatch.setattr(_slurm_power, 'launch_template_spec',
                        lambda name, template_id='', names=None: ({'LaunchTemplateId': name} if name.startswith('lt-')
                                                                  else {'LaunchTemplateName': name}))
    old = _slurm_power.Ec2Backend(ec2, CLUSTER, 'lt-gpu-nodes')
    error = _slurm_power.resume(['cloud2'], old, lambda n, a: None)[0][2]
    assert error.startswith('cloud2: RunInstances failed: '), error
    assert running(ec2) == ['cloud1']


# -- resume of a stopped or stopping instance --------------------------------------------------------------------------

def test_a_stopped_instance_is_started_and_slurm_gets_its_current_address(ec2):
    backend = _slurm_power.Ec2Backend(ec2, CLUSTER, 'gpu-node')
    _slurm_power.resume(['cloud1', 'cloud2'], backend, lambda n, a: None)
    stopped = instances(ec2, 'cloud1')[0][2]['InstanceId']
    ec2.stop_instances(InstanceIds=[stopped])
    assert instances(ec2, 'cloud1')[0][1] == 'stopped'
    told = []
    results = _slurm_power.resume(['cloud1', 'cloud2'], backend, lambda n, a: told.append((n, a)))
    assert [error for _n, _a, error in results] == ['', '']
    [(node, state, instance)] = instances(ec2, 'cloud1')
    assert instance['InstanceId'] == stopped and state == 'running'          # started, not replaced, not left stopped
    assert told[0] == ('cloud1', instance['PrivateIpAddress'])
    assert len(instances(ec2)) == 2


def test_negative_control_the_old_resume_leaves_a_stopped_instance_stopped(ec2, monkeypatch):
    """The check of the test above catches the old behaviour: the stopped instance's address reported, nothing
    started."""
    monkeypatch.setattr(_slurm_power.Ec2Backend, '_start_stopped', lambda self, node, instance: instance)
    backend = _slurm_power.Ec2Backend(ec2, CLUSTER, 'gpu-node')
    _slurm_power.resume(['cloud1'], backend, lambda n, a: None)
    ec2.stop_instances(InstanceIds=[instances(ec2, 'cloud1')[0][2]['InstanceId']])
    assert _slurm_power.resume(['cloud1'], backend, lambda n, a: None)[0][2] == ''
    assert instances(ec2, 'cloud1')[0][1] == 'stopped'


class Stopping(object):
    """moto's EC2 client, except that the instances in STOPPING are described as 'stopping' for the next N looks (as
    EC2 does while a stop is under way; moto stops at once), and StartInstances of one of them is refused as EC2
    refuses it (IncorrectInstanceState)."""

    def __init__(self, client, looks):
        self.client = client
        self.looks = dict(looks)
        self.started = []

    def _page(self, page):
        page = copy.deepcopy(page)
        for reservation in page.get('Reservations', []):
            for instance in reservation.get('Instances', []):
                if self.looks.get(instance['InstanceId'], 0) > 0:
                    self.looks[instance['InstanceId']] -= 1
                    instance['State'] = {'Code': 64, 'Name': 'stopping'}
        return page

    def get_paginator(self, name):
        paginator = self.client.get_paginator(name)
        outer = self

        class Paginator(object):
            def paginate(self, **kwargs):
                for page in paginator.paginate(**kwargs):
                    yield outer._page(page)
        return Paginator()

    def describe_instances(self, **kwargs):
        return self._page(self.client.describe_instances(**kwargs))

    def start_instances(self, InstanceIds):
        for instance_id in InstanceIds:
            if self.looks.get(instance_id, 0) > 0:
                raise ClientError({'Error': {'Code': 'IncorrectInstanceState',
                                             'Message': 'The instance %s is not in a state from which it can be '
                                                        'started.' % instance_id}}, 'StartInstances')
        self.started.extend(InstanceIds)
        return self.client.start_instances(InstanceIds=InstanceIds)

    def run_instances(self, **kwargs):
        return self.client.run_instances(**kwargs)


class Clock(object):
    def __init__(self):
        self.now = 0.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_a_stopping_instance_is_started_once_it_has_stopped(ec2):
    _slurm_power.resume(['cloud1'], _slurm_power.Ec2Backend(ec2, CLUSTER, 'gpu-node'), lambda n, a: None)
    instance_id = instances(ec2, 'cloud1')[0][2]['InstanceId']
    ec2.stop_instances(InstanceIds=[instance_id])
    client, clock = Stopping(ec2, {instance_id: 3}), Clock()
    backend = _slurm_power.Ec2Backend(client, CLUSTER, 'gpu-node', stopping_wait=60, poll=5, sleep=clock.sleep,
                                      clock=clock)
    told = []
    assert _slurm_power.resume(['cloud1'], backend, lambda n, a: told.append(a))[0][2] == ''
    assert client.started == [instance_id] and clock.slept == [5, 5, 5]  # after the first look and two more
    [(_node, state, instance)] = instances(ec2, 'cloud1')
    assert state == 'running' and told == [instance['PrivateIpAddress']]


def test_an_instance_still_stopping_fails_its_node_within_the_bound_and_the_others_go_on(ec2):
    backend = _slurm_power.Ec2Backend(ec2, CLUSTER, 'gpu-node')
    _slurm_power.resume(['cloud1', 'cloud2', 'cloud3'], backend, lambda n, a: None)
    ids = dict((node, instances(ec2, node)[0][2]['InstanceId']) for node in ('cloud1', 'cloud2'))
    ec2.stop_instances(InstanceIds=list(ids.values()))
    client, clock = Stopping(ec2, {ids['cloud1']: 10 ** 6, ids['cloud2']: 10 ** 6}), Clock()
    backend = _slurm_power.Ec2Backend(client, CLUSTER, 'gpu-node', stopping_wait=30, poll=5, sleep=clock.sleep,
                                      clock=clock)
    results = _slurm_power.resume(['cloud1', 'cloud2', 'cloud3', 'cloud4'], backend, lambda n, a: None)
    assert results[0][2] == ('cloud1: instance %s is still stopping (a resume waits at most 30 s for stopping '
                             'instances); a later resume starts it' % ids['cloud1'])
    assert results[1][2].startswith('cloud2: instance %s is still stopping' % ids['cloud2'])
    assert [r[2] for r in results[2:]] == ['', '']
    # one bound for the whole run: the second stopping node does not wait another 30 s
    assert sum(clock.slept) == 30 and client.started == []
    assert sorted(n for n, s, _i in instances(ec2) if s == 'stopped') == ['cloud1', 'cloud2']


# -- suspend: chunks, and one node's error -----------------------------------------------------------------------------

def test_a_suspend_of_more_nodes_than_a_filter_takes_ends_every_instance(ec2):
    nodes = ['cloud%d' % i for i in range(1, 251)]
    started = ec2.run_instances(ImageId=IMAGE, MinCount=250, MaxCount=250, TagSpecifications=[
        {'ResourceType': 'instance', 'Tags': [{'Key': _slurm_power.TAG_CLUSTER, 'Value': CLUSTER}]}])['Instances']
    for node, instance in zip(nodes, started):
        ec2.create_tags(Resources=[instance['InstanceId']], Tags=[{'Key': _slurm_power.TAG_NODE, 'Value': node}])
    filter_limit(ec2)
    calls = []
    ec2.meta.events.register('provide-client-params.ec2.DescribeInstances', lambda params, **kw: calls.append(params))
    backend = _slurm_power.Ec2Backend(ec2, CLUSTER, 'gpu-node')
    # Negative control: the old suspend's one request with all 250 names is refused before any instance is ended.
    with pytest.raises(ClientError, match='FilterLimitExceeded'):
        backend._instances(nodes)
    assert len(running(ec2)) == 250
    del calls[:]
    told = []
    results = _slurm_power.suspend(nodes, backend, lambda node, ids, error: told.append((node, len(ids), error)))
    assert told == [(node, 1, '') for node in nodes] and len(results) == 250
    # three requests of at most 100 names each, none refused
    assert [len([f for f in c['Filters'] if f['Name'] == 'tag:' + _slurm_power.TAG_NODE][0]['Values'])
            for c in calls] == [100, 100, 50]
    assert running(ec2) == []


def test_an_instance_that_cannot_be_ended_fails_its_node_only(ec2):
    backend = _slurm_power.Ec2Backend(ec2, CLUSTER, 'gpu-node')
    _slurm_power.resume(['cloud1', 'cloud2', 'cloud3'], backend, lambda n, a: None)
    protected = instances(ec2, 'cloud2')[0][2]['InstanceId']
    ec2.modify_instance_attribute(InstanceId=protected, DisableApiTermination={'Value': True})
    results = _slurm_power.suspend(['cloud1', 'cloud2', 'cloud3'], backend)
    assert [(node, len(ids), bool(error)) for node, ids, error in results] == [
        ('cloud1', 1, False), ('cloud2', 0, True), ('cloud3', 1, False)]
    expected = 'cloud2: TerminateInstances %s failed: ClientError: An error occurred (OperationNotPermitted)' % protected
    assert results[1][2].startswith(expected), results[1][2]
    assert running(ec2) == ['cloud2']


# -- any error is the node's ------------------------------------------------------------------------------------------

def test_any_exception_of_a_node_is_that_nodes_error_and_reported_as_it_happens():
    class Backend(object):
        def start(self, node):
            if node == 'b':
                raise RuntimeError('socket closed\nby peer')
            return '10.0.0.%d' % (ord(node) - 96)

        def stop(self, nodes, report=None):
            report('a', ['i-1'], '')
            raise KeyError('Reservations')

    reports = []
    results = _slurm_power.resume(['a', 'b', 'c'], Backend(), lambda n, a: None, lambda *r: reports.append(r))
    assert results == reports == [('a', '10.0.0.1', ''), ('b', '', 'b: RuntimeError: socket closed by peer'),
                                  ('c', '10.0.0.3', '')]
    # set_address failing (scontrol) is the node's error too
    results = _slurm_power.resume(['a'], Backend(), lambda n, a: {}['x'])
    assert results == [('a', '', "a: KeyError: 'x'")]
    # a backend that raises in the middle of a suspend: the nodes it did not report fail, none twice
    reports = []
    assert _slurm_power.suspend(['a', 'b'], Backend(), lambda *r: reports.append(r)) == reports == [
        ('a', ['i-1'], ''), ('b', [], "b: KeyError: 'Reservations'")]
