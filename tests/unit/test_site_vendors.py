# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml picks each vendor's roles from the first play's choice (gpu_vendor), which comes before any change."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml
from jinja2 import Environment

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

NVIDIA_ROLES = ['nvidia_driver', 'cuda_toolkit', 'nvidia_container_toolkit']
AMD_ROLES = ['amd_driver', 'rocm']


def _load(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return yaml.safe_load(f)


def _gpu_play_roles(site):
    plays = [p for p in site if any('nvidia_driver' in str(r.get('role', '')) for r in p.get('roles', []))]
    assert len(plays) == 1
    return plays[0]['roles']


def _runs(role_entry, vendor, skip=()):
    """Whether a role entry of the GPU play runs for a host whose first play chose ``vendor``."""
    conditions = role_entry.get('when', [])
    conditions = conditions if isinstance(conditions, list) else [conditions]
    env = Environment()
    context = {'gpuops_gpu_vendor_choice': {'vendor': vendor}, 'gpuops_skip_roles': list(skip)}
    for condition in conditions:
        # Ansible's `default` filter is Jinja's own; `bool` is not needed by these conditions.
        if env.from_string('{{ (%s) }}' % condition).render(**context) != 'True':
            return False
    return True


@pytest.mark.parametrize('vendor,expected', [
    ('nvidia', ['storage', 'nvidia_driver', 'cuda_toolkit', 'docker', 'nvidia_container_toolkit']),
    ('amd', ['storage', 'amd_driver', 'rocm', 'docker']),
    ('none', ['storage', 'docker']),
])
def test_each_vendor_gets_its_roles(vendor, expected):
    roles = _gpu_play_roles(_load('playbooks', 'site.yml'))
    ran = [r['role'].rsplit('.', 1)[-1] for r in roles if _runs(r, vendor)]
    assert ran == expected


def test_skip_roles_still_leaves_a_vendor_role_out():
    roles = _gpu_play_roles(_load('playbooks', 'site.yml'))
    ran = [r['role'].rsplit('.', 1)[-1] for r in roles if _runs(r, 'amd', skip=['rocm'])]
    assert ran == ['storage', 'amd_driver', 'docker']


def test_negative_control_an_unguarded_vendor_role_is_caught():
    roles = _gpu_play_roles(_load('playbooks', 'site.yml'))
    unguarded = [dict(r, when="'%s' not in gpuops_skip_roles | default([])" % r['role'].rsplit('.', 1)[-1])
                 for r in roles]
    ran = [r['role'].rsplit('.', 1)[-1] for r in unguarded if _runs(r, 'amd')]
    assert 'nvidia_driver' in ran and ran != ['storage', 'amd_driver', 'rocm', 'docker']


def test_the_choice_is_the_first_play_and_changes_nothing():
    site = _load('playbooks', 'site.yml')
    first = site[0]
    assert first['gather_facts'] is False and 'roles' not in first and not first.get('become')
    task = first['tasks'][0]
    assert task['register'] == 'gpuops_gpu_vendor_choice'
    assert task['gpuops.gpu_server.gpu_vendor'] == {
        'vendor': "{{ gpuops_gpu_vendor | default('auto') }}",
        'sysfs_root': "{{ gpuops_gpu_sysfs_root | default('/sys') }}"}
    # The same task is what tests/preflight/amd_driver_refuses.yml runs through ansible-playbook.
    preflight = _load('tests', 'preflight', 'amd_driver_refuses.yml')[0]['tasks'][0]
    assert preflight == task


def test_every_vendor_role_reads_the_choice():
    roles = _gpu_play_roles(_load('playbooks', 'site.yml'))
    names = [r['role'].rsplit('.', 1)[-1] for r in roles]
    for name in NVIDIA_ROLES + AMD_ROLES:
        assert name in names, name
