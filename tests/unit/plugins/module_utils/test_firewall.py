# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""_firewall: the allow-list parsed once into typed values (ports, protocols, sources, interfaces), the SSH entry
merged whatever the port's spelling, and each backend's values written from the typed ones only."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _firewall as fw


def rule(port, source='', interface='', port_end=None, proto='tcp'):
    last = port if port_end is None else port_end
    ufw, firewalld = ('%d:%d' % (port, last), '%d-%d' % (port, last)) if last != port else ('%d' % port,) * 2
    family = '' if not source else ('ipv6' if ':' in source else 'ipv4')
    return {'port': port, 'port_end': last, 'proto': proto, 'source': source, 'family': family, 'interface': interface,
            'range_ok': True, 'ports_ufw': ufw, 'ports_firewalld': firewalld}


# Ports ----------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('value,number', [(22, 22), ('22', 22), ('0022', 22), (1, 1), (65535, 65535), ('65535', 65535)])
def test_a_port_is_an_int_or_ascii_digits(value, number):
    got = fw.parse_port(value, 'x')
    assert got == number and isinstance(got, int) and not isinstance(got, bool)


@pytest.mark.parametrize('value', [
    '9100\n', '22\r', '\n22', ' 22', '22 ', '+22', '-22', '2_2', '22.0', '0x16', '1e3', '', ' ', '\u0662\u0662',  # ٢٢
    '\uff12\uff12', '22\x00', 'ssh', '22/tcp', '22-23', '999999', '0' * 50 + '22',
    22.0, 22.9, float('inf'), float('nan'), True, False, None, [22], {'port': 22}, b'22', 0, -1, 65536, 10 ** 30,
])
def test_every_other_port_spelling_is_refused_naming_where(value):
    with pytest.raises(fw.FirewallError) as e:
        fw.parse_port(value, 'hardening_firewall_extra_ports[3].port')
    assert str(e.value).startswith('hardening_firewall_extra_ports[3].port: ')
    assert '1-65535' in str(e.value)


def test_the_reproduction_a_newline_port_is_refused_with_the_variable_and_entry():
    got = fw.allow_list({'hardening_firewall_extra_ports': [{'port': 8080}, {'port': '9100\n', 'sources': []}]})
    assert got['errors'] == ["hardening_firewall_extra_ports[1].port: '9100\\n' is not a port: write a number 1-65535 "
                             "such as 22 (ASCII digits only, nothing around them)"]
    with pytest.raises(fw.FirewallError, match='nothing is written'):
        fw.entries(got)
    with pytest.raises(fw.FirewallError, match='nothing is written'):
        fw.rules(got)


@pytest.mark.parametrize('item,fragment', [
    ({'port': 29600, 'port_end': 29500}, 'x.port_end: 29500 is below port 29600'),
    ({'port': 65535, 'port_end': 65536}, 'x.port_end: 65536 is out of range'),
    ({'port': 5, 'port_end': '6\n'}, "x.port_end: '6\\n' is not a port"),
    ({'port': 5, 'port_end': True}, 'x.port_end: True is not a port'),
    ({'proto': 'tcp'}, 'x: no port'),
    ({'port': 22, 'proto': 'TCP'}, "x.proto: 'TCP' is not a protocol: write tcp or udp"),
    ({'port': 22, 'proto': 'tcp\n'}, 'x.proto'), ({'port': 22, 'proto': 'icmp'}, 'x.proto'),
    ({'port': 22, 'proto': 6}, 'x.proto'),
    ({'port': 22, 'source': ['10.0.0.0/8']}, 'x: unknown key source'),  # a typo must not mean "anywhere"
    ({'port': 22, 'sources': '10.0.0.1'}, 'x: sources must be a list'),
    ({'port': 22, 'sources': None}, 'x: sources must be a list, got None: leave it out or write [] for anywhere'),
    ({'port': 22, 'interfaces': None}, 'x: interfaces must be a list'),
    ({'port': 22, 'interfaces': 'ib0'}, 'x: interfaces must be a list'),
    ('22/tcp', "x: '22/tcp' is not an entry"), (None, 'x: None is not an entry'),
])
def test_entry_refusals(item, fragment):
    with pytest.raises(fw.FirewallError) as e:
        fw.parse_entry(item, 'x')
    assert fragment in str(e.value)


