# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Jinja2 filters naming vendor package repositories (documented in the adjacent <filter>.yml files)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

CUDA_REPOS = 'https://developer.download.nvidia.com/compute/cuda/repos/'
# NVIDIA names Arm server repositories sbsa; every other machine name is used as it is.
_CUDA_ARCH = {'aarch64': 'sbsa'}


def cuda_repo_url(facts):
    """URL of NVIDIA's CUDA repository for a host, from its facts: .../repos/debian12/x86_64/, ubuntu2204/sbsa/."""
    if not isinstance(facts, dict):
        raise AnsibleFilterError('cuda_repo_url: expected ansible_facts (a dict), got %r' % (facts,))
    try:
        family, distribution = facts['os_family'], facts['distribution']
        major, version, arch = facts['distribution_major_version'], facts['distribution_version'], facts['architecture']
    except KeyError as e:
        raise AnsibleFilterError('cuda_repo_url: ansible_facts lacks %s; gather facts first' % e)
    if family == 'RedHat':
        platform = 'rhel%s' % major
    elif distribution == 'Ubuntu':
        platform = 'ubuntu%s' % str(version).replace('.', '')
    else:
        platform = '%s%s' % (str(distribution).lower(), major)
    return '%s%s/%s/' % (CUDA_REPOS, platform, _CUDA_ARCH.get(arch, arch))


class FilterModule(object):
    def filters(self):
        return {'cuda_repo_url': cuda_repo_url}
