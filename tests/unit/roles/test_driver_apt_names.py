# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The package names nvidia_driver installs from NVIDIA's CUDA apt repository, as Ansible templates them from the
role's vars files: from branch 590 on without the branch (NVIDIA Driver Installation Guide r590, section 4.1.1
"Ubuntu 590 and later packages"), with the open kernel modules through NVIDIA's nvidia-open metapackage on Ubuntu
(sources in roles/nvidia_driver/vars/Ubuntu.yml); up to 580 with the branch in the names (the negative control)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.tests.unit.roles.conftest import PLATFORM_FACTS

# Each case sets the branch, the kernel module flavour and the user-space switch (set_fact outranks include_vars),
# then records what the role would install: the names, the package whose version is the driver's, the DKMS package,
# Fabric Manager and the apt specs of the plan.
NAMES = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.set_fact:
        nvidia_driver_source: cuda_repo
        __got: {}
    - ansible.builtin.include_tasks: "%(dir)s/case.yml"
      loop: "{{ cases }}"
      loop_control: {loop_var: case}
    - ansible.builtin.copy: {dest: "%(out)s", content: "{{ __got | to_json }}"}
'''
CASE = '''
- ansible.builtin.set_fact:
    nvidia_driver_branch: "{{ case.branch }}"
    nvidia_driver_kernel_module: "{{ case.module }}"
    _nvidia_driver_userspace_only: "{{ case.userspace }}"
- ansible.builtin.set_fact:
    __got: >-
      {{ __got | combine({case.branch ~ '/' ~ ('userspace' if case.userspace else case.module): {
           'packages': _nvidia_driver_packages, 'version_package': _nvidia_driver_version_package,
           'dkms': _nvidia_driver_dkms_package, 'fabricmanager': _nvidia_driver_fabricmanager,
           'install': (_nvidia_driver_branch | gpuops.gpu_server.nvidia_apt_driver_plan(_nvidia_driver_packages)).install}}) }}
'''
CASES = [dict(branch=b, module=m, userspace=u) for b in ('580', '590')
         for m, u in (('proprietary', False), ('open', False), ('open', True))]


def render(ansible_play, platform):
    (ansible_play.dir / 'case.yml').write_text(CASE)
    extra = dict(ansible_facts=dict(PLATFORM_FACTS[platform], architecture='x86_64'), cases=CASES)
    proc, got = ansible_play(NAMES, extra, role_vars=['nvidia_driver'], os_vars=True)
    assert proc.returncode == 0 and got is not None, proc.stdout
    return got


def test_ubuntu_590_names_carry_no_branch_and_open_modules_come_from_nvidia_open(ansible_play):
    got = render(ansible_play, 'ubuntu2404')
    # The guide's Ubuntu steps: "apt install cuda-drivers" (proprietary), "apt install nvidia-open" (open).
    assert got['590/proprietary']['packages'] == ['cuda-drivers']
    assert got['590/open']['packages'] == ['nvidia-open']
    assert got['590/open']['version_package'] == 'nvidia-open'
    assert got['590/open']['install'] == ['nvidia-open=590.*']
    assert got['590/userspace']['packages'] == ['nvidia-utils', 'libnvidia-compute']
    # Table 4: nvidia-dkms-580 -> nvidia-dkms, nvidia-dkms-580-open -> nvidia-dkms-open.
    assert got['590/proprietary']['dkms'] == 'nvidia-dkms' and got['590/open']['dkms'] == 'nvidia-dkms-open'
    assert got['590/open']['fabricmanager'] == ['nvidia-fabricmanager']
    for key, case in got.items():
        if key.startswith('590/'):
            assert not [n for n in case['packages'] + [case['dkms']] + case['fabricmanager'] if re.search(r'-[0-9]{3}\b', n)], key
    # Negative control: up to 580 the same switches give the names with the branch, installed without a version.
    assert got['580/open']['packages'] == ['cuda-drivers-580', 'nvidia-kernel-open-580']
    assert got['580/open']['install'] == ['cuda-drivers-580', 'nvidia-kernel-open-580']
    assert got['580/userspace']['packages'] == ['nvidia-utils-580', 'libnvidia-compute-580']
    assert got['580/open']['dkms'] == 'nvidia-dkms-580-open'


def test_debian_590_names_are_the_branchless_ones_of_nvidias_debian_repository(ansible_play):
    got = render(ansible_play, 'debian12')
    assert got['590/proprietary']['packages'] == ['cuda-drivers']
    assert got['590/proprietary']['install'] == ['cuda-drivers=590.*']
    assert got['590/open']['packages'] == ['cuda-drivers', 'nvidia-kernel-open-dkms']
    assert got['590/userspace']['packages'] == ['nvidia-smi', 'libnvidia-ml1', 'libcuda1']
    assert got['590/open']['fabricmanager'] == ['nvidia-fabricmanager']
    # Negative control: 580 keeps cuda-drivers-580 and nvidia-fabricmanager-580.
    assert got['580/proprietary']['packages'] == ['cuda-drivers-580']
    assert got['580/proprietary']['fabricmanager'] == ['nvidia-fabricmanager-580']
