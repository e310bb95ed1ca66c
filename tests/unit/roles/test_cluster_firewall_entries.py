# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The firewall entries that training_cluster and slurm publish come from one filter (firewall_member_entries, issue 53)
and are the entries their hand-written Jinja built before, for valid inventories: both are templated by Ansible on the
same inventory, for every host, and compared."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

# The expressions of roles/slurm/vars/main.yml and roles/training_cluster/vars/main.yml before the filter, verbatim.
EARLIER = {
    '_slurm_firewall_sources': """{{ (_slurm_addresses | dict2items | rejectattr('key', 'equalto', inventory_hostname)
        | map(attribute='value') | select | list + slurm_firewall_sources) | unique | list }}""",
    'slurm': """{{ (([{'port': slurm_slurmctld_port | int, 'proto': 'tcp'}] if _slurm_is_controller | bool else [])
        + ([{'port': slurm_slurmd_port | int, 'proto': 'tcp'}] if _slurm_is_compute | bool else [])
        + [{'port': slurm_srun_port_range_start | int, 'port_end': slurm_srun_port_range_end | int, 'proto': 'tcp'}])
       | map('combine', {'sources': _slurm_firewall_sources})
       | list if (_slurm_is_controller | bool or _slurm_is_compute | bool) and _slurm_firewall_sources | length > 0 else [] }}""",
    '_training_cluster_peer_addresses': """{{ _training_cluster_members | dict2items
        | rejectattr('key', 'equalto', inventory_hostname) | map(attribute='value') | select | unique | list }}""",
    '_training_cluster_firewall_sources': """{{ ((_training_cluster_peer_addresses if training_cluster_firewall_from_members
        | bool else []) + training_cluster_firewall_sources) | unique | list }}""",
    '_training_cluster_firewall_open_before': """{{ (_training_cluster_firewall_sources | length > 0)
        if training_cluster_firewall_from_members | bool else (training_cluster_firewall_interfaces | length > 0) }}""",
    'training_cluster': """{{ ([{'port': training_cluster_rendezvous_port | int, 'proto': 'tcp'},
         {'port': training_cluster_port_range_start | int, 'port_end': training_cluster_port_range_end | int, 'proto': 'tcp'}]
        + ([{'port': _training_cluster_ephemeral[0], 'port_end': _training_cluster_ephemeral[1], 'proto': 'tcp'}]
           if training_cluster_firewall_ephemeral_ports | bool and _training_cluster_ephemeral | length == 2 else []))
       | map('combine', {'sources': _training_cluster_firewall_sources, 'interfaces': training_cluster_firewall_interfaces})
       | list if _training_cluster_is_member | bool and _training_cluster_firewall_open_before | bool else [] }}""",
}

# The roles' variables are loaded on every host with include_vars, so the role defaults' empty slurm_address and
# training_cluster_address are host variables here: the members are addressed by their IP ansible_host.
PLAYBOOK = '''
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_vars: "%(root)s/roles/slurm/defaults/main.yml"
    - ansible.builtin.include_vars: "%(root)s/roles/slurm/vars/main.yml"
    - ansible.builtin.include_vars: "%(root)s/roles/training_cluster/defaults/main.yml"
    - ansible.builtin.include_vars: "%(root)s/roles/training_cluster/vars/main.yml"
    - ansible.builtin.set_fact:
        __got: "{{ {'slurm': [_slurm_firewall_ports, __slurm_before], 'training_cluster': [_training_cluster_firewall_ports,
                    __training_before], 'open': [_training_cluster_firewall_open | bool, __open_before | bool]
                    if _training_cluster_is_member | bool else []} }}"
      vars:
        _slurm_firewall_sources: %(slurm_sources)s
        __slurm_before: %(slurm)s
        _training_cluster_peer_addresses: %(peers)s
        _training_cluster_firewall_sources: %(tc_sources)s
        _training_cluster_firewall_open_before: %(open)s
        __open_before: "{{ _training_cluster_firewall_open_before }}"
        __training_before: %(tc)s
        __training_cluster_ephemeral_range: {content: "MzI3NjgJNjA5OTkK"}  # "32768\\t60999\\n", as slurp reads it
    - ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, '__got'))) | to_json }}"
      run_once: true
      delegate_to: localhost
'''

INVENTORY = '''
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: "%(python)s"
  children:
    slurm_controller:
      hosts:
        ctl: {ansible_host: 10.0.0.1}
    slurm_compute:
      hosts:
        c1: {ansible_host: 10.0.0.2}
        c2: {ansible_host: 10.0.0.3}
        c3: {ansible_host: 10.0.0.4}
    training_cluster:
      hosts:
        c1: {}
        c2: {}
        c3: {}
    outsiders:
      hosts:
        out: {ansible_host: 10.0.0.9}
'''


@pytest.mark.parametrize('extra', [
    {},
    {'slurm_firewall_sources': ['192.0.2.0/24', '10.0.0.2'], 'training_cluster_firewall_sources': ['192.0.2.7']},
    {'training_cluster_firewall_interfaces': ['ib0'], 'training_cluster_firewall_ephemeral_ports': False},
    {'training_cluster_firewall_from_members': False, 'training_cluster_firewall_interfaces': ['ib0', 'eth1']},
    {'training_cluster_firewall_from_members': False},  # nobody: nothing (the preflight refuses it)
    {'gpuops_slurm_compute_hosts': 'none_here', 'training_cluster_group': 'outsiders'},  # clusters of one, or none
])
def test_the_filter_gives_the_entries_the_hand_written_jinja_gave(ansible_play, extra):
    fields = {key: yaml.safe_dump(value, default_style='"', width=10000).strip().replace('\n', ' ')
              for key, value in (('slurm_sources', EARLIER['_slurm_firewall_sources']), ('slurm', EARLIER['slurm']),
                                 ('peers', EARLIER['_training_cluster_peer_addresses']),
                                 ('tc_sources', EARLIER['_training_cluster_firewall_sources']),
                                 ('open', EARLIER['_training_cluster_firewall_open_before']),
                                 ('tc', EARLIER['training_cluster']))}
    proc, got = ansible_play(PLAYBOOK, extra, inventory=INVENTORY, root=ROOT, **fields)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert set(got) == {'ctl', 'c1', 'c2', 'c3', 'out'}
    for host, results in got.items():
        for what, pair in results.items():
            # The open flag is read for members only (tasks/ports.yml); a non-member's is [].
            assert pair == [] or pair[0] == pair[1], (host, what, pair)
    if not extra:
        assert got['ctl']['slurm'][0] == [
            {'port': 6817, 'proto': 'tcp', 'sources': ['10.0.0.2', '10.0.0.3', '10.0.0.4']},
            {'port': 60001, 'port_end': 60100, 'proto': 'tcp', 'sources': ['10.0.0.2', '10.0.0.3', '10.0.0.4']}]
        assert got['c2']['training_cluster'][0][-1] == {
            'port': 32768, 'port_end': 60999, 'proto': 'tcp', 'sources': ['10.0.0.2', '10.0.0.4'], 'interfaces': []}
        assert got['out']['slurm'][0] == [] and got['out']['training_cluster'][0] == []
