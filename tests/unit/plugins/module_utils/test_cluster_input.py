# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""_cluster under hostile input (issue 52, item 9): a member's address is exactly one IP address, normalised, and no
two members share one; the names that reach /etc/hosts and slurm.conf are host names, none shared. Each refusal names
the member, the variable that gave the value and the fix."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import cluster as cluster_filters
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _cluster as cl

NAT = {'default_ipv4': {'address': '10.0.2.15'}}


def hosts_entries(lines):
    """What glibc's files backend reads from /etc/hosts LINES: {name: address} for every line (address, then names),
    a '#' starting a comment. The detector of the tests below: a name nobody meant shows up here."""
    entries = {}
    for line in '\n'.join(lines).splitlines():
        fields = line.split('#', 1)[0].split()
        for name in fields[1:]:
            entries.setdefault(name, fields[0])
    return entries


JUNK = ['10.0.0.9\n0.0.0.0 github.com', '10.0.0.5 alias', '10.0.0.5\t#x', '10.0.0.5\r', ' 10.0.0.5', '10.0.0.5 ',
        '10.0.0.5\n', '10.0.0.0/24', '10.0.0', '10.0.0.256', '010.0.0.1', '١٠.0.0.1', '１０.0.0.1', 'fe80::1%eth0',
        'fd00::1%x\n0.0.0.0 github.com', 'node1.example', '', 'cafe:', '0.0.0.0', '::', '127.0.0.1', '127.0.1.1', '::1',
        '224.0.0.1', 'ff02::1', '255.255.255.255', '240.0.0.1', 'fe80::1']


@pytest.mark.parametrize('value', JUNK[:17] + JUNK[18:])
@pytest.mark.parametrize('prefix', ['training_cluster', 'slurm'])
def test_a_set_address_that_is_not_exactly_one_usable_ip_is_refused_naming_the_variable(value, prefix):
    variables = {'m1': {prefix + '_address': value}, 'm2': {prefix + '_address': '10.0.0.2'}}
    problems = cl.address_problems(['m1', 'm2'], variables, '', prefix)
    if value == '':
        assert problems == []  # empty is unset, as before: the role refuses an unknown address by name
        return
    assert len(problems) == 1 and problems[0].startswith('m1: its %s_address ' % prefix), problems
    assert 'exactly one IP address' in problems[0]
    with pytest.raises(ValueError, match='m1: its %s_address' % prefix):
        cl.member_addresses(['m1', 'm2'], variables, '', prefix)


@pytest.mark.parametrize('value', [167772161, True, 10.5, ['10.0.0.1'], {'a': 1}])
def test_a_set_address_that_is_no_string_is_refused(value):
    problems = cl.address_problems(['m1'], {'m1': {'training_cluster_address': value}})
    assert len(problems) == 1 and 'is not an IP address (a string)' in problems[0], problems


@pytest.mark.parametrize('value', ['10.0.0.9\n0.0.0.0 github.com', '127.0.0.1', '10.0.0.5 alias'])
def test_junk_from_facts_is_refused_naming_the_fact(value):
    on_iface = {'ansible_facts': {'ib0': {'ipv4': {'address': value}}}}
    problems = cl.address_problems(['m1'], {'m1': on_iface}, 'ib0')
    assert problems and problems[0].startswith("m1: its ansible_facts['ib0']['ipv4']['address'] (its address on ib0"), problems
    by_default = {'ansible_facts': {'default_ipv4': {'address': value}}}
    problems = cl.address_problems(['m1'], {'m1': by_default})
    assert problems and problems[0].startswith("m1: its ansible_facts['default_ipv4']['address']"), problems


def test_ansible_host_counts_only_where_it_is_an_ip_address():
    # A host name is no address (and not refused); something that looks like an IP address but is none is refused.
    assert cl.member_address({'ansible_host': 'node1.example'}) == ''
    assert cl.member_address({'ansible_host': '10.0.0.5 alias'}) == ''
    assert cl.member_address({'ansible_host': '10.0.0.9\n0.0.0.0 github.com'}) == ''
    with pytest.raises(ValueError, match="its ansible_host is not one IP address, got 'cafe:'"):
        cl.member_address({'ansible_host': 'cafe:'})
    with pytest.raises(ValueError, match='is a loopback address'):
        cl.member_address({'ansible_host': '127.0.0.1'})


@pytest.mark.parametrize('value,normal', [('10.0.0.5', '10.0.0.5'), ('FD00:0:0::1', 'fd00::1'),
                                          ('fd00:0000::0001', 'fd00::1'), ('::ffff:10.0.0.1', '::ffff:a00:1'),
                                          ('169.254.0.5', '169.254.0.5'), ('100.64.0.1', '100.64.0.1')])
def test_good_addresses_are_normalised(value, normal):
    assert cl.member_address({'training_cluster_address': value}) == normal
    assert cl.hosts_lines(['m1'], {'m1': value}, {}) == ['%s m1' % normal]


