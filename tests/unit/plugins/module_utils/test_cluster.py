# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""_cluster: the training cluster members' addresses and their /etc/hosts lines."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _cluster as cl

FACTS = {'hostname': 'node1', 'default_ipv4': {'address': '192.168.0.1'}, 'ib0': {'ipv4': {'address': '10.10.0.1'}},
         'eth0_100': {'ipv4': {'address': '10.20.0.1'}}, 'br_x': {'ipv4': {'address': '10.30.0.1'}},
         'eth1': {'ipv6': [{'address': 'fd00::1'}]}}


@pytest.mark.parametrize('variables,interface,address', [
    # training_cluster_address first, even over the facts
    ({'training_cluster_address': '10.0.0.2', 'ansible_facts': FACTS}, 'ib0', '10.0.0.2'),
    # an empty or null setting counts as unset
    ({'training_cluster_address': '', 'ansible_facts': FACTS}, 'ib0', '10.10.0.1'),
    ({'training_cluster_address': None, 'ansible_facts': FACTS}, '', '192.168.0.1'),
    # the interface's address: the calling host's interface, else its own
    ({'ansible_facts': FACTS}, 'ib0', '10.10.0.1'),
    ({'ansible_facts': FACTS, 'training_cluster_interface': 'ib0'}, '', '10.10.0.1'),
    ({'ansible_facts': FACTS, 'training_cluster_interface': ''}, 'ib0', '192.168.0.1'),  # its own '' wins
    # '-' and '.' are '_' in the facts' keys
    ({'ansible_facts': FACTS, 'training_cluster_interface': 'eth0.100'}, '', '10.20.0.1'),
    ({'ansible_facts': FACTS}, 'br-x', '10.30.0.1'),
    # no IPv4 on the interface, no such interface, an interface named like a fact that is no interface
    ({'ansible_facts': FACTS}, 'eth1', '192.168.0.1'),
    ({'ansible_facts': FACTS}, 'ib9', '192.168.0.1'),
    ({'ansible_facts': FACTS}, 'hostname', '192.168.0.1'),
    # no facts: ansible_host where it is an IP address
    ({'ansible_host': '10.0.0.1'}, 'ib0', '10.0.0.1'),
    ({'ansible_host': 'fd00::4'}, '', 'fd00::4'),
    ({'ansible_host': 'm3.example'}, '', ''),
    ({'ansible_host': 'node-1'}, '', ''),
    ({'ansible_facts': {}, 'ansible_host': 'm3.example'}, 'ib0', ''),
    ({'ansible_facts': None, 'ansible_host': None}, '', ''),
    ({'ansible_facts': {'default_ipv4': {}}}, '', ''),
    ({}, '', ''),
])
def test_member_address(variables, interface, address):
    assert cl.member_address(variables, interface) == address


def test_member_addresses_in_order_unknown_empty():
    got = cl.member_addresses(['m2', 'm1', 'm3'], {'m1': {'ansible_host': '10.0.0.1'},
                                                   'm2': {'training_cluster_address': '10.0.0.2'},
                                                   'm3': {'ansible_host': 'm3.example'}}, 'ib0')
    assert got == {'m2': '10.0.0.2', 'm1': '10.0.0.1', 'm3': ''} and list(got) == ['m2', 'm1', 'm3']
    assert cl.member_addresses([], {}) == {}


@pytest.mark.parametrize('name,key', [('ib0', 'ib0'), ('eth0.100', 'eth0_100'), ('br-x', 'br_x'), ('ib-0.5', 'ib_0_5')])
def test_fact_name(name, key):
    assert cl.fact_name(name) == key


def test_hosts_lines():
    variables = {'m1': {'ansible_facts': {'hostname': 'node1'}},
                 'm2': {'ansible_facts': {'hostname': 'm2'}, 'training_cluster_aliases': ['node2', 'M2', 'node2b', 'node2']},
                 'm3': {'ansible_facts': {}},
                 'm4': {'training_cluster_aliases': ['gpu4']}}
    addresses = {'m1': '10.0.0.1', 'm2': '10.0.0.2', 'm3': '', 'm4': 'fd00::4'}
    # m3 has no address: no line; each name once, case-insensitively, the first kept; no facts: the inventory name.
    assert cl.hosts_lines(['m1', 'm2', 'm3', 'm4'], addresses, variables) == [
        '10.0.0.1 m1 node1', '10.0.0.2 m2 node2 node2b', 'fd00::4 m4 gpu4']


def test_hosts_lines_read_an_empty_hostname_as_none():
    # An empty short hostname is no name (the Jinja it replaced wrote two spaces): the inventory name stands.
    assert cl.hosts_lines(['m5'], {'m5': '10.0.0.5'}, {'m5': {'ansible_facts': {'hostname': ''}}}) == ['10.0.0.5 m5']


def test_hosts_lines_member_without_address_or_variables():
    assert cl.hosts_lines(['m1', 'm8'], {'m1': '10.0.0.1'}, {}) == ['10.0.0.1 m1']


@pytest.mark.parametrize('aliases', ['node2', {'node2': 1}, 7])
def test_hosts_lines_refuse_aliases_that_are_no_list(aliases):
    with pytest.raises(ValueError, match='training_cluster_aliases of m2 must be a list'):
        cl.hosts_lines(['m2'], {'m2': '10.0.0.2'}, {'m2': {'training_cluster_aliases': aliases}})
