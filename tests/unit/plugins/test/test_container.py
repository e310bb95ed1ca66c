# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.gpu_server.plugins.test.container import container


@pytest.mark.parametrize("facts,expected", [
    ({"virtualization_role": "guest", "virtualization_type": "docker"}, True),
    ({"virtualization_role": "guest", "virtualization_type": "systemd-nspawn"}, True),
    ({"virtualization_role": "guest", "virtualization_type": "kvm"}, False),
    ({"virtualization_role": "host", "virtualization_type": "docker"}, False),
    ({}, False),
])
def test_container(facts, expected):
    assert container(facts) is expected


def test_not_facts():
    with pytest.raises(AnsibleFilterError):
        container("docker")
