# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter apt_branch_transitions (documented in apt_branch_transitions.yml)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible.errors import AnsibleFilterError

_BRANCH = re.compile(r'^[0-9]{3}$')
_VERSION = re.compile(r'^(?:[0-9]+:)?([0-9]+)\.')


def _stanzas(text):
    """Split `apt-cache show` output into dicts of fields (continuation lines joined)."""
    out, fields, last = [], {}, None
    for line in text.splitlines():
        if not line.strip():
            if fields:
                out.append(fields)
            fields, last = {}, None
        elif line[0] in ' \t' and last:
            fields[last] += ' ' + line.strip()
        elif ':' in line:
            last, value = line.split(':', 1)
            fields[last] = value.strip()
    if fields:
        out.append(fields)
    return out


def _depends(value):
    """Package names in a Depends field (alternatives included, versions and architectures dropped)."""
    names = []
    for group in value.split(','):
        for alt in group.split('|'):
            name = alt.strip().split(' ')[0].split(':')[0]
            if name:
                names.append(name)
    return names


def apt_branch_transitions(show_output, branch):
    """Which packages of a driver branch really install another branch.

    Returns one entry per package stanza whose own branch is not `branch`: its version belongs to another
    branch, or it depends on the same package name with another branch number (a transitional package).
    """
    if not isinstance(show_output, str):
        raise AnsibleFilterError('apt_branch_transitions: expected the text of `apt-cache show`, got %r' % (show_output,))
    branch = str(branch)
    if not _BRANCH.match(branch):
        raise AnsibleFilterError("apt_branch_transitions: expected a three-digit driver branch such as '580', got %r" % (branch,))
    found = []
    for st in _stanzas(show_output):
        name, version = st.get('Package'), st.get('Version', '')
        if not name or branch not in name:
            continue
        # The same name with another branch number: nvidia-utils-535-server -> nvidia-utils-580-server. Noble's
        # transitional packages keep their branch's version (535.309.01), resolute's carry the target's
        # (580.178.04-0ubuntu0.26.04.1): the dependency, which names the target, is looked at first.
        pattern = re.compile('^' + re.escape(name).replace(re.escape(branch), '([0-9]{3})') + '$')
        transition = None
        for dep in _depends(st.get('Depends', '') + ',' + st.get('Pre-Depends', '')):
            d = pattern.match(dep)
            if d and d.group(1) != branch:
                transition = {'package': name, 'version': version, 'installs_branch': d.group(1),
                              'reason': '%s %s is a transitional package that depends on %s' % (name, version, dep)}
                break
        m = _VERSION.match(version)
        if transition is None and m and m.group(1) != branch:
            transition = {'package': name, 'version': version, 'installs_branch': m.group(1),
                          'reason': '%s %s belongs to branch %s' % (name, version, m.group(1))}
        if transition:
            found.append(transition)
    return found


class FilterModule(object):
    def filters(self):
        return {'apt_branch_transitions': apt_branch_transitions}
