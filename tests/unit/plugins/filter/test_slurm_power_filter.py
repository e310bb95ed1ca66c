# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""slurm_ec2_launch_template_problems: the slurm role's preflight of the EC2 launch template, the power program's own
rule, with the role's variables named."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.filter.slurm_power import FilterModule

problems = FilterModule().filters()['slurm_ec2_launch_template_problems']


@pytest.mark.parametrize('name,template_id', [('gpu-node', ''), ('lt-gpu-nodes', ''), ('', 'lt-0123456789abcdef0'),
                                              (None, 'lt-0123abcd')])
def test_a_name_or_an_id_passes(name, template_id):
    assert problems(name, template_id) == []


@pytest.mark.parametrize('name,template_id,message', [
    ('', '', 'the EC2 backend needs a launch template: slurm_cloud_ec2_launch_template (its name) or '
             'slurm_cloud_ec2_launch_template_id (its id, lt-...)'),
    ('lt-0123456789abcdef0', '', "slurm_cloud_ec2_launch_template 'lt-0123456789abcdef0' has the form of a launch "
                                 "template id: give an id as slurm_cloud_ec2_launch_template_id"),
    ('gpu-node', 'lt-0123456789abcdef0', "slurm_cloud_ec2_launch_template ('gpu-node') and "
                                         "slurm_cloud_ec2_launch_template_id ('lt-0123456789abcdef0') are both set"),
    ('', 'gpu-node', "slurm_cloud_ec2_launch_template_id 'gpu-node' is not a launch template id"),
    ('gpu node', '', "slurm_cloud_ec2_launch_template 'gpu node' is not a launch template name"),
    (5, '', 'slurm_cloud_ec2_launch_template: expected a string, got 5'),
])
def test_each_problem_names_the_variable_and_the_fix(name, template_id, message):
    found = problems(name, template_id)
    assert len(found) == 1 and found[0].startswith(message), found
