# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""jupyter's PyTorch kernel: the wheel variant is one PyTorch published (torch_cuda_variants), chosen for the host's
CUDA, and an unpublished one is refused before anything is installed, naming what exists."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

ROLE = os.path.join(ROOT, 'roles', 'jupyter')

RENDER = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ {'variant': _jupyter_torch_variant, 'published': _jupyter_torch_published} | to_json }}"
'''

# The role's own first task of torch.yml (the refusal) runs before any pip task; nothing is installed here.
REFUSE = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.include_tasks: "%(role)s/tasks/torch.yml"
'''


@pytest.mark.parametrize('torch, cuda, variant', [
    ('2.7.1', '11.8', 'cu118'),   # Debian 12's toolkit
    ('2.7.1', '12.4', 'cu118'),   # Debian 13's: 2.7.1 has no cu124, and cu126 needs a newer driver
    ('2.7.1', '12.8', 'cu128'),
    ('2.7.1', '13.0', 'cu128'),
    ('2.9.0', '13.0', 'cu130'),
])
def test_newest_published_variant_not_above_the_host_cuda(ansible_play, torch, cuda, variant):
    proc, got = ansible_play(RENDER, {'jupyter_torch_version': torch, 'jupyter_torch_cuda_version': cuda}, role_vars=['jupyter'])
    assert proc.returncode == 0, proc.stdout
    assert got['variant'] == variant
    assert variant in got['published']


@pytest.mark.parametrize('extra, says', [
    ({'jupyter_torch_version': '2.7.1', 'jupyter_torch_cuda_version': '11.5'},
     'none of them runs on CUDA 11.5 (jupyter_torch_cuda_version)'),
    ({'jupyter_torch_version': '2.7.1', 'jupyter_torch_variant': 'cu124'},
     'jupyter_torch_variant=cu124 is not among them'),
])
def test_unpublished_variant_refused_naming_the_published_ones(ansible_play, extra, says):
    proc, _got = ansible_play(REFUSE, dict(extra, jupyter_venv='/nonexistent'), role=ROLE, role_vars=['jupyter'])
    assert proc.returncode != 0
    assert 'PyTorch 2.7.1 is published for cu118, cu126, cu128' in proc.stdout, proc.stdout
    assert says in proc.stdout, proc.stdout
    assert 'pip' not in proc.stdout.split('Refuse a PyTorch wheel variant')[-1].split('PLAY RECAP')[0].lower()
