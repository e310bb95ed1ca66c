# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""examples/check_dockerfile.yml, run with ansible-playbook against localhost: the shipped Dockerfile passes,
the user's guide's original and other broken pins are refused with a message that says why."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT, needs_ansible_playbook, run_playbook
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path

PLAYBOOK = os.path.join(ROOT, 'examples', 'check_dockerfile.yml')

pytestmark = needs_ansible_playbook


def check(dockerfile):
    proc = run_playbook(PLAYBOOK, '-e', 'dockerfile=%s' % dockerfile)
    return proc.returncode, proc.stdout


def write(tmp_path, base, torch, torchvision, index):
    path = tmp_path / 'Dockerfile'
    path.write_text('FROM nvidia/cuda:%s-base-ubuntu20.04\n'
                    'RUN pip install torch==%s torchvision==%s --index-url %s\n' % (base, torch, torchvision, index))
    return str(path)


def test_shipped_dockerfile_passes():
    rc, out = check(os.path.join(ROOT, 'examples', 'Dockerfile'))
    assert rc == 0, out
    assert 'torch 2.0.1+cu118 and torchvision 0.15.2+cu118 on nvidia/cuda 11.8' in out


def test_users_guide_original_is_refused():
    rc, out = check(fixture_path('examples', 'Dockerfile.users-guide'))
    assert rc != 0
    assert 'torch==1.13.1+cu118 was never published' in out
    assert 'cu116, cu117 only' in out


def test_the_other_fix_passes(tmp_path):
    # Keep torch 1.13.1 with its cu117 build on a CUDA 11.7 base image.
    rc, out = check(write(tmp_path, '11.7.1', '1.13.1+cu117', '0.14.1+cu117', 'https://download.pytorch.org/whl/cu117'))
    assert rc == 0, out


@pytest.mark.parametrize('base, torch, torchvision, index, message', [
    ('11.8.0', '2.0.1+cu117', '0.15.2+cu117', 'https://download.pytorch.org/whl/cu117', 'base image CUDA 11.8 (cu118)'),
    ('11.8.0', '2.0.1+cu118', '0.14.1+cu118', 'https://download.pytorch.org/whl/cu118', 'goes with torchvision 0.15.2'),
    ('11.8.0', '2.0.1+cu118', '0.15.2+cu118', 'https://download.pytorch.org/whl/cu117', 'wheel index'),
])
def test_mismatches_are_refused(tmp_path, base, torch, torchvision, index, message):
    rc, out = check(write(tmp_path, base, torch, torchvision, index))
    assert rc != 0
    assert message in out, out
