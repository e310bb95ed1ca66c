# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The slurm role's first-boot user-data of CLOUD nodes (templates/slurm-user-data.j2) for both backends: a shell
script sh accepts, the MUNGE key from Secrets Manager on EC2 (never in the user-data) and in the user-data on the docker
backend, and the join with the controller's name, address and port. molecule/slurm runs the docker variant for real."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import os
import subprocess

import jinja2
import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _slurm_power
from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

TEMPLATE = os.path.join(ROOT, 'roles', 'slurm', 'templates', 'slurm-user-data.j2')
KEY = base64.b64encode(b'k' * 128).decode()


def render(backend, **extra):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.dirname(TEMPLATE)), keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    values = dict(_slurm_marker='Managed by Ansible', slurm_cluster_name='gpuops', slurm_cloud_backend=backend,
                  slurm_cloud_ec2_region='eu-central-1', slurm_cloud_ec2_munge_key_secret='slurm/munge-key',
                  _slurm_controller='head', hostvars={'head': {'__slurm_munge_key': {'content': KEY}}},
                  _slurm_join_program='/usr/local/sbin/gpuops-slurm-join', _slurm_controller_name='head',
                  _slurm_addresses={'head': '10.0.8.5'}, slurm_slurmctld_port=6817)
    values.update(extra)
    return _slurm_power.node_user_data(env.get_template(os.path.basename(TEMPLATE)).render(**values), 'gpu-cloud3')


@pytest.mark.parametrize('backend', ['ec2', 'docker'])
def test_the_user_data_is_a_script_sh_accepts(backend, tmp_path):
    script = tmp_path / 'user-data'
    script.write_text(render(backend))
    assert script.read_text().startswith('#!/bin/sh\n')
    subprocess.run(['sh', '-n', str(script)], check=True)


def test_ec2_reads_the_key_from_secrets_manager_and_never_carries_it():
    text = render('ec2')
    assert KEY not in text
    assert ("aws secretsmanager get-secret-value --region eu-central-1 \\\n  --secret-id 'slurm/munge-key' --query SecretBinary"
            in text)
    assert text.rstrip().endswith('exec /usr/local/sbin/gpuops-slurm-join gpu-cloud3 head 10.0.8.5 6817 gpuops')


def test_docker_carries_the_key_and_asks_slurmd_to_report_a_boot():
    text = render('docker')
    assert '\n%s\nGPUOPS_KEY\n' % KEY in text and 'aws ' not in text
    assert text.rstrip().endswith('exec /usr/local/sbin/gpuops-slurm-join gpu-cloud3 head 10.0.8.5 6817 gpuops -b')
