# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""common's tasks_from=web_exposure, the check that gpu_monitoring_node and gpu_monitoring_server run in their
preflight, through ansible-playbook on this machine: an endpoint without TLS or basic auth must listen on this host
only, by the parsed address (a loopback address or localhost); the refusal names the variables and the fix."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ANSIBLE_PLAYBOOK, common_entry_play, run_playbook

pytestmark = pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason='ansible-playbook not in this venv')

VARS = '''      vars:
        common_role_name: gpu_monitoring_node
        common_web_tls: "{{ tls }}"
        common_web_auth: "{{ auth }}"
        common_web_user: "{{ user }}"
        common_web_listen:
          gpu_monitoring_node_exporter_listen_address: "{{ exporter }}"
          gpu_monitoring_node_dcgm_listen_address: "{{ dcgm }}"
'''
PLAYBOOK = common_entry_play('web_exposure') + VARS


def run(tmp_path, **overrides):
    variables = dict({'tls': True, 'auth': True, 'user': 'prometheus', 'exporter': '0.0.0.0', 'dcgm': '127.0.0.1'},
                     **overrides)
    playbook = tmp_path / 'play.yml'
    playbook.write_text(PLAYBOOK)
    proc = run_playbook(playbook, '--check', '-e', json.dumps(variables))
    return proc.returncode, ' '.join(proc.stdout.split())


def test_tls_and_auth_on_pass_on_every_address(tmp_path):
    rc, out = run(tmp_path)
    assert rc == 0, out


@pytest.mark.parametrize('exporter', ['127.0.0.1', '127.0.0.2', '[::1]', '::1', 'localhost'])
def test_without_tls_an_endpoint_on_this_host_only_passes(tmp_path, exporter):
    rc, out = run(tmp_path, tls=False, exporter=exporter)
    assert rc == 0, out


@pytest.mark.parametrize('exporter', ['0.0.0.0', '', '10.0.0.5', 'node1.example', '127.0.0.1 ', '127.0.0.1\n0.0.0.0'])
def test_without_tls_or_auth_an_endpoint_beyond_this_host_is_refused_by_name(tmp_path, exporter):
    for switch in ({'tls': False}, {'auth': False}):
        rc, out = run(tmp_path, exporter=exporter, **switch)
        assert rc != 0, out
        assert ('gpu_monitoring_node on localhost: with gpu_monitoring_node_tls %s and gpu_monitoring_node_web_auth %s, '
                'gpu_monitoring_node_exporter_listen_address would serve unencrypted or unauthenticated requests beyond '
                'this host. Turn both on (the default), or set those variables to 127.0.0.1 (localhost only).'
                % (switch.get('tls', True), switch.get('auth', True))) in out, out


@pytest.mark.parametrize('user', ['a:b', 'two words', ''])
def test_a_web_user_that_is_not_a_name_is_refused(tmp_path, user):
    rc, out = run(tmp_path, user=user)
    assert rc != 0, out
    assert "gpu_monitoring_node_web_user must be a name without ':' or blanks" in out, out


def test_a_play_that_imports_the_entry_point_directly_is_refused(tmp_path):
    playbook = tmp_path / 'play.yml'
    playbook.write_text(common_entry_play('web_exposure', 'gpuops.gpu_server.common') + VARS)
    proc = run_playbook(playbook, '--check', '-e', json.dumps({'tls': True, 'auth': True, 'user': 'p', 'exporter': '',
                                                               'dcgm': ''}))
    assert proc.returncode != 0 and 'gpuops.gpu_server.common is internal: tasks_from=web_exposure' in \
        ' '.join(proc.stdout.split()), proc.stdout
