# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The slurm role's ResumeProgram/SuspendProgram (files/gpuops-slurm-power.py) with the docker backend and a fake
scontrol: the hostlist expanded by Slurm, each node's address given to Slurm, a node that fails powered down again with
the reason, suspend ending the containers, and the log."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

import pytest

from ansible_collections.gpuops.gpu_server.tests.unit.conftest import load_script
from ansible_collections.gpuops.gpu_server.tests.unit.plugins.module_utils.test_slurm_power import FakeDocker


@pytest.fixture
def tool():
    return load_script('gpuops_slurm_power', 'roles', 'slurm', 'files', 'gpuops-slurm-power.py')


class Runner(object):
    """scontrol (show hostnames, update) and docker (FakeDocker), recording scontrol's updates."""

    def __init__(self, docker, hostnames):
        self.docker = docker
        self.hostnames = hostnames
        self.updates = []

    def __call__(self, argv, timeout=None):
        if argv[0] == 'scontrol':
            if argv[1:3] == ['show', 'hostnames']:
                return 0, '\n'.join(self.hostnames[argv[3]]) + '\n', ''
            self.updates.append(argv[2:])
            return 0, '', ''
        return self.docker(argv, timeout)


def write_config(tmp_path, **docker):
    config = tmp_path / 'power.json'
    config.write_text(json.dumps({'cluster': 'gpuops', 'backend': 'docker', 'scontrol': 'scontrol',
                                  'log': str(tmp_path / 'power.log'),
                                  'docker': dict({'image': 'local/node:latest', 'network': 'slurm'}, **docker)}))
    return str(config)


def test_resume_gives_slurm_each_nodes_address_and_suspend_ends_them(tool, tmp_path):
    config = write_config(tmp_path)
    runner = Runner(FakeDocker(), {'cloud[1-2]': ['cloud1', 'cloud2']})
    assert tool.main(['resume', 'cloud[1-2]', '--config', config], runner) == 0
    assert runner.updates == [['NodeName=cloud1', 'NodeAddr=172.30.0.10', 'NodeHostname=cloud1'],
                              ['NodeName=cloud2', 'NodeAddr=172.30.0.11', 'NodeHostname=cloud2']]
    assert tool.main(['suspend', 'cloud[1-2]', '--config', config], runner) == 0
    assert runner.docker.containers == {}
    log = (tmp_path / 'power.log').read_text().splitlines()
    assert log[0].endswith('resume cloud1 up at 172.30.0.10')
    assert log[2].endswith('suspend cloud1 ended (cloud1)') and log[3].endswith('suspend cloud2 ended (cloud2)')


def test_a_node_that_cannot_start_is_powered_down_with_the_reason(tool, tmp_path):
    docker = FakeDocker({'cloud1': {'labels': {}, 'running': True, 'address': '172.30.0.9'}})
    runner = Runner(docker, {'cloud[1-2]': ['cloud1', 'cloud2']})
    assert tool.main(['resume', 'cloud[1-2]', '--config', write_config(tmp_path)], runner) == 1
    down = [u for u in runner.updates if u[0] == 'NodeName=cloud1']
    assert len(down) == 1 and down[0][1] == 'State=POWER_DOWN_FORCE'
    assert down[0][2].startswith('Reason=gpuops resume failed: cloud1: a container of that name exists')
    assert ['NodeName=cloud2', 'NodeAddr=172.30.0.11', 'NodeHostname=cloud2'] in runner.updates


def test_an_unknown_backend_is_said_not_raised(tool, tmp_path, capsys):
    config = tmp_path / 'power.json'
    config.write_text(json.dumps({'cluster': 'gpuops', 'backend': 'gce', 'scontrol': 'scontrol'}))
    runner = Runner(FakeDocker(), {'cloud1': ['cloud1']})
    assert tool.main(['resume', 'cloud1', '--config', str(config)], runner) == 1
    assert "unknown backend 'gce': ec2 or docker" in capsys.readouterr().out


def test_closed_standard_streams_do_not_fail_a_resume(tool, tmp_path, monkeypatch):
    # slurmctld starts ResumeProgram with its standard streams closed: Python's sys.stdout is None then.
    monkeypatch.setattr(tool.sys, 'stdout', None)
    runner = Runner(FakeDocker(), {'cloud1': ['cloud1']})
    assert tool.main(['resume', 'cloud1', '--config', write_config(tmp_path)], runner) == 0
    assert (tmp_path / 'power.log').read_text().rstrip().endswith('resume cloud1 up at 172.30.0.10')