def test_every_member_behind_nat_is_refused_naming_both_and_the_fix():
    variables = {'m1': {'ansible_facts': NAT}, 'm2': {'ansible_facts': NAT}, 'm3': {'ansible_facts': NAT}}
    problems = cl.address_problems(['m1', 'm2', 'm3'], variables)
    assert problems[0] == (
        "m1 and m2 have the same address 10.0.2.15, both from ansible_facts['default_ipv4']['address'] (its default "
        "route's address). Every host behind NAT has the same default address (10.0.2.15 under VirtualBox and "
        "Vagrant). /etc/hosts, the firewall and Slurm could not tell them apart: set training_cluster_interface to the "
        "interface of the cluster's private network (each member's address on it counts), or each member's own "
        "training_cluster_address.")
    assert problems[1].startswith('m1 and m3 have the same address 10.0.2.15') and len(problems) == 2
    slurm = cl.address_problems(['c', 'n1'], {'c': {'ansible_facts': NAT}, 'n1': {'ansible_facts': NAT}}, '', 'slurm')
    assert 'set slurm_interface to the interface' in slurm[0] and "each member's own slurm_address" in slurm[0]
    with pytest.raises(ValueError, match='m1 and m2 have the same address'):
        cl.member_addresses(['m1', 'm2'], variables)
    # The fix works: on the private interface each has its own address.
    for n, host in enumerate(['m1', 'm2', 'm3']):
        variables[host]['ansible_facts'] = dict(NAT, eth1={'ipv4': {'address': '192.168.56.1%d' % n}})
    assert cl.member_addresses(['m1', 'm2', 'm3'], variables, 'eth1') == {
        'm1': '192.168.56.10', 'm2': '192.168.56.11', 'm3': '192.168.56.12'}


def test_a_duplicate_is_seen_through_spellings_and_names_each_source():
    variables = {'a': {'slurm_address': 'fd00::7'}, 'b': {'ansible_facts': {'ib0': {'ipv4': {'address': '10.1.0.1'}}},
                                                          'slurm_address': 'FD00:0::7'}}
    problems = cl.address_problems(['a', 'b'], variables, 'ib0', 'slurm')
    assert problems == ["a and b have the same address fd00::7, both from slurm_address. /etc/hosts, the firewall and "
                        "Slurm could not tell them apart: set slurm_interface to the interface of the cluster's private "
                        "network (each member's address on it counts), or each member's own slurm_address."]
    mixed = cl.address_problems(['a', 'b'], {'a': {'training_cluster_address': '10.1.0.1'},
                                             'b': {'ansible_facts': {'ib0': {'ipv4': {'address': '10.1.0.1'}}}}}, 'ib0')
    assert mixed[0].startswith("a and b have the same address 10.1.0.1, a from training_cluster_address, b from "
                               "ansible_facts['ib0']['ipv4']['address'] (its address on ib0, training_cluster_interface "
                               "of the host that asks)")


def test_members_without_an_address_are_no_duplicates():
    assert cl.address_problems(['a', 'b'], {'a': {}, 'b': {'ansible_host': 'b.example'}}) == []
    assert cl.member_addresses(['a', 'b'], {'a': {}, 'b': {}}) == {'a': '', 'b': ''}


# The trust property: no line of /etc/hosts names anything but the members, at their own addresses.
@pytest.mark.parametrize('address', ['10.0.0.9\n0.0.0.0 github.com', '10.0.0.5 alias', 'fd00::1%x\n0.0.0.0 github.com',
                                     '10.0.0.9 github.com'])
def test_junk_never_becomes_an_etc_hosts_line(address, monkeypatch):
    variables = {'m1': {'training_cluster_address': address}, 'm2': {'training_cluster_address': '10.0.0.2'}}
    with pytest.raises(ValueError):
        cl.member_addresses(['m1', 'm2'], variables)
    with pytest.raises(ValueError, match='m1: its address is not one IP address'):
        cl.hosts_lines(['m1', 'm2'], {'m1': address, 'm2': '10.0.0.2'}, {})
    # Negative control: a naive reader (the address taken as it is, as before) writes lines that name more than the
    # members, and the detector above sees it.
    monkeypatch.setattr(cl, 'parse_address', lambda value: value)
    old = cl.hosts_lines(['m1', 'm2'], cl.member_addresses(['m1', 'm2'], variables), {})
    assert set(hosts_entries(old)) - {'m1', 'm2'}, old


@pytest.mark.parametrize('name', ['node\n1', 'node 1', 'node#1', 'nöde1', 'node1.', '.node1', 'node..1', '-node1',
                                  'node1-', 'x' * 64, '.'.join(['x' * 60] * 5), 'fd00::1', 'node1\r', 'a/b', 'a,b'])
