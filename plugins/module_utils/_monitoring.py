# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The monitoring server's view of its GPU nodes (gpu_monitoring_server's preflight): Prometheus scrapes every node
with the server's own scheme and credentials, so a node set up another way is named before anything changes.

Plain data in (per host, the variables its inventory sets), messages out; no Ansible objects."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# The spellings Ansible's bool filter reads, and only those: anything else is a mistake to name, not a False.
_TRUE = frozenset(['true', 'yes', 'on', '1', 'y', 't'])
_FALSE = frozenset(['false', 'no', 'off', '0', 'n', 'f'])

# Each setting a node must share with the server, by the names a node's inventory may give it: the
# gpu_monitoring_node role's first, then the gpu_monitoring entry's (which passes it on under the first name).
SETTINGS = (
    ('tls', ('gpu_monitoring_node_tls', 'gpu_monitoring_tls')),
    ('web_auth', ('gpu_monitoring_node_web_auth', 'gpu_monitoring_web_auth')),
    ('web_user', ('gpu_monitoring_node_web_user', 'gpu_monitoring_web_user')),
)


class MonitoringError(ValueError):
    """A value of the wrong type or spelling; the message names where it came from and what to write instead."""


def parse_bool(value, where):
    """True or False from a boolean, 0/1, or one of Ansible's spellings (any case, blanks around); else an error."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise MonitoringError('%s is %r: write true or false' % (where, value))


def parse_user(value, where):
    """A basic-auth user name: a non-empty string without ':' or blanks (exporter-toolkit's user key, Prometheus'
    username); else an error."""
    if not isinstance(value, str) or not value or value != value.strip() or any(
            ch == ':' or ch.isspace() for ch in value):
        raise MonitoringError("%s is %r: write a user name without ':' or blanks" % (where, value))
    return value


def scrape_mismatches(nodes, tls, web_auth, web_user):
    """Messages ``'<host> has <variable> <value>'`` for each node whose inventory sets TLS, basic auth or (with basic
    auth on) the user another way than the server scrapes: ``nodes`` maps a host name to the variables of SETTINGS
    that its inventory sets (name -> value). ``tls``, ``web_auth`` and ``web_user`` are the server's own values."""
    if not isinstance(nodes, dict):
        raise MonitoringError('the GPU nodes must be a mapping of host name to variables, not %s' % type(nodes).__name__)
    mine = {
        'tls': parse_bool(tls, 'the server\'s gpu_monitoring_server_tls'),
        'web_auth': parse_bool(web_auth, 'the server\'s gpu_monitoring_server_web_auth'),
    }
    mine['web_user'] = parse_user(web_user, 'the server\'s gpu_monitoring_server_web_user') if mine['web_auth'] else web_user
    out = []
    for host in sorted(nodes, key=str):
        given = nodes[host]
        if not isinstance(given, dict):
            raise MonitoringError('the variables of GPU node %s must be a mapping, not %s' % (host, type(given).__name__))
        for setting, names in SETTINGS:
            name = next((n for n in names if n in given), None)
            if name is None:
                continue
            where = 'GPU node %s: %s' % (host, name)
            if setting == 'web_user':
                if not mine['web_auth']:
                    continue
                value = parse_user(given[name], where)
            else:
                value = parse_bool(given[name], where)
            if value != mine[setting]:
                out.append('%s has %s %s' % (host, name, value))
    return out
