# -*- coding: utf-8 -*-
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter.repository import cuda_repo_url

BASE = 'https://developer.download.nvidia.com/compute/cuda/repos/'


@pytest.mark.parametrize('facts, path', [
    (dict(os_family='Debian', distribution='Debian', distribution_major_version='12', distribution_version='12.8',
          architecture='x86_64'), 'debian12/x86_64/'),
    (dict(os_family='Debian', distribution='Debian', distribution_major_version='13', distribution_version='13.1',
          architecture='aarch64'), 'debian13/sbsa/'),
    (dict(os_family='Debian', distribution='Ubuntu', distribution_major_version='22', distribution_version='22.04',
          architecture='x86_64'), 'ubuntu2204/x86_64/'),
    (dict(os_family='RedHat', distribution='Rocky', distribution_major_version='9', distribution_version='9.4',
          architecture='x86_64'), 'rhel9/x86_64/'),
])
def test_cuda_repo_url(facts, path):
    assert cuda_repo_url(facts) == BASE + path


def test_cuda_repo_url_needs_facts():
    with pytest.raises(AnsibleFilterError, match='gather facts'):
        cuda_repo_url({'os_family': 'Debian'})
    with pytest.raises(AnsibleFilterError, match='expected ansible_facts'):
        cuda_repo_url('debian12')
