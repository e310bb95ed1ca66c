# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter.packages import packages_missing


def test_packages_missing_reads_package_facts():
    facts = {'g++-11': [{'version': '11.3.0-12', 'arch': 'amd64'}]}
    assert packages_missing(['g++-11', 'nvidia-cuda-toolkit'], facts) == ['nvidia-cuda-toolkit']


@pytest.mark.parametrize('specs, installed', [('g++-11', {}), (['g++-11'], None), (['g++-11'], [])])
def test_packages_missing_refuses_other_shapes(specs, installed):
    with pytest.raises(AnsibleFilterError, match='packages_missing'):
        packages_missing(specs, installed)
