# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter pip_requirements (documented in pip_requirements.yml)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pip_requirements


def pip_requirements(pins, extra=None, pins_var='pins', extra_var='extra'):
    """The lines of a requirements file from pinned releases and extra lines (_pip_requirements.render)."""
    try:
        return _pip_requirements.render(pins, extra, pins_var=pins_var, extra_var=extra_var)
    except _pip_requirements.RequirementsError as e:
        raise AnsibleFilterError('pip_requirements: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'pip_requirements': pip_requirements}