def test_a_range_of_one_port_is_the_port_and_ranges_are_written_from_the_integers():
    assert fw.parse_entry({'port': '0022', 'port_end': '22'}, 'x') == {
        'port': 22, 'port_end': 22, 'proto': 'tcp', 'sources': [], 'interfaces': []}
    e = fw.entries([{'port': '6006', 'port_end': 6010}])[0]
    assert (e['ports_ufw'], e['ports_firewalld'], e['nft_dport']) == ('6006:6010', '6006-6010', '6006-6010')
    e = fw.entries([{'port': '0022', 'port_end': None, 'proto': None}])[0]
    assert (e['nft_dport'], e['proto']) == ('22', 'tcp')  # never the text as given ('0022')


# Sources --------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('value,normal', [
    ('10.0.0.5', '10.0.0.5'), ('10.0.0.5/32', '10.0.0.5'), ('10.0.0.0/8', '10.0.0.0/8'),
    ('10.0.0.1/8', '10.0.0.0/8'),  # host bits cleared, as nftables and firewalld read the network
    ('10.0.0.0/255.0.0.0', '10.0.0.0/8'), ('0.0.0.0/0', '0.0.0.0/0'),
    ('FD00:0:0::1/64', 'fd00::/64'), ('2001:db8::1', '2001:db8::1'), ('2001:db8::1/128', '2001:db8::1'),
    ('::ffff:10.0.0.1', '::ffff:a00:1'), ('::/0', '::/0'),
])
def test_a_source_is_normalised(value, normal):
    assert fw.parse_source(value, 'x') == normal


@pytest.mark.parametrize('value', [
    '', ' ', '\n', None, 0, 167772161, True, 10.0, ['10.0.0.1'], {'a': 1}, b'10.0.0.1',
    '10.0.0.1 } accept #', '10.0.0.0/8\n', ' 10.0.0.1', '10.0.0.1 ', '10.0.0.1\r', '10.0.0.1,10.0.0.2', '10.0.0.1/',
    '/8', '10.0.0.256', '010.0.0.1', '10.0.0', '10.0.0.0/33', 'fe80::1%eth0', 'fd00::/129', 'localhost',
    'any', '\u0661\u0660.0.0.1', '10.0.0.1"', '{{ admin_cidr }}', 'a' * 1000,
])
def test_every_other_source_is_refused_naming_the_variable_and_entry(value):
    got = fw.allow_list({'hardening_firewall_allowed_ports': [{'port': 22, 'sources': ['10.0.0.0/8', value]}]}, 22)
    assert len(got['errors']) == 1
    message = got['errors'][0]
    assert message.startswith('hardening_firewall_allowed_ports[0].sources[1]: %r is not an IP address or network'
                              % (value,) if len(repr(value)) <= 80 else 'hardening_firewall_allowed_ports[0].sources[1]: ')
    assert 'leave sources empty for anywhere' in message


def test_the_reproduction_an_empty_source_is_refused_not_anywhere():
    for bad in ('', None):
        got = fw.allow_list({'hardening_firewall_allowed_ports': [{'port': 22, 'sources': [bad]}]}, 22)
        assert got['errors'] == ["hardening_firewall_allowed_ports[0].sources[0]: %r is not an IP address or network: "
                                 "write one such as 10.0.0.5, 10.0.0.0/8 or fd00::/64 (leave sources empty for "
                                 "anywhere)" % (bad,)]


def test_sources_by_family_in_order_once_each():
    e = fw.entries([{'port': 5000, 'proto': 'udp',
                     'sources': ['fd00::1/64', '10.1.0.0/16', '::1', '192.0.2.1', '10.1.2.3/16']}])[0]
    assert e['sources'] == ['fd00::/64', '10.1.0.0/16', '::1', '192.0.2.1']
    assert e['sources_v4'] == ['10.1.0.0/16', '192.0.2.1'] and e['sources_v6'] == ['fd00::/64', '::1']
    assert [(r['source'], r['family']) for r in fw.rules([{'port': 5000, 'sources': ['2001:db8::/32', '10.0.0.1']}])] == [
        ('2001:db8::/32', 'ipv6'), ('10.0.0.1', 'ipv4')]


