# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The slurm role's power program (files/gpuops-slurm-power.py) when things fail (issue 52): botocore's ClientError,
NoCredentialsError, EndpointConnectionError and NoRegionError, a fake docker CLI's bad answers, unreadable settings.
Each failed node is told to Slurm (resume: POWER_DOWN_FORCE, suspend: DOWN, with the reason), the rest of the hostlist
is still tried, each node's line is in the log when the next node is tried, no traceback, exit status 1."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import socket
import stat
import sys

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _slurm_power
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import load_script

boto3 = pytest.importorskip('boto3')
moto = pytest.importorskip('moto')
from botocore.exceptions import ClientError  # noqa: E402 pylint: disable=wrong-import-position

REGION = 'eu-central-1'
AWS_ENV = ('AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_SECURITY_TOKEN', 'AWS_PROFILE',
           'AWS_DEFAULT_PROFILE', 'AWS_DEFAULT_REGION', 'AWS_REGION', 'AWS_ROLE_ARN', 'AWS_WEB_IDENTITY_TOKEN_FILE',
           'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_ENDPOINT_URL',
           'AWS_ENDPOINT_URL_EC2', 'AWS_CA_BUNDLE')


@pytest.fixture
def tool():
    return load_script('gpuops_slurm_power_failures', 'roles', 'slurm', 'files', 'gpuops-slurm-power.py')


class Scontrol(object):
    """scontrol (show hostnames, update), recording the updates; every other command goes to OTHER."""

    def __init__(self, hostnames, other=None):
        self.hostnames = hostnames
        self.other = other
        self.updates = []

    def __call__(self, argv, timeout=None):
        if argv[0] == 'scontrol':
            if argv[1:3] == ['show', 'hostnames']:
                return 0, '\n'.join(self.hostnames[argv[3]]) + '\n', ''
            self.updates.append(argv[2:])
            return 0, '', ''
        return self.other(argv, timeout=timeout)

    def states(self):
        """{node: [State=... or NodeAddr=...]} of the updates."""
        out = {}
        for update in self.updates:
            out.setdefault(update[0].split('=', 1)[1], []).append(update[1])
        return out


def settings(tmp_path, **values):
    path = tmp_path / 'power.json'
    path.write_text(json.dumps(dict({'cluster': 'gpuops', 'scontrol': 'scontrol', 'log': str(tmp_path / 'power.log')},
                                    **values)))
    return str(path)


def log_lines(tmp_path):
    return [line.split(' ', 1)[1] for line in (tmp_path / 'power.log').read_text().splitlines()]


def no_aws_environment(monkeypatch, tmp_path):
    """No credentials from anywhere: environment, files, the instance metadata service."""
    for name in AWS_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('AWS_SHARED_CREDENTIALS_FILE', str(tmp_path / 'no-credentials'))
    monkeypatch.setenv('AWS_CONFIG_FILE', str(tmp_path / 'no-config'))
    monkeypatch.setenv('AWS_EC2_METADATA_DISABLED', 'true')


def closed_port():
    """A loopback port nothing listens on (bound, then closed)."""
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


# -- EC2 ----------------------------------------------------------------------------------------------------------------

