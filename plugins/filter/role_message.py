# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter role_message (documented in role_message.yml): a thin wrapper of plugins/module_utils/_role_messages.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils._role_messages import render


def role_message(context, message):
    """The text of MESSAGE (a role's refusal or report) for CONTEXT, a mapping of its values."""
    try:
        return render(message, context)
    except ValueError as e:
        raise AnsibleFilterError('role_message: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'role_message': role_message}
