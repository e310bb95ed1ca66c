# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Which apt package specifications the installed packages already satisfy, as ansible.builtin.apt with
``state: present`` decides it, so that a role asks apt only when apt has something to do.

A specification is ``NAME``, ``NAME:ARCH``, ``NAME=VERSION`` or ``NAME:ARCH=VERSION``. apt's module (ansible-core,
modules/apt.py, ``package_status``) counts a package as present when dpkg's current state is ``installed`` and, for
``=VERSION``, when the installed version matches VERSION (fnmatch; without a wildcard, equal); an unversioned name is
present whatever its version (``state: present`` never upgrades). One case is answered conservatively, as missing, so
that apt still runs: a version with a wildcard (``NAME=590.*``), because apt then moves an installed match to a newer
candidate that also matches. Anything else apt accepts (name wildcards, ``>=``, a ``.deb`` path, a virtual package
that no installed package is named after) is also missing here: apt decides, as before.

The installed packages come either from dpkg's status file (the package_lock module reads it on the host) or from
Ansible's package_facts (``ansible_facts['packages']``: name -> list of {version, arch}).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

# Debian Policy 5.6.1 (package names) and 5.6.12 (versions: [epoch:]upstream[-revision]); arch names as dpkg prints them.
_SPEC = re.compile(r'^(?P<name>[a-z0-9][a-z0-9+.-]+)(?::(?P<arch>[a-z0-9-]+))?(?:=(?P<version>[A-Za-z0-9.+~:*-]+))?$')


def parse_dpkg_status(text):
    """{name: [{'version': V, 'arch': A}]} of the packages whose dpkg state is ``installed`` in a status file's text."""
    installed = {}
    for stanza in re.split(r'\n\s*\n', text or ''):
        fields = {}
        for line in stanza.splitlines():
            if line[:1] in (' ', '\t') or ':' not in line:
                continue
            key, value = line.split(':', 1)
            if key in ('Package', 'Status', 'Version', 'Architecture'):
                fields[key] = value.strip()
        status = fields.get('Status', '').split()
        if 'Package' in fields and len(status) == 3 and status[2] == 'installed':
            installed.setdefault(fields['Package'], []).append(
                {'version': fields.get('Version', ''), 'arch': fields.get('Architecture', '')})
    return installed


def _entries(value):
    """The installed entries of one package, from either source: a list of dicts with 'version' and 'arch'."""
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, dict)]


def satisfied(spec, installed, native_arch=None):
    """True when apt's ``state: present`` would leave spec as it is (see the module's docstring)."""
    match = _SPEC.match(spec) if isinstance(spec, str) else None
    if not match or '*' in (match.group('version') or ''):
        return False
    arch, version = match.group('arch'), match.group('version')
    for entry in _entries(installed.get(match.group('name'))):
        entry_arch = str(entry.get('arch') or '')
        if arch:
            if entry_arch != arch:
                continue
        elif native_arch and entry_arch not in (native_arch, 'all', ''):
            continue
        if version is None or str(entry.get('version') or '') == version:
            return True
    return False


def missing(specs, installed, native_arch=None):
    """The specifications in specs (in their order, once each) that apt would still have to install."""
    out = []
    for spec in specs or []:
        if spec not in out and not satisfied(spec, installed or {}, native_arch):
            out.append(spec)
    return out
