# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""_firewall: the hardening allow-list per entry (nftables) and per source and interface (ufw, firewalld)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _firewall as fw


def rule(port, source='', interface='', port_end=None, proto='tcp', ok=True):
    last = port if port_end is None else port_end
    ufw, firewalld = ('%d:%d' % (port, last), '%d-%d' % (port, last)) if last != port else ('%d' % port,) * 2
    return {'port': port, 'port_end': last, 'proto': proto, 'source': source, 'interface': interface, 'range_ok': ok,
            'ports_ufw': ufw, 'ports_firewalld': firewalld}


def test_no_sources_and_no_interfaces_is_one_rule_from_anywhere_on_any_interface():
    assert fw.rules([{'port': 22, 'proto': 'tcp', 'sources': []}]) == [rule(22)]
    # Missing, None and empty lists all mean "any"; a missing proto is tcp.
    assert fw.rules([{'port': 9100}, {'port': 9100, 'sources': None, 'interfaces': None}]) == [rule(9100), rule(9100)]


def test_several_sources_times_interfaces_sources_outer():
    got = fw.rules([{'port': 29510, 'port_end': 29599, 'sources': ['10.0.0.2', '10.0.0.3'], 'interfaces': ['ib0', 'eth1']}])
    assert [(r['source'], r['interface']) for r in got] == [
        ('10.0.0.2', 'ib0'), ('10.0.0.2', 'eth1'), ('10.0.0.3', 'ib0'), ('10.0.0.3', 'eth1')]
    assert {(r['ports_ufw'], r['ports_firewalld'], r['port'], r['port_end']) for r in got} == {
        ('29510:29599', '29510-29599', 29510, 29599)}


def test_entries_keep_their_order():
    got = fw.rules([{'port': 22}, {'port': 29500, 'sources': ['10.0.0.2']}, {'port': 53, 'proto': 'udp'}])
    assert got == [rule(22), rule(29500, source='10.0.0.2'), rule(53, proto='udp')]


@pytest.mark.parametrize('item,ok,ufw,firewalld,nft', [
    ({'port': 5000, 'port_end': 5000}, True, '5000', '5000', '5000'),  # a range of one port is the port
    ({'port': 5000, 'port_end': None}, True, '5000', '5000', '5000'),
    ({'port': 1, 'port_end': 65535}, True, '1:65535', '1-65535', '1-65535'),
    ({'port': 29600, 'port_end': 29500}, False, '29600:29500', '29600-29500', '29600-29500'),  # backwards
    ({'port': 0}, False, '0', '0', '0'),
    ({'port': 65535, 'port_end': 65536}, False, '65535:65536', '65535-65536', '65535-65536'),
    ({'port': 70000}, False, '70000', '70000', '70000'),
    ({'port': -1, 'port_end': 5}, False, '-1:5', '-1-5', '-1-5'),
])
def test_ranges(item, ok, ufw, firewalld, nft):
    e = fw.entry(item)
    assert (e['range_ok'], e['ports_ufw'], e['ports_firewalld'], e['nft_dport']) == (ok, ufw, firewalld, nft)
    assert [r['range_ok'] for r in fw.rules([item])] == [ok]


@pytest.mark.parametrize('value,number', [
    (22, 22), ('22', 22), ('0022', 22), (' 22 ', 22), (22.9, 22), ('22.9', 22), (True, 1),
    ('ssh', 0), (None, 0), ([22], 0), (float('inf'), 0), ('', 0),
])
def test_ports_read_as_jinja_int_reads_them(value, number):
    assert fw.as_int(value) == number


def test_nftables_writes_the_port_as_given_and_ufw_firewalld_as_numbers():
    e = fw.entry({'port': '0022', 'port_end': '22'})
    assert (e['port'], e['port_end'], e['ports_firewalld'], e['nft_dport']) == (22, 22, '22', '0022')
    e = fw.entry({'port': '6006', 'port_end': '6010'})
    assert (e['port'], e['ports_ufw'], e['nft_dport']) == (6006, '6006:6010', '6006-6010')
    assert fw.entry({'port': 'abc'})['nft_dport'] == 'abc' and not fw.entry({'port': 'abc'})['range_ok']


def test_ipv6_and_ipv4_sources_split_by_family_in_order():
    e = fw.entry({'port': 5000, 'proto': 'udp', 'sources': ['fd00::1/64', '10.1.0.0/16', '::1', '192.0.2.1']})
    assert e['sources_v4'] == ['10.1.0.0/16', '192.0.2.1'] and e['sources_v6'] == ['fd00::1/64', '::1']
    assert [r['source'] for r in fw.rules([{'port': 5000, 'sources': ['2001:db8::/32']}])] == ['2001:db8::/32']


@pytest.mark.parametrize('interfaces,iifname', [
    ([], ''), (None, ''), (['ib0'], 'iifname { "ib0" } '),
    (['ib0', 'eth1'], 'iifname { "ib0", "eth1" } '),
    (['eth0.100', 'br-x'], 'iifname { "eth0.100", "br-x" } '),  # names with '.' and '-' are kept as they are
])
def test_interface_match_for_nftables(interfaces, iifname):
    assert fw.entry({'port': 5000, 'interfaces': interfaces})['nft_iifname'] == iifname


def test_interface_names_with_dash_and_dot_in_rules():
    got = fw.rules([{'port': 5000, 'interfaces': ['eth0.100', 'br-x']}])
    assert [r['interface'] for r in got] == ['eth0.100', 'br-x']


def test_entry_keeps_proto_as_given():
    assert fw.entry({'port': 53, 'proto': 'udp'})['proto'] == 'udp'
    assert fw.entry({'port': 53})['proto'] == 'tcp'


def test_no_entries():
    assert fw.rules([]) == [] and fw.rules(None) == [] and fw.entries([]) == []


@pytest.mark.parametrize('item,fragment', [
    ({'port': 22, 'sources': '10.0.0.1'}, 'sources of the entry for port 22 must be a list'),
    ({'port': 22, 'interfaces': 'ib0'}, 'interfaces of the entry for port 22 must be a list'),
    ({'port': 22, 'sources': {'a': 1}}, 'sources'),
    ('22/tcp', 'a firewall entry must be a dict'),
])
def test_refuses_what_is_not_an_entry(item, fragment):
    with pytest.raises(ValueError) as e:
        fw.rules([item])
    assert fragment in str(e.value)
