# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filters nvidia_apt_driver_plan, nvidia_apt_lock_problems and nvidia_driver_version_problem (documented in their .yml
files): thin wrappers of plugins/module_utils/_apt_driver_lock.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils._apt_driver_lock import (
    driver_plan, lock_problems, version_problem)


def _list(name, value):
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise AnsibleFilterError('%s: expected a list, got %r' % (name, value))
    return list(value)


def _dict(name, value):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AnsibleFilterError('%s: expected a dict (package_facts packages), got %r' % (name, type(value).__name__))
    return value


def nvidia_apt_driver_plan(branch, packages=None, holdable=None, holds=None, installed=None, patterns=None,
                           available=None, version='', pinning=None):
    """What to install, hold, release and remove for a driver branch (see _apt_driver_lock.driver_plan)."""
    if available is not None and not isinstance(available, str):
        raise AnsibleFilterError('nvidia_apt_driver_plan: available is the text of apt-cache madison, got %r' % (available,))
    try:
        return driver_plan(branch, _list('nvidia_apt_driver_plan: packages', packages),
                           holdable=_list('nvidia_apt_driver_plan: holdable', holdable),
                           holds=_list('nvidia_apt_driver_plan: holds', holds),
                           installed=_dict('nvidia_apt_driver_plan: installed', installed),
                           patterns=_list('nvidia_apt_driver_plan: patterns', patterns), available=available,
                           version=version, pinning=pinning)
    except ValueError as e:
        raise AnsibleFilterError('nvidia_apt_driver_plan: %s' % e)


def nvidia_apt_lock_problems(installed, branch, holds=None, held=None, patterns=None, pinning=None):
    """Where the pinning package and the holds disagree (see _apt_driver_lock.lock_problems)."""
    try:
        return lock_problems(branch, installed=_dict('nvidia_apt_lock_problems: installed', installed),
                             holds=_list('nvidia_apt_lock_problems: holds', holds),
                             held=_list('nvidia_apt_lock_problems: held', held),
                             patterns=_list('nvidia_apt_lock_problems: patterns', patterns), pinning=pinning)
    except ValueError as e:
        raise AnsibleFilterError('nvidia_apt_lock_problems: %s' % e)


def nvidia_driver_version_problem(version, branch, requested_branch='auto', distribution='', source='distribution'):
    """Why nvidia_driver_version cannot be pinned, or '' (see _apt_driver_lock.version_problem)."""
    return version_problem('' if version is None else str(version), branch, requested_branch, distribution, source)


class FilterModule(object):
    def filters(self):
        return {'nvidia_apt_driver_plan': nvidia_apt_driver_plan, 'nvidia_apt_lock_problems': nvidia_apt_lock_problems,
                'nvidia_driver_version_problem': nvidia_driver_version_problem}
