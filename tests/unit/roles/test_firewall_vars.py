# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The firewall role's allow-list, templated by Ansible: port ranges and per-interface entries in the nftables ruleset
and in the one-rule-at-a-time list that ufw and firewalld read (_firewall_rules)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

PLAYBOOK = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ {'rules': _firewall_rules, 'retired': _firewall_retired,
                      'nft': lookup('ansible.builtin.template', '%(root)s/roles/firewall/templates/nftables.conf.j2')}
                     | to_json }}"
'''

CLUSTER = [
    {'port': 29500, 'proto': 'tcp', 'sources': ['10.0.0.2', '10.0.0.3']},
    {'port': 29501, 'port_end': 29599, 'proto': 'tcp', 'sources': ['10.0.0.2'], 'interfaces': ['ib0', 'eth1']},
    {'port': 9100, 'sources': []},
]


def render(ansible_play, **extra):
    proc, got = ansible_play(PLAYBOOK, extra, role_vars=['firewall'], root=ROOT)
    assert proc.returncode == 0, proc.stdout
    return got


def test_ranges_sources_and_interfaces_in_the_nftables_table(ansible_play):
    nft = render(ansible_play, firewall_service_ports=CLUSTER)['nft']
    lines = [line.strip() for line in nft.splitlines()]
    assert 'tcp dport 22 accept' in lines
    assert 'ip saddr { 10.0.0.2, 10.0.0.3 } tcp dport 29500 accept' in lines
    assert 'iifname { "ib0", "eth1" } ip saddr { 10.0.0.2 } tcp dport 29501-29599 accept' in lines
    assert 'tcp dport 9100 accept' in lines
    # Nothing of the cluster is open to the world.
    assert not [line for line in lines if 'dport 295' in line and 'saddr' not in line]


def test_one_rule_per_source_and_interface_for_ufw_and_firewalld(ansible_play):
    rules = render(ansible_play, firewall_service_ports=CLUSTER)['rules']
    ranged = [r for r in rules if r['port'] == 29501]
    assert sorted((r['source'], r['interface']) for r in ranged) == [('10.0.0.2', 'eth1'), ('10.0.0.2', 'ib0')]
    assert {r['ports_ufw'] for r in ranged} == {'29501:29599'}
    assert {r['ports_firewalld'] for r in ranged} == {'29501-29599'}
    assert all(r['range_ok'] for r in rules)
    single = [r for r in rules if r['port'] == 29500]
    assert sorted(r['source'] for r in single) == ['10.0.0.2', '10.0.0.3']
    assert {(r['ports_ufw'], r['interface']) for r in single} == {('29500', '')}
    assert rules[0]['port'] == 22 and rules[0]['source'] == ''


def test_a_backwards_range_is_never_rendered(ansible_play):
    # The preflight names it (tests/preflight); the backends' variables fail rather than write anything.
    proc, got = ansible_play(PLAYBOOK, {'firewall_service_ports': [{'port': 29600, 'port_end': 29500}]},
                             role_vars=['firewall'], root=ROOT)
    out = ' '.join(proc.stdout.split())
    assert proc.returncode != 0 and got is None, out
    assert ('the allow-list has errors, nothing is written: firewall_service_ports (gpuops_firewall_ports)[0]'
            '.port_end: 29500 is below port 29600') in out, out
    assert 'Traceback' not in out, out


def test_an_interface_only_entry_does_not_keep_a_retired_port_open_to_the_world(ansible_play):
    # 8888 allowed on an interconnect only is not "8888 from anywhere": ufw/firewalld still delete the old rule.
    got = render(ansible_play, firewall_service_ports=[{'port': 8888, 'sources': [], 'interfaces': ['ib0']}])
    assert got['retired'] == [{'port': 8888, 'proto': 'tcp'}]