def test_names_that_are_no_host_names_are_refused(name):
    alias = cl.name_problems(['m1'], {'m1': {'training_cluster_aliases': [name]}})
    assert len(alias) == 1 and alias[0].startswith('m1: training_cluster_aliases[0] %r is no host name' % (name,)), alias
    fact = cl.name_problems(['m1'], {'m1': {'ansible_facts': {'hostname': name}}}, 'slurm')
    assert len(fact) == 1 and "its hostname, ansible_facts['hostname']" in fact[0], fact
    inventory = cl.name_problems([name], {name: {}})
    assert len(inventory) == 1 and 'its inventory name' in inventory[0], inventory
    with pytest.raises(ValueError, match='is no host name'):
        cl.hosts_lines(['m1'], {'m1': '10.0.0.1'}, {'m1': {'training_cluster_aliases': [name]}})
    with pytest.raises(ValueError, match='is no host name'):
        cl.member_names(['m1'], {'m1': {'ansible_facts': {'hostname': name}}})


@pytest.mark.parametrize('alias', [7, None, ['x'], {'a': 'b'}])
def test_aliases_that_are_no_strings_are_refused(alias):
    problems = cl.name_problems(['m1'], {'m1': {'training_cluster_aliases': [alias]}})
    assert len(problems) == 1 and 'is no host name' in problems[0]


def test_two_members_with_one_name_are_refused():
    # Cloned machines with one hostname: two NodeName lines of one name, and /etc/hosts naming one of them.
    clones = {'a': {'ansible_facts': {'hostname': 'ubuntu'}}, 'b': {'ansible_facts': {'hostname': 'Ubuntu'}}}
    assert cl.name_problems(['a', 'b'], clones, 'slurm') == [
        "a and b both have the name Ubuntu (a: its hostname, ansible_facts['hostname']; b: its hostname, "
        "ansible_facts['hostname']): give each member names of its own."]
    with pytest.raises(ValueError, match='both have the name'):
        cl.member_names(['a', 'b'], clones)
    swapped = {'gpu1': {'ansible_facts': {'hostname': 'gpu2'}}, 'gpu2': {'ansible_facts': {'hostname': 'gpu1'}}}
    assert len(cl.name_problems(['gpu1', 'gpu2'], swapped)) == 2
    alias = {'a': {'training_cluster_aliases': ['b']}, 'b': {}}
    assert cl.name_problems(['a', 'b'], alias)[0].startswith('a and b both have the name b')


def test_good_names_pass_and_keep_their_lines():
    variables = {'gpu_node1': {'ansible_facts': {'hostname': 'gpu-node1'}, 'training_cluster_aliases': ['n1.lab.example', 'N1']},
                 '10.0.0.2': {'ansible_facts': {'hostname': 'node2'}}}
    assert cl.name_problems(['gpu_node1', '10.0.0.2'], variables) == []
    assert cl.hosts_lines(['gpu_node1', '10.0.0.2'], {'gpu_node1': '10.0.0.1', '10.0.0.2': '10.0.0.2'}, variables) == [
        '10.0.0.1 gpu_node1 gpu-node1 n1.lab.example N1', '10.0.0.2 10.0.0.2 node2']
    assert cl.member_names(['gpu_node1', '10.0.0.2', 'x'], variables) == {'gpu_node1': 'gpu-node1', '10.0.0.2': 'node2', 'x': 'x'}


def test_hosts_lines_refuse_a_shared_or_bad_address_given_directly():
    with pytest.raises(ValueError, match='m1 and m2 have the same address fd00::1'):
        cl.hosts_lines(['m1', 'm2'], {'m1': 'fd00::1', 'm2': 'FD00:0::1'}, {})
    with pytest.raises(ValueError, match='is not an IP address'):
        cl.hosts_lines(['m1'], {'m1': 7}, {})


def test_the_filters_refuse_with_the_sentences_and_the_problem_filters_return_them():
    filters = cluster_filters.FilterModule().filters()
    hostvars = {'m1': {'ansible_facts': NAT}, 'm2': {'ansible_facts': NAT}}
    with pytest.raises(AnsibleFilterError, match='cluster_member_addresses: m1 and m2 have the same address 10.0.2.15'):
        filters['cluster_member_addresses'](['m1', 'm2'], hostvars)
    assert len(filters['cluster_address_problems'](['m1', 'm2'], hostvars, '', 'slurm')) == 1
    assert filters['cluster_address_problems'](['m1', 'm2'], hostvars, 'eth9', 'training_cluster')[0].startswith('m1 and m2')
    with pytest.raises(AnsibleFilterError, match='prefix must be one of'):
        filters['cluster_address_problems'](['m1'], hostvars, '', 'other')
    bad = {'m1': {'ansible_facts': {'hostname': 'a b'}}}
    assert filters['cluster_name_problems'](['m1'], bad, 'slurm')[0].startswith("m1: its hostname")
    with pytest.raises(AnsibleFilterError, match="cluster_member_names: m1: its hostname, ansible_facts\\['hostname'\\] 'a b'"):
        filters['cluster_member_names'](['m1'], bad)
    assert filters['cluster_member_names'](['m1'], {'m1': {'ansible_facts': {'hostname': 'n1'}}}) == {'m1': 'n1'}
