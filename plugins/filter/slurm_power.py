# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter slurm_ec2_launch_template_problems (documented in its .yml file): a thin wrapper of
plugins/module_utils/_slurm_power.py, the rules the power program itself applies."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _slurm_power


def slurm_ec2_launch_template_problems(name, template_id=''):
    """What is wrong with the slurm role's launch template, given by NAME (slurm_cloud_ec2_launch_template) or by
    TEMPLATE_ID (slurm_cloud_ec2_launch_template_id): [] or one sentence naming the variable and the fix."""
    try:
        _slurm_power.launch_template_spec(name, template_id,
                                          ('slurm_cloud_ec2_launch_template', 'slurm_cloud_ec2_launch_template_id'))
    except _slurm_power.PowerError as e:
        return [str(e)]
    return []


class FilterModule(object):
    def filters(self):
        return {'slurm_ec2_launch_template_problems': slurm_ec2_launch_template_problems}
