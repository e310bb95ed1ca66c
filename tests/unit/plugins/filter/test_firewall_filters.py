# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import firewall

FILTERS = firewall.FilterModule().filters()


def test_filters_call_the_module_utils():
    items = [{'port': 29510, 'port_end': 29599, 'sources': ['10.0.0.2'], 'interfaces': ['ib0']}]
    assert [(r['ports_ufw'], r['source'], r['interface']) for r in FILTERS['firewall_rules'](items)] == [
        ('29510:29599', '10.0.0.2', 'ib0')]
    assert [(e['nft_iifname'], e['nft_dport']) for e in FILTERS['firewall_entries'](items)] == [
        ('iifname { "ib0" } ', '29510-29599')]
    assert FILTERS['firewall_rules'](None) == []
    got = FILTERS['firewall_allow_list']({'hardening_firewall_allowed_ports': [{'port': '22', 'sources': ['10.0.0.1/8']}]},
                                         22, ['ib0'])
    assert got == {'entries': [{'port': 22, 'port_end': 22, 'proto': 'tcp', 'sources': ['10.0.0.0/8'], 'interfaces': []}],
                   'trusted_interfaces': ['ib0'], 'errors': []}
    assert FILTERS['firewall_member_entries']([{'port': 6817}], {'a': '10.0.0.1', 'b': '10.0.0.2'}, 'a') == [
        {'port': 6817, 'sources': ['10.0.0.2']}]


def test_the_allow_list_lists_errors_and_the_renderers_refuse_it():
    got = FILTERS['firewall_allow_list']({'hardening_firewall_extra_ports': [{'port': '9100\n'}]}, 22)
    assert got['errors'] == ["hardening_firewall_extra_ports[0].port: '9100\\n' is not a port: write a number 1-65535 "
                             "such as 22 (ASCII digits only, nothing around them)"]
    for name in ('firewall_entries', 'firewall_rules'):
        with pytest.raises(AnsibleFilterError, match='%s: the allow-list has errors, nothing is written' % name):
            FILTERS[name](got)


@pytest.mark.parametrize('name', ['firewall_rules', 'firewall_entries'])
@pytest.mark.parametrize('items,fragment', [
    ('22/tcp', 'expected a list of firewall entries'),
    ([{'port': 22, 'sources': '10.0.0.1'}], 'entry[0]: sources must be a list'),
    ([{'port': 22, 'sources': ['']}], "entry[0].sources[0]: '' is not an IP address or network"),
    (['22/tcp'], "entry[0]: '22/tcp' is not an entry"),
])
def test_refuses(name, items, fragment):
    with pytest.raises(AnsibleFilterError, match=name) as e:
        FILTERS[name](items)
    assert fragment in str(e.value)


def test_the_allow_list_wants_named_lists():
    with pytest.raises(AnsibleFilterError, match='firewall_allow_list: expected the allow-list variables as a dict'):
        FILTERS['firewall_allow_list']([{'port': 22}])
    with pytest.raises(AnsibleFilterError, match='firewall_member_entries: expected the members as a dict'):
        FILTERS['firewall_member_entries']([{'port': 22}], [], 'a')
