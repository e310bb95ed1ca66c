# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""training_cluster's internal variables, templated by Ansible on an inventory: the members' addresses, the firewall
entries its `ports` entry point publishes (never to the world), /etc/hosts lines and Open MPI's pinned ports."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

# The role's variables are loaded on m1 only (include_vars would give every host the role's empty
# training_cluster_address, which a real play's hostvars never hold: role defaults are not host variables).
PLAYBOOK = '''
- hosts: m1
  gather_facts: false
  tasks:
    - ansible.builtin.include_vars: "%(root)s/roles/training_cluster/defaults/main.yml"
    - ansible.builtin.include_vars: "%(root)s/roles/training_cluster/vars/main.yml"
    - ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ {'members': _training_cluster_members, 'unaddressed': _training_cluster_unaddressed,
                      'ports': _training_cluster_firewall_ports, 'hosts': _training_cluster_hosts_lines,
                      'mpi': _training_cluster_openmpi_params} | to_json }}"
      delegate_to: localhost
'''

INVENTORY = '''
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: "%(python)s"
  hosts:
    outsider: {ansible_host: 10.0.0.9}
  children:
    training_cluster:
      hosts:
        m1: {ansible_host: 10.0.0.1}
        m2: {ansible_host: m2.example, training_cluster_address: 10.0.0.2, training_cluster_aliases: [node2]}
%(more)s
'''


def render(ansible_play, more='', **extra):
    proc, got = ansible_play(PLAYBOOK, extra, inventory=INVENTORY, more=more, root=ROOT)
    assert proc.returncode == 0, proc.stdout
    return got


def test_the_ports_are_open_to_the_other_member_only(ansible_play):
    got = render(ansible_play, training_cluster_firewall_ephemeral_ports=False)
    assert got['members'] == {'m1': '10.0.0.1', 'm2': '10.0.0.2'}
    assert got['ports'] == [
        {'port': 29500, 'proto': 'tcp', 'sources': ['10.0.0.2'], 'interfaces': []},
        {'port': 29510, 'port_end': 29599, 'proto': 'tcp', 'sources': ['10.0.0.2'], 'interfaces': []},
    ]
    assert got['hosts'] == ['10.0.0.1 m1', '10.0.0.2 m2 node2']


def test_open_mpi_runtime_at_the_start_of_the_range_transport_after_it(ansible_play):
    got = render(ansible_play, training_cluster_interface='ib0')
    assert got['mpi'] == {'oob_tcp_dynamic_ipv4_ports': '29510-29519', 'btl_tcp_port_min_v4': 29520,
                          'btl_tcp_port_range_v4': 80, 'btl_tcp_if_include': 'ib0', 'oob_tcp_if_include': 'ib0'}


def test_an_interconnect_without_member_sources(ansible_play):
    got = render(ansible_play, training_cluster_firewall_from_members=False, training_cluster_firewall_interfaces=['ib0'],
                 training_cluster_firewall_ephemeral_ports=False)
    assert {(p['port'], tuple(p['sources']), tuple(p['interfaces'])) for p in got['ports']} == {
        (29500, (), ('ib0',)), (29510, (), ('ib0',))}


def test_nothing_is_opened_to_the_world(ansible_play):
    # No interface and no member sources: nothing at all (the preflight refuses it), never an entry without sources.
    assert render(ansible_play, training_cluster_firewall_from_members=False)['ports'] == []


def test_a_cluster_of_one_opens_nothing(ansible_play):
    got = render(ansible_play, training_cluster_group='solo', more='    solo:\n      hosts:\n        m1: {}\n')
    assert got['members'] == {'m1': '10.0.0.1'} and got['ports'] == []


def test_a_member_without_an_address_is_named(ansible_play):
    got = render(ansible_play, more='    big:\n      hosts:\n        m1: {}\n        m3: {ansible_host: m3.example}\n',
                 training_cluster_group='big')
    assert got['unaddressed'] == ['m3']
