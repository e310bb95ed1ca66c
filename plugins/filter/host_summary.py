# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter host_summary (documented in host_summary.yml)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError


def _units(show):
    """``{Id: 'ActiveState (SubState)'}`` from ``systemctl show --property=Id,ActiveState,SubState`` output.

    systemctl prints one block of Key=value lines per unit, blocks separated by an empty line.
    """
    units = {}
    for block in (show or '').split('\n\n'):
        unit = dict(line.split('=', 1) for line in block.splitlines() if '=' in line)
        if unit.get('Id'):
            units[unit['Id']] = '%s (%s)' % (unit.get('ActiveState', '?'), unit.get('SubState', '?'))
    return units


def _version(packages, name):
    entries = packages.get(name) or [{}]
    return entries[0].get('version', '?')


def _firewalls(packages, units, ufw, firewalld):
    """The firewalls that filter, in words: ufw active, firewalld running, nftables.service active."""
    found = []
    if re.search(r'^Status: active', ufw or '', re.M):
        found.append('ufw %s, active (ufw.service %s)' % (_version(packages, 'ufw'), units.get('ufw.service', '?')))
    if (firewalld or '').strip() == 'running':
        found.append('firewalld %s, running (firewalld.service %s)'
                     % (_version(packages, 'firewalld'), units.get('firewalld.service', '?')))
    if units.get('nftables.service', '').startswith('active '):
        found.append('nftables %s, /etc/nftables.conf loaded (nftables.service %s)'
                     % (_version(packages, 'nftables'), units['nftables.service']))
    return found


def host_summary(facts, watch=(), services=None, units_show='', ufw='', firewalld=''):
    """The lines of playbooks/summary.yml for one host (see host_summary.yml)."""
    if not isinstance(facts, Mapping):
        raise AnsibleFilterError('host_summary: expected ansible_facts (a mapping), got %s' % type(facts).__name__)
    try:
        pattern = re.compile(services or '')
    except (re.error, TypeError) as exc:
        raise AnsibleFilterError('host_summary: services is not a regular expression: %s' % exc)
    packages = facts.get('packages') or {}
    units = _units(units_show)
    keys = ('distribution', 'distribution_version', 'kernel', 'virtualization_type', 'virtualization_role')
    first = tuple(facts.get(key, '?') for key in keys)
    lines = ['%s %s, kernel %s (%s %s)' % first]
    lines.extend('package: %s %s' % (name, _version(packages, name)) for name in watch if name in packages)
    for name, state in sorted((facts.get('services') or {}).items()):
        if services and state.get('status') == 'enabled' and pattern.search(name):
            lines.append('service: %s %s' % (name, units.get(name, state.get('state', '?'))))
    firewalls = _firewalls(packages, units, ufw, firewalld)
    lines.append('firewall: ' + ('; '.join(firewalls) if firewalls else 'none in use'))
    return lines


class FilterModule(object):
    def filters(self):
        return {'host_summary': host_summary}