# Interfaces -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('interfaces,iifname', [
    ([], ''), (['ib0'], 'iifname { "ib0" } '), (['ib0', 'eth1'], 'iifname { "ib0", "eth1" } '),
    (['eth0.100', 'br-x', 'a_b'], 'iifname { "eth0.100", "br-x", "a_b" } '), (['x' * 15], 'iifname { "%s" } ' % ('x' * 15)),
])
def test_interface_match_for_nftables(interfaces, iifname):
    assert fw.entries([{'port': 5000, 'interfaces': interfaces}])[0]['nft_iifname'] == iifname


@pytest.mark.parametrize('value', [
    '', ' ', 'eth 0', 'eth0\n', 'eth"0', "eth'0", 'eth0/1', 'eth0:1', '.', '..', 'x' * 16, 'eth\x00', 'eth\t0',
    'ib0" } accept #', 'éth0', None, 0, True, ['ib0'],
])
def test_bad_interface_names_are_refused_in_entries_and_trusted_interfaces(value):
    got = fw.allow_list({'hardening_firewall_extra_ports': [{'port': 5000, 'interfaces': ['ib0', value]}]}, 22,
                        ['ib1', value], 'hardening_ssh_port', 'hardening_firewall_trusted_interfaces')
    assert [m.split(':')[0] for m in got['errors']] == [
        'hardening_firewall_extra_ports[0].interfaces[1]', 'hardening_firewall_trusted_interfaces[1]']
    assert all('is not an interface name' in m for m in got['errors'])
    assert got['trusted_interfaces'] == ['ib1']  # a refused name is never passed on


# The SSH entry ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('spelling', [22, '22', '0022'])
def test_the_ssh_sources_are_merged_whatever_the_spelling(spelling):
    # The reproduction: port "22" with sources gave a rule from the sources and another from anywhere.
    got = fw.allow_list({'hardening_firewall_allowed_ports': [{'port': spelling, 'proto': 'tcp', 'sources': ['10.0.0.0/8']}],
                         'hardening_firewall_extra_ports': [{'port': 8080}]}, 22)
    assert got['errors'] == []
    assert got['entries'] == [
        {'port': 22, 'port_end': 22, 'proto': 'tcp', 'sources': ['10.0.0.0/8'], 'interfaces': []},
        {'port': 8080, 'port_end': 8080, 'proto': 'tcp', 'sources': [], 'interfaces': []}]
    assert [r for r in fw.rules(got) if r['port'] == 22] == [rule(22, source='10.0.0.0/8')]


def test_the_ssh_entry_is_first_and_anywhere_only_where_no_entry_names_sources():
    default = [{'port': 22, 'proto': 'tcp', 'sources': []}]
    got = fw.allow_list({'a': default, 'b': [{'port': 9100}, {'port': '2222', 'sources': ['10.0.0.1/8', '192.0.2.7']}],
                         'c': [{'port': 2222, 'sources': ['10.9.9.9', '10.0.0.0/8'], 'interfaces': ['ib0']}]}, '2222')
    assert got['entries'][0] == {'port': 2222, 'port_end': 2222, 'proto': 'tcp',
                                 'sources': ['10.0.0.0/8', '192.0.2.7', '10.9.9.9'], 'interfaces': ['ib0']}
    assert [e['port'] for e in got['entries']] == [2222, 22, 9100]
    assert fw.allow_list({'a': default}, 22)['entries'] == [
        {'port': 22, 'port_end': 22, 'proto': 'tcp', 'sources': [], 'interfaces': []}]
    assert fw.allow_list({}, 22)['entries'][0]['sources'] == []


def test_a_range_or_udp_at_the_ssh_port_is_its_own_entry():
    got = fw.allow_list({'a': [{'port': 22, 'port_end': 30, 'sources': ['10.0.0.1']}, {'port': 22, 'proto': 'udp'}]}, 22)
    assert [(e['port'], e['port_end'], e['proto'], e['sources']) for e in got['entries']] == [
        (22, 22, 'tcp', []), (22, 30, 'tcp', ['10.0.0.1']), (22, 22, 'udp', [])]


@pytest.mark.parametrize('value', ['22\n', 0, True, 'ssh', 22.0])
def test_a_bad_ssh_port_is_an_error_by_name(value):
    got = fw.allow_list({'a': []}, value, ssh_port_name='hardening_ssh_port')
    assert len(got['errors']) == 1 and got['errors'][0].startswith('hardening_ssh_port: ')


