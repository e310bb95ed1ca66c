# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter packages_missing (documented in packages_missing.yml): a thin wrapper of plugins/module_utils/_packages.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils._packages import missing


def packages_missing(specs, installed):
    """The apt specifications in specs that apt's state=present would still install, given package_facts' packages."""
    if isinstance(specs, str) or not isinstance(specs, (list, tuple)):
        raise AnsibleFilterError('packages_missing: expected a list of package specifications, got %r' % (specs,))
    if not isinstance(installed, dict):
        raise AnsibleFilterError("packages_missing: expected ansible_facts['packages'] (a dict from package_facts), got %r"
                                 % (type(installed).__name__,))
    return missing(list(specs), installed)


class FilterModule(object):
    def filters(self):
        return {'packages_missing': packages_missing}