def test_an_ec2_client_error_fails_its_node_only_and_each_line_is_logged_as_it_happens(
        tool, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv('MOTO_EC2_LOAD_DEFAULT_AMIS', 'false')
    seen = {}

    def run_instances(params, **_kwargs):
        node = dict((t['Key'], t['Value']) for t in params['TagSpecifications'][0]['Tags'])['Name']
        seen[node] = log_lines(tmp_path) if (tmp_path / 'power.log').exists() else []
        if node == 'cloud2':
            raise ClientError({'Error': {'Code': 'InsufficientInstanceCapacity',
                                         'Message': 'We currently do not have sufficient p5.48xlarge capacity.'}},
                              'RunInstances')

    real = tool.backend_of

    def backend_of(config, runner):
        backend = real(config, runner)
        backend.client.meta.events.register('provide-client-params.ec2.RunInstances', run_instances)
        return backend

    monkeypatch.setattr(tool, 'backend_of', backend_of)
    with moto.mock_aws():
        boto3.client('ec2', region_name=REGION).create_launch_template(
            LaunchTemplateName='gpu-node', LaunchTemplateData={'ImageId': 'ami-0123456789abcdef0'})
        runner = Scontrol({'cloud[1-3]': ['cloud1', 'cloud2', 'cloud3']})
        config = settings(tmp_path, backend='ec2', ec2={'region': REGION, 'launch_template': 'gpu-node'})
        assert tool.main(['resume', 'cloud[1-3]', '--config', config], runner) == 1
    states = runner.states()
    assert states['cloud1'][0].startswith('NodeAddr=') and states['cloud3'][0].startswith('NodeAddr=')
    assert states['cloud2'] == ['State=POWER_DOWN_FORCE']
    reason = [u for u in runner.updates if u[0] == 'NodeName=cloud2'][0][2]
    assert reason.startswith('Reason=gpuops resume failed: cloud2: RunInstances failed: ClientError: An error '
                             'occurred (InsufficientInstanceCapacity)'), reason
    # each node's line was in the log file before the next node was tried
    assert seen['cloud1'] == [] and seen['cloud2'][0].startswith('resume cloud1 up at ')
    assert seen['cloud3'][1].startswith('resume cloud2 FAILED: cloud2: RunInstances failed: ClientError:')
    assert len(log_lines(tmp_path)) == 3 and 'Traceback' not in capsys.readouterr().err


def test_no_credentials_fail_each_node_of_a_resume_and_a_suspend_without_a_traceback(
        tool, tmp_path, monkeypatch, capsys):
    no_aws_environment(monkeypatch, tmp_path)
    runner = Scontrol({'cloud[1-2]': ['cloud1', 'cloud2']})
    config = settings(tmp_path, backend='ec2', ec2={'region': REGION, 'launch_template_id': 'lt-0123456789abcdef0',
                                                    'endpoint_url': 'http://127.0.0.1:%d' % closed_port()})
    assert tool.main(['resume', 'cloud[1-2]', '--config', config], runner) == 1
    assert tool.main(['suspend', 'cloud[1-2]', '--config', config], runner) == 1
    assert runner.states() == {'cloud1': ['State=POWER_DOWN_FORCE', 'State=DOWN'],
                               'cloud2': ['State=POWER_DOWN_FORCE', 'State=DOWN']}
    lines = log_lines(tmp_path)
    assert lines[0] == ('resume cloud1 FAILED: cloud1: DescribeInstances failed: NoCredentialsError: Unable to locate '
                        'credentials')
    assert lines[2].startswith('suspend cloud1 FAILED: cloud1: DescribeInstances failed: NoCredentialsError')
    assert [line.split()[:3] for line in lines] == [['resume', 'cloud1', 'FAILED:'], ['resume', 'cloud2', 'FAILED:'],
                                                    ['suspend', 'cloud1', 'FAILED:'], ['suspend', 'cloud2', 'FAILED:']]
    assert 'Traceback' not in capsys.readouterr().err


def test_an_unreachable_endpoint_fails_each_node_and_slurm_is_told(tool, tmp_path, monkeypatch):
    no_aws_environment(monkeypatch, tmp_path)
    monkeypatch.setenv('AWS_ACCESS_KEY_ID', 'testing')
    monkeypatch.setenv('AWS_SECRET_ACCESS_KEY', 'testing')
    endpoint = 'http://127.0.0.1:%d' % closed_port()
    runner = Scontrol({'cloud1': ['cloud1'], 'cloud[1-2]': ['cloud1', 'cloud2']})
    config = settings(tmp_path, backend='ec2', ec2={'region': REGION, 'launch_template': 'gpu-node',
                                                    'endpoint_url': endpoint})
    assert tool.main(['resume', 'cloud1', '--config', config], runner) == 1
    assert tool.main(['suspend', 'cloud[1-2]', '--config', config], runner) == 1
    assert runner.states() == {'cloud1': ['State=POWER_DOWN_FORCE', 'State=DOWN'], 'cloud2': ['State=DOWN']}
    lines = log_lines(tmp_path)
    assert lines[0] == ('resume cloud1 FAILED: cloud1: DescribeInstances failed: EndpointConnectionError: Could not '
                        'connect to the endpoint URL: "%s/"' % endpoint)
    assert [line.split()[1] for line in lines[1:]] == ['cloud1', 'cloud2']


def test_a_backend_that_cannot_be_made_fails_every_node(tool, tmp_path, monkeypatch):
    """No region anywhere (boto3's NoRegionError), or a launch template of an id's form given as a name: each node
    of the hostlist is failed and told to Slurm, not the run aborted."""
    no_aws_environment(monkeypatch, tmp_path)
    runner = Scontrol({'cloud[1-2]': ['cloud1', 'cloud2']})
    config = settings(tmp_path, backend='ec2', ec2={'launch_template': 'gpu-node'})
    assert tool.main(['resume', 'cloud[1-2]', '--config', config], runner) == 1
    assert runner.states() == {'cloud1': ['State=POWER_DOWN_FORCE'], 'cloud2': ['State=POWER_DOWN_FORCE']}
    assert log_lines(tmp_path)[1] == 'resume cloud2 FAILED: NoRegionError: You must specify a region.'
    config = settings(tmp_path, backend='ec2', ec2={'region': REGION, 'launch_template': 'lt-0123456789abcdef0'})
    assert tool.main(['suspend', 'cloud[1-2]', '--config', config], runner) == 1
    assert log_lines(tmp_path)[3].startswith("suspend cloud2 FAILED: launch_template 'lt-0123456789abcdef0' has the "
                                             "form of a launch template id")


def test_unreadable_settings_fail_every_node_with_slurm_told(tool, tmp_path, capsys):
    runner = Scontrol({'cloud[1-2]': ['cloud1', 'cloud2']})
    assert tool.main(['resume', 'cloud[1-2]', '--config', str(tmp_path / 'missing.json')], runner) == 1
    assert runner.states() == {'cloud1': ['State=POWER_DOWN_FORCE'], 'cloud2': ['State=POWER_DOWN_FORCE']}
    (tmp_path / 'bad.json').write_text('{"cluster": ')
    assert tool.main(['suspend', 'cloud[1-2]', '--config', str(tmp_path / 'bad.json')], runner) == 1
    out = capsys.readouterr().out
    assert 'resume cloud2 FAILED: the settings %s cannot be read' % (tmp_path / 'missing.json') in out
    assert 'suspend cloud1 FAILED: the settings %s cannot be read' % (tmp_path / 'bad.json') in out


# -- docker, through a fake docker CLI -----------------------------------------------------------------------------------

FAKE_DOCKER = r'''#!%(python)s
"""A fake docker CLI: containers in state.json beside it; answers.json gives a node's raw `container inspect` answer
and failing verbs ({"inspect": {node: text}, "fail": {node: verb}}); every call is appended to calls.log."""
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
state_file, answers = os.path.join(here, 'state.json'), json.load(open(os.path.join(here, 'answers.json')))
state = json.load(open(state_file)) if os.path.exists(state_file) else {}
args = sys.argv[1:]
with open(os.path.join(here, 'calls.log'), 'a') as f:
    f.write(' '.join(args) + '\n')
name = args[-1]
if args[0] == 'create':
    name = args[args.index('--name') + 1]
if answers.get('fail', {}).get(name) == args[0]:
    sys.stderr.write('Error response from daemon: %%s failed\n' %% args[0])
    sys.exit(1)
if args[:2] == ['container', 'inspect']:
    if name in answers.get('inspect', {}) and name in state:
        sys.stdout.write(answers['inspect'][name])
        sys.exit(0)
    if name not in state:
        sys.stderr.write('Error: No such container: %%s\n' %% name)
        sys.exit(1)
    c = state[name]
    if '-f' in args:
        print(c['labels'].get('gpuops.slurm-cluster', ''))
        sys.exit(0)
    print(json.dumps([{'Config': {'Labels': c['labels']}, 'State': {'Running': c['running']},
                       'NetworkSettings': {'Networks': {'slurm': {'IPAddress': c['address']}}}}]))
elif args[0] == 'create':
    label = args[args.index('--label') + 1].split('=', 1)
    state[name] = {'labels': {label[0]: label[1]}, 'running': False, 'address': ''}
elif args[0] == 'start':
    state[name].update(running=True, address='172.30.0.%%d' %% (10 + int(name[len('cloud'):])))
elif args[0] == 'rm':
    state.pop(name, None)
json.dump(state, open(state_file, 'w'))
'''


@pytest.fixture
def fake_docker(tmp_path):
    bin_dir = tmp_path / 'docker-bin'
    bin_dir.mkdir()
    path = bin_dir / 'docker'
    path.write_text(FAKE_DOCKER % {'python': sys.executable})
    path.chmod(path.stat().st_mode | stat.S_IXUSR)

    def answers(**values):
        (bin_dir / 'answers.json').write_text(json.dumps(values))

    answers()
    return str(path), bin_dir, answers


@pytest.mark.parametrize('answer', [
    'not JSON at all',
    '',
    '[]',
    '{}',
    '[{}]',
    '[1]',
    '[{}, {}]',
    'null',
    '[{"Config": null, "State": {}, "NetworkSettings": {}}]',
    '[{"Config": {"Labels": ["gpuops.slurm-cluster"]}, "State": {"Running": true}, "NetworkSettings": {}}]',
    '[{"Config": {"Labels": {"gpuops.slurm-cluster": "gpuops"}}, "State": {"Running": true}, '
    '"NetworkSettings": {"Networks": {"slurm": {"IPAddress": 17}}}}]',
])
def test_one_bad_docker_inspect_answer_fails_that_node_and_the_later_nodes_start(
        tool, tmp_path, fake_docker, answer, monkeypatch):
    docker, bin_dir, answers = fake_docker
    answers(inspect={'cloud2': answer})
    # cloud2's container exists (so its answer is read); the others are created by the resume
    (bin_dir / 'state.json').write_text(json.dumps({'cloud2': {'labels': {'gpuops.slurm-cluster': 'gpuops'},
                                                               'running': True, 'address': '172.30.0.12'}}))
    monkeypatch.setattr(tool.sys, 'stdout', None)  # as slurmctld runs it
    seen = {}

    def runner(argv, timeout=None):
        if argv[1] == 'create':
            seen[argv[argv.index('--name') + 1]] = log_lines(tmp_path) if (tmp_path / 'power.log').exists() else []
        return _command.run(argv, timeout=timeout)

    scontrol = Scontrol({'cloud[1-3]': ['cloud1', 'cloud2', 'cloud3']}, runner)
    config = settings(tmp_path, backend='docker', docker={'image': 'local/node', 'network': 'slurm', 'docker': docker})
    assert tool.main(['resume', 'cloud[1-3]', '--config', config], scontrol) == 1
    assert scontrol.states() == {'cloud1': ['NodeAddr=172.30.0.11'], 'cloud2': ['State=POWER_DOWN_FORCE'],
                                 'cloud3': ['NodeAddr=172.30.0.13']}
    lines = log_lines(tmp_path)
    assert lines[0] == 'resume cloud1 up at 172.30.0.11' and lines[2] == 'resume cloud3 up at 172.30.0.13'
    assert lines[1].startswith('resume cloud2 FAILED: cloud2: '), lines[1]
    assert seen['cloud3'][1] == lines[1]  # cloud2's failure was in the log before cloud3 was started
    reason = [u for u in scontrol.updates if u[0] == 'NodeName=cloud2'][0][2]
    assert reason.startswith('Reason=gpuops resume failed: cloud2: ') and '\n' not in reason


def test_a_container_that_cannot_be_removed_fails_its_node_and_the_others_are_removed(tool, tmp_path, fake_docker):
    docker, bin_dir, answers = fake_docker
    scontrol = Scontrol({'cloud[1-3]': ['cloud1', 'cloud2', 'cloud3']}, _command.run)
    config = settings(tmp_path, backend='docker', docker={'image': 'local/node', 'network': 'slurm', 'docker': docker})
    assert tool.main(['resume', 'cloud[1-3]', '--config', config], scontrol) == 0
    answers(fail={'cloud2': 'rm'})
    assert tool.main(['suspend', 'cloud[1-3]', '--config', config], scontrol) == 1
    assert sorted(json.loads((bin_dir / 'state.json').read_text())) == ['cloud2']
    assert scontrol.updates[-1] == ['NodeName=cloud2', 'State=DOWN', 'Reason=gpuops suspend failed: cloud2: docker rm '
                                    'failed: Error response from daemon: rm failed']
    assert log_lines(tmp_path)[3:] == ['suspend cloud1 ended (cloud1)',
                                       'suspend cloud2 FAILED: cloud2: docker rm failed: Error response from daemon: rm '
                                       'failed', 'suspend cloud3 ended (cloud3)']
    # a docker CLI that cannot be started at all is each node's error too
    os.chmod(docker, 0o644)
    assert tool.main(['suspend', 'cloud[1-3]', '--config', config], scontrol) == 1
    assert [line.split()[1:3] for line in log_lines(tmp_path)[6:]] == [['cloud1', 'FAILED:'], ['cloud2', 'FAILED:'],
                                                                       ['cloud3', 'FAILED:']]
    assert _slurm_power.one_line('a\r\nb') == 'a b'
