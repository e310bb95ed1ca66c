# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filters platform_supported and platforms_text (documented in platform_supported.yml and platforms_text.yml).

A role's supported platforms are one mapping, ``_<role>_supported_platforms``: an Ansible distribution name
(``ansible_facts['distribution']``) to the list of its supported major versions as strings, or an OS family
(``ansible_facts['os_family']``) to an empty list for every release of that family. The common role's preflight
checks the host against it and prints it, so the message cannot drift from the data.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible.module_utils.six import string_types

# Enterprise Linux rebuilds, printed together as "EL 8/9 (RHEL, Rocky, ...)" when they support the same majors.
_EL = ('RedHat', 'Rocky', 'AlmaLinux', 'CentOS', 'OracleLinux')
_NAMES = {'RedHat': 'RHEL', 'CentOS': 'CentOS Stream', 'OracleLinux': 'Oracle Linux'}


def _platforms(platforms, name):
    """The mapping, checked: distribution or family name -> list of major versions as strings."""
    if not isinstance(platforms, dict) or not platforms:
        raise AnsibleFilterError('%s: expected a non-empty mapping of distribution to major versions, got %r' % (name, platforms))
    checked = {}
    for key, majors in platforms.items():
        if not isinstance(key, string_types) or not isinstance(majors, list):
            raise AnsibleFilterError('%s: %r: expected a distribution name and a list of major versions, got %r' % (name, key, majors))
        if not all(isinstance(m, string_types) and m.isdigit() for m in majors):
            raise AnsibleFilterError('%s: %s: major versions are strings of digits ("12", not 12 or "12.04"), got %r' % (name, key, majors))
        checked[str(key)] = [str(m) for m in majors]
    return checked


def platform_supported(facts, platforms):
    """Whether the host of these facts is one of the platforms."""
    platforms = _platforms(platforms, 'platform_supported')
    if not isinstance(facts, dict):
        raise AnsibleFilterError('platform_supported: expected ansible_facts, got %r' % (facts,))
    distribution = facts.get('distribution')
    major = str(facts.get('distribution_major_version'))
    if distribution in platforms and (not platforms[distribution] or major in platforms[distribution]):
        return True
    family = facts.get('os_family')
    return family in platforms and not platforms[family]


def _release(distribution, major):
    # Ubuntu's supported releases are its LTS ones, all released in April: major 24 is 24.04.
    return major + '.04' if distribution == 'Ubuntu' else major


def platforms_text(platforms):
    """The platforms for people: "Debian 12/13, Ubuntu 22.04/24.04, EL 8/9 (RHEL, Rocky)"."""
    platforms = _platforms(platforms, 'platforms_text')
    parts = []
    el = {}
    for distribution, majors in platforms.items():
        ordered = sorted(majors, key=int)
        if not ordered:
            parts.append('%s family (every release)' % distribution)
        elif distribution in _EL:
            el.setdefault(tuple(ordered), []).append(_NAMES.get(distribution, distribution))
        else:
            parts.append('%s %s' % (distribution, '/'.join(_release(distribution, m) for m in ordered)))
    for majors, names in el.items():
        parts.append('EL %s (%s)' % ('/'.join(majors), ', '.join(names)))
    return ', '.join(parts)


class FilterModule(object):
    def filters(self):
        return {'platform_supported': platform_supported, 'platforms_text': platforms_text}
