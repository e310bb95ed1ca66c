# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filters firewall_entries and firewall_rules (documented in their .yml files): thin wrappers of
plugins/module_utils/_firewall.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _firewall


def _call(name, function, items):
    if items is not None and (isinstance(items, (str, bytes, dict)) or not isinstance(items, (list, tuple))):
        raise AnsibleFilterError('%s: expected a list of firewall entries, got %r' % (name, items))
    try:
        return function(items)
    except ValueError as e:
        raise AnsibleFilterError('%s: %s' % (name, e))


def firewall_entries(items):
    """Each entry with its range, its sources by family and its nftables dport and iifname (see _firewall.entry)."""
    return _call('firewall_entries', _firewall.entries, items)


def firewall_rules(items):
    """One rule per entry, source and interface, for ufw and firewalld (see _firewall.rules)."""
    return _call('firewall_rules', _firewall.rules, items)


class FilterModule(object):
    def filters(self):
        return {'firewall_entries': firewall_entries, 'firewall_rules': firewall_rules}
