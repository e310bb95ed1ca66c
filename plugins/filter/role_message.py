# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter role_message (documented in role_message.yml): a thin wrapper of plugins/module_utils/_role_messages.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError, AnsibleUndefinedVariable

from ansible_collections.gpuops.gpu_server.plugins.module_utils._role_messages import render


# The variable whose value, on each host, upgrade_driver_report reads from hostvars.
_OUTCOME = 'upgrade_driver_outcome'


def _outcomes(context, hostvars):
    """{host: its upgrade_driver_outcome, or None} for the hosts of CONTEXT, read from HOSTVARS as `default` would."""
    if not isinstance(hostvars, Mapping):
        raise AnsibleFilterError('role_message: hostvars must be the play\'s hostvars (a mapping), got %s'
                                 % type(hostvars).__name__)
    hosts = context.get('hosts') if isinstance(context, Mapping) else None
    if isinstance(hosts, (str, bytes)) or not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError('role_message: upgrade_driver_report: hosts must be a list of host names, got %r' % (hosts,))
    outcomes = {}
    for host in hosts:
        outcomes[host] = None
        variables = hostvars[host] if isinstance(host, str) and host in hostvars else {}
        try:
            if _OUTCOME in variables:
                outcomes[host] = variables[_OUTCOME]
        except AnsibleUndefinedVariable:
            pass
    return outcomes


def role_message(context, message, hostvars=None):
    """The text of MESSAGE (a role's refusal or report) for CONTEXT, a mapping of its values; HOSTVARS: the play's
    hostvars, whence upgrade_driver_report reads each host's upgrade_driver_outcome."""
    if hostvars is not None:
        if message != 'upgrade_driver_report':
            raise AnsibleFilterError('role_message: hostvars is read by upgrade_driver_report only, not by %r' % (message,))
        context = dict(context, outcomes=_outcomes(context, hostvars))
    try:
        return render(message, context)
    except ValueError as e:
        raise AnsibleFilterError('role_message: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'role_message': role_message}
