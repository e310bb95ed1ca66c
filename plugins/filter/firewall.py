# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filters firewall_allow_list, firewall_entries, firewall_rules and firewall_member_entries (documented in their .yml
files): thin wrappers of plugins/module_utils/_firewall.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _firewall


def _call(name, function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except ValueError as e:  # FirewallError and nothing else: a bug elsewhere keeps its traceback
        raise AnsibleFilterError('%s: %s' % (name, e))


def firewall_allow_list(lists, ssh_port=None, trusted_interfaces=None, ssh_port_name='the SSH port',
                        trusted_interfaces_name='trusted_interfaces'):
    """Every list parsed into typed entries, the SSH port's merged first; errors listed, not raised (see
    _firewall.allow_list)."""
    return _call('firewall_allow_list', _firewall.allow_list, lists, ssh_port, trusted_interfaces, ssh_port_name,
                 trusted_interfaces_name)


def firewall_entries(value):
    """Each typed entry with its range, its sources by family and its nftables dport and iifname (see
    _firewall.entries)."""
    return _call('firewall_entries', _firewall.entries, value)


def firewall_rules(value):
    """One rule per entry, source and interface, for ufw and firewalld (see _firewall.rules)."""
    return _call('firewall_rules', _firewall.rules, value)


def firewall_member_entries(ports, members, this_host, sources=None, interfaces=None, from_members=True):
    """The entries a cluster role publishes: its ports from the other members (see _firewall.member_entries)."""
    return _call('firewall_member_entries', _firewall.member_entries, ports, members, this_host, sources, interfaces,
                 from_members)


class FilterModule(object):
    def filters(self):
        return {'firewall_allow_list': firewall_allow_list, 'firewall_entries': firewall_entries,
                'firewall_rules': firewall_rules, 'firewall_member_entries': firewall_member_entries}
