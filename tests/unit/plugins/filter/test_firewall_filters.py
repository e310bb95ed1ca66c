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


@pytest.mark.parametrize('name', ['firewall_rules', 'firewall_entries'])
@pytest.mark.parametrize('items,fragment', [
    ('22/tcp', 'expected a list of firewall entries'), ({'port': 22}, 'expected a list of firewall entries'),
    ([{'port': 22, 'sources': '10.0.0.1'}], 'sources of the entry for port 22 must be a list'),
    (['22/tcp'], 'a firewall entry must be a dict'),
])
def test_refuses(name, items, fragment):
    with pytest.raises(AnsibleFilterError, match=name) as e:
        FILTERS[name](items)
    assert fragment in str(e.value)
