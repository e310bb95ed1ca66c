# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filters cluster_member_addresses, cluster_address_problems, cluster_member_names, cluster_name_problems and
cluster_hosts_lines (documented in their .yml files): thin wrappers of plugins/module_utils/_cluster.py. They read each
member's variables from hostvars (or any mapping of host name to variables), only the ones that _cluster.py reads, each
templated when it is read."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError, AnsibleUndefinedVariable

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _cluster

_VARIABLES = ('training_cluster_aliases', 'ansible_host', 'ansible_facts')
# The roles whose <prefix>_address and <prefix>_interface name a member's address.
_PREFIXES = ('training_cluster', 'slurm')


def _hosts(name, hosts):
    if hosts is None:
        return []
    if isinstance(hosts, (str, bytes, Mapping)) or not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError('%s: expected a list of host names, got %r' % (name, hosts))
    return list(hosts)


def _variables(name, hosts, hostvars, prefix='training_cluster'):
    """{host: {variable: value}} for the variables _cluster.py reads; one that does not template is left out, as
    `default` would read it."""
    if not isinstance(hostvars, Mapping):
        raise AnsibleFilterError('%s: expected hostvars (a mapping of host name to variables), got %r'
                                 % (name, type(hostvars).__name__))
    out = {}
    for host in hosts:
        if host not in hostvars:
            raise AnsibleFilterError('%s: %s is not in hostvars' % (name, host))
        variables = hostvars[host]
        out[host] = {}
        for key in _VARIABLES + (prefix + '_address', prefix + '_interface'):
            if key in variables:
                try:
                    out[host][key] = variables[key]
                except AnsibleUndefinedVariable:
                    pass
    return out


def _prefix(name, prefix):
    if prefix not in _PREFIXES:
        raise AnsibleFilterError('%s: prefix must be one of %s, got %r' % (name, ', '.join(_PREFIXES), prefix))
    return prefix


def cluster_member_addresses(hosts, hostvars, interface='', prefix='training_cluster'):
    """{host: address} for HOSTS, '' where unknown (see _cluster.member_address); PREFIX: whose address variables.
    Fails where an address is no single IP address or two members share one (cluster_address_problems)."""
    hosts = _hosts('cluster_member_addresses', hosts)
    prefix = _prefix('cluster_member_addresses', prefix)
    try:
        return _cluster.member_addresses(hosts, _variables('cluster_member_addresses', hosts, hostvars, prefix),
                                         interface, prefix)
    except ValueError as e:
        raise AnsibleFilterError('cluster_member_addresses: %s' % e)


def cluster_address_problems(hosts, hostvars, interface='', prefix='training_cluster'):
    """What is wrong with the addresses of HOSTS, a sentence each (see _cluster.address_problems); [] when nothing is."""
    hosts = _hosts('cluster_address_problems', hosts)
    prefix = _prefix('cluster_address_problems', prefix)
    return _cluster.address_problems(hosts, _variables('cluster_address_problems', hosts, hostvars, prefix),
                                     interface, prefix)


def cluster_member_names(hosts, hostvars):
    """{host: name} of HOSTS, each its short hostname, else its inventory name (the slurm role's NodeName); fails where
    one is no host name or two members have one (cluster_name_problems)."""
    hosts = _hosts('cluster_member_names', hosts)
    try:
        return _cluster.member_names(hosts, _variables('cluster_member_names', hosts, hostvars))
    except ValueError as e:
        raise AnsibleFilterError('cluster_member_names: %s' % e)


def cluster_name_problems(hosts, hostvars, prefix='training_cluster'):
    """What is wrong with the names HOSTS get (see _cluster.name_problems); [] when nothing is."""
    hosts = _hosts('cluster_name_problems', hosts)
    prefix = _prefix('cluster_name_problems', prefix)
    return _cluster.name_problems(hosts, _variables('cluster_name_problems', hosts, hostvars), prefix)


def cluster_hosts_lines(hosts, addresses, hostvars):
    """The /etc/hosts lines of the members of HOSTS that have an address (see _cluster.hosts_lines)."""
    hosts = _hosts('cluster_hosts_lines', hosts)
    if not isinstance(addresses, Mapping):
        raise AnsibleFilterError('cluster_hosts_lines: expected the members\' addresses ({host: address}), got %r'
                                 % (addresses,))
    try:
        return _cluster.hosts_lines(hosts, addresses, _variables('cluster_hosts_lines', hosts, hostvars))
    except ValueError as e:
        raise AnsibleFilterError('cluster_hosts_lines: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'cluster_member_addresses': cluster_member_addresses, 'cluster_address_problems': cluster_address_problems,
                'cluster_member_names': cluster_member_names, 'cluster_name_problems': cluster_name_problems,
                'cluster_hosts_lines': cluster_hosts_lines}
