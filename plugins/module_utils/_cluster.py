# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The training_cluster role's members (and the slurm role's nodes): each one's cluster address, and the /etc/hosts
lines that name them.

A member is read from a dict of its variables, of which these count: training_cluster_address,
training_cluster_interface, ansible_host, training_cluster_aliases and ansible_facts (the interface's
``ipv4.address``, ``default_ipv4.address``, ``hostname``). A key that is missing counts as not set.

Used by the cluster_member_addresses and cluster_hosts_lines filters (plugins/filter/cluster.py) on the control
node. Standard library only.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re
from collections.abc import Mapping

# What passes for an IP address in ansible_host (a host name does not): digits and dots, or hex digits and colons.
IP_PATTERN = re.compile(r'^[0-9.]+$|^[0-9a-fA-F]*:[0-9a-fA-F:.]*$')
_MISSING = object()


def _get(value, *keys):
    """VALUE[key][key]...: _MISSING where a level is not a mapping or lacks the key."""
    for key in keys:
        if not isinstance(value, Mapping) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _or(value, default):
    return default if value is _MISSING else value


def fact_name(interface):
    """The key of an interface in ansible_facts: '-' and '.' become '_' (eth0.100 -> eth0_100, br-x -> br_x)."""
    return interface.replace('-', '_').replace('.', '_')


def member_address(variables, interface='', prefix='training_cluster'):
    """A member's address, from its VARIABLES (a dict, see the module): its training_cluster_address, else its IPv4
    address on the interface (its own training_cluster_interface, else INTERFACE, the calling host's), else its
    default IPv4 address, else its ansible_host where that is an IP address; '' where none is known. PREFIX names
    the role whose <prefix>_address and <prefix>_interface count (the slurm role's slurm_address, slurm_interface)."""
    variables = variables if isinstance(variables, Mapping) else {}
    facts = _or(_get(variables, 'ansible_facts'), {})
    iface = '%s' % (_or(_get(variables, prefix + '_interface'), interface),)
    host = '%s' % (_or(_get(variables, 'ansible_host'), ''),)
    by_iface = _or(_get(facts, fact_name(iface), 'ipv4', 'address'), '') if iface else ''
    by_default = _or(_get(facts, 'default_ipv4', 'address'), '')
    return (_or(_get(variables, prefix + '_address'), '') or by_iface or by_default
            or (host if IP_PATTERN.match(host) else ''))


def member_addresses(hosts, host_variables, interface='', prefix='training_cluster'):
    """{host: address} for each of HOSTS in order, each read from HOST_VARIABLES[host] (``member_address``);
    '' for a member whose address is unknown."""
    return dict((host, member_address(host_variables.get(host, {}), interface, prefix)) for host in hosts)


def _unique(names):
    """NAMES without repeats, the first kept; case-insensitive, as Ansible's unique filter is."""
    out, seen = [], []
    for name in names:
        key = name.lower() if isinstance(name, str) else name
        if key not in seen:
            seen.append(key)
            out.append(name)
    return out


def hosts_lines(hosts, addresses, host_variables):
    """One /etc/hosts line per member of HOSTS with an address in ADDRESSES ({host: address}), in order: the address,
    then the member's inventory name, its short hostname (ansible_facts, else its inventory name) and its
    training_cluster_aliases, each name once."""
    out = []
    for host in hosts:
        address = addresses.get(host)
        if not address:
            continue
        variables = host_variables.get(host, {})
        aliases = _or(_get(variables, 'training_cluster_aliases'), [])
        if isinstance(aliases, (str, bytes, Mapping)) or not isinstance(aliases, (list, tuple)):
            raise ValueError('training_cluster_aliases of %s must be a list, got %r' % (host, aliases))
        names = [host, _or(_get(variables, 'ansible_facts', 'hostname'), host)] + list(aliases)
        out.append('%s %s' % (address, ' '.join('%s' % n for n in _unique(names))))
    return out