def test_every_error_is_listed_and_bad_entries_are_left_out():
    got = fw.allow_list({'a': [{'port': 1}, {'port': 0}, 'x'], 'b': {'port': 5}, 'c': None}, None, 'ib0')
    assert [m.split(':')[0] for m in got['errors']] == ['a[1].port', 'a[2]', 'b', 'trusted_interfaces']
    assert [e['port'] for e in got['entries']] == [1]


# Rendering -------------------------------------------------------------------------------------------------------------

def test_one_rule_per_source_and_interface_sources_outer():
    got = fw.rules([{'port': 29510, 'port_end': 29599, 'sources': ['10.0.0.2', '10.0.0.3'], 'interfaces': ['ib0', 'eth1']}])
    assert [(r['source'], r['interface']) for r in got] == [
        ('10.0.0.2', 'ib0'), ('10.0.0.2', 'eth1'), ('10.0.0.3', 'ib0'), ('10.0.0.3', 'eth1')]
    assert fw.rules([{'port': 22}, {'port': 53, 'proto': 'udp'}]) == [rule(22), rule(53, proto='udp')]


def test_typed_entries_render_unchanged_and_plain_lists_are_parsed_on_the_way():
    typed = fw.allow_list({'a': [{'port': '5000', 'sources': ['10.0.0.9/8']}]}, None)
    assert fw.entries(typed) == fw.entries([{'port': 5000, 'sources': ['10.0.0.0/8']}])
    with pytest.raises(fw.FirewallError, match=r"entry\[0\]\.sources\[0\]: '' is not an IP address"):
        fw.rules([{'port': 5000, 'sources': ['']}])
    # A hand-made "typed" result is checked again, not trusted.
    with pytest.raises(fw.FirewallError, match=r"entries\[0\]\.port: '9100\\n'"):
        fw.entries({'entries': [{'port': '9100\n'}], 'errors': []})
    assert fw.rules(None) == [] and fw.entries([]) == []
    with pytest.raises(fw.FirewallError, match='expected a list of firewall entries'):
        fw.entries('22/tcp')


# Cluster entries ------------------------------------------------------------------------------------------------------

PORTS = [{'port': 6817, 'proto': 'tcp'}, {'port': 60001, 'port_end': 63000, 'proto': 'tcp'}]
MEMBERS = {'ctl': '10.0.0.1', 'c1': '10.0.0.2', 'c2': '', 'c3': '10.0.0.2', 'c4': '10.0.0.4'}


def test_member_entries_from_the_other_members_then_the_extra_sources():
    got = fw.member_entries(PORTS, MEMBERS, 'ctl', sources=['192.0.2.0/24', '10.0.0.4'])
    assert got == [dict(p, sources=['10.0.0.2', '10.0.0.4', '192.0.2.0/24']) for p in PORTS]
    assert 'interfaces' not in got[0]  # slurm's entries name no interfaces
    got = fw.member_entries(PORTS, MEMBERS, 'c1', interfaces=['ib0'])
    assert got[0] == {'port': 6817, 'proto': 'tcp', 'sources': ['10.0.0.1', '10.0.0.2', '10.0.0.4'], 'interfaces': ['ib0']}


def test_member_entries_never_to_the_world():
    assert fw.member_entries(PORTS, {'solo': '10.0.0.1'}, 'solo') == []  # nobody
    assert fw.member_entries(PORTS, MEMBERS, 'ctl', from_members=False) == []  # everybody: no
    assert fw.member_entries(PORTS, MEMBERS, 'ctl', interfaces=[], from_members=False) == []
    got = fw.member_entries(PORTS, MEMBERS, 'ctl', interfaces=['ib0'], from_members=False)
    assert [(e['sources'], e['interfaces']) for e in got] == [([], ['ib0'])] * 2  # anyone on the interconnect
    assert fw.member_entries([], MEMBERS, 'ctl') == []


@pytest.mark.parametrize('args,fragment', [
    (('22', MEMBERS, 'ctl'), 'ports as a list of dicts'), ((PORTS, ['10.0.0.1'], 'ctl'), 'members as a dict'),
    ((PORTS, MEMBERS, 'ctl', '10.0.0.0/8'), 'sources must be a list'),
    ((PORTS, MEMBERS, 'ctl', None, 'ib0'), 'interfaces must be a list'),
])
def test_member_entries_refuse_what_is_not_their_shape(args, fragment):
    with pytest.raises(fw.FirewallError, match=fragment):
        fw.member_entries(*args)
