# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_monitoring_node's and gpu_monitoring_server's internal variables, templated by Ansible from the gpu_monitoring
entry's options (as a run of the entry passes them on): listen addresses and the collector's parsers."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

PLAYBOOK = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ {'node': _gpu_monitoring_node_exporter_web, 'prometheus': _gpu_monitoring_server_prometheus_web,
                      'prometheus_local': _gpu_monitoring_server_prometheus_local,
                      'alertmanager_local': _gpu_monitoring_server_alertmanager_local,
                      'parsers': _gpu_monitoring_node_parsers_dir,
                      'modules': _gpu_monitoring_node_collector_modules} | to_json }}"
'''


def render(ansible_play, **extra):
    proc, got = ansible_play(PLAYBOOK, extra, role_vars=['gpu_monitoring_node', 'gpu_monitoring_server', 'gpu_monitoring'])
    assert proc.returncode == 0, proc.stdout
    return got


def test_ipv4_and_ipv6_listen_addresses(ansible_play):
    got = render(ansible_play, gpu_monitoring_node_exporter_listen_address='::', gpu_monitoring_node_exporter_port=9100,
                 gpu_monitoring_prometheus_listen_address='0.0.0.0', gpu_monitoring_prometheus_port=9090,
                 gpu_monitoring_alertmanager_listen_address='::', gpu_monitoring_alertmanager_port=9093)
    assert got['node'] == '[::]:9100'
    assert got['prometheus'] == '0.0.0.0:9090' and got['prometheus_local'] == '127.0.0.1:9090'
    assert got['alertmanager_local'] == '[::1]:9093'


def test_the_collectors_parsers_come_from_the_installed_collection(ansible_play):
    got = render(ansible_play)
    for name in got['modules']:
        assert os.path.isfile(os.path.join(got['parsers'], name)), name
    assert os.path.samefile(got['parsers'], os.path.join(ROOT, 'plugins', 'module_utils'))


def test_the_collector_ships_every_module_its_parsers_import(ansible_play):
    """The collector's parsers import only what is shipped with them (module_utils/_data_xid.py for _kernel_log)."""
    got = render(ansible_play)
    pattern = re.compile(r'^from ansible_collections\.gpuops\.gpu_server\.plugins\.module_utils(?:\.(\w+))? import (\w+)')
    for name in got['modules']:
        with open(os.path.join(got['parsers'], name)) as f:
            for line in f:
                m = pattern.match(line)
                if m:
                    assert (m.group(1) or m.group(2)) + '.py' in got['modules'], (name, line)
