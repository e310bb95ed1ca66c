#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: cuda_compat
short_description: Check that a CUDA version, driver branch, kernel module flavour and PyTorch release fit the GPUs
version_added: 0.1.0
description:
  - Answers whether a wanted CUDA toolkit, NVIDIA driver branch, kernel module flavour (open or proprietary) and
    PyTorch release work together on a host's GPUs, before anything is installed.
  - The GPU architectures come from O(architectures) or O(gpus) when given; otherwise the module reads the host
    itself (the PCI bus, which works before any driver is installed, and nvidia-smi when it runs).
  - Each problem names the role variable to change (C(nvidia_driver_branch), C(cuda_toolkit_version),
    C(nvidia_driver_kernel_module), C(torch_version)) and how to fix it, so a role preflight can fail with it.
  - "Knowledge used: the CUDA release notes' minimum driver per toolkit, CUDA minor version compatibility
    (11.x from 450.80.02, 12.x from 525.60.13, 13.x from 580), the last driver branch per architecture (Kepler 470;
    Maxwell, Pascal and Volta 580), the first (Hopper 520, Blackwell 570), the last CUDA per architecture (Kepler 11.8;
    Maxwell, Pascal and Volta 12.9), open kernel modules (Turing or newer, required on Blackwell) and the CUDA wheels
    PyTorch published per release."
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.gpu_server.gpu_host
  - gpuops.gpu_server.gpu_host.read_only
options:
  cuda_version:
    description:
      - The CUDA toolkit version to check, V(12.4) or with an update, V(12.2.2).
    type: str
  driver_branch:
    description:
      - The driver branch to check, for example V(535), V(570-server), V(580-open).
    type: str
  driver_version:
    description:
      - An exact driver version to check, for example V(535.104.05).
      - When neither this nor O(driver_branch) is given, the version of the loaded driver is used, if any.
    type: str
  kernel_module:
    description:
      - The kernel module flavour to check.
    type: str
    choices: [open, proprietary]
  torch_version:
    description:
      - A PyTorch release to check, optionally with its CUDA variant, V(2.4.1) or V(1.13.1+cu117).
    type: str
  architectures:
    description:
      - GPU architectures to check against, as nvidia-smi names them (V(Hopper), V(Ada Lovelace) ...).
      - When neither this nor O(gpus) is given, the host is read.
    type: list
    elements: str
  gpus:
    description:
      - GPUs to check against, each a dict with C(architecture), C(pci_device_id) (V(10de:2330)) or C(name)
        (as in C(ansible_facts.nvidia.gpus) or C(pci_devices)).
    type: list
    elements: dict
  allow_minor_compat:
    description:
      - Accept a driver that runs the CUDA version only through minor version compatibility (with its limits, see C(notes)).
    type: bool
    default: true
  fail_on_incompatible:
    description:
      - Fail the task when a problem is found, with a message naming the variables and the fixes.
    type: bool
    default: true
seealso:
  - module: gpuops.gpu_server.gpu_facts
'''

EXAMPLES = r'''
- name: Refuse a driver branch and CUDA version that do not fit this host's GPUs
  gpuops.gpu_server.cuda_compat:
    cuda_version: "{{ cuda_toolkit_version }}"
    driver_branch: "{{ nvidia_driver_branch }}"
    kernel_module: "{{ nvidia_driver_kernel_module }}"

- name: Ask without failing, for GPUs that are not this host's
  gpuops.gpu_server.cuda_compat:
    cuda_version: "13.0"
    driver_branch: "580"
    architectures: [Volta, Hopper]
    fail_on_incompatible: false
  register: __cuda_compat
'''

RETURN = r'''
compatible:
  description: Whether no problem was found.
  type: bool
  returned: always
  sample: false
mode:
  description: How the driver runs the CUDA version, V(full), V(minor) (minor version compatibility) or V(none);
    null when there was no driver or no CUDA version to judge.
  type: str
  returned: always
  sample: full
problems:
  description: What does not fit.
  type: list
  elements: dict
  returned: always
  contains:
    variable: {description: The role variable to change., type: str, sample: nvidia_driver_branch}
    message: {description: What does not fit., type: str, sample: "driver branch 470 does not support Hopper GPUs: ..."}
    fix: {description: How to fix it., type: str, sample: "set nvidia_driver_branch to '580'"}
notes:
  description: Things worth knowing that are not problems (for example the limits of minor version compatibility).
  type: list
  elements: str
  returned: always
suggested_driver_branch:
  description: A driver branch that fits the CUDA version, the architectures and the kernel module flavour,
    long-term support branches first; null when none does.
  type: str
  returned: always
  sample: "580"
architectures:
  description: The architectures checked.
  type: list
  elements: str
  returned: always
  sample: [Hopper]
unknown_gpus:
  description: GPUs whose architecture could not be determined (not checked).
  type: list
  elements: dict
  returned: always
driver_version:
  description: The exact driver version checked, if any.
  type: str
  returned: always
cuda_min_driver:
  description: The minimum driver for O(cuda_version), C(toolkit) (full) and C(minor) (minor version compatibility).
  type: dict
  returned: when O(cuda_version) is known
  sample: {toolkit: "520.61.05", minor: "450.80.02"}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _facts
from ansible_collections.gpuops.gpu_server.plugins.module_utils._module import gather_facts, host_argument_spec


def main():
    module = AnsibleModule(
        argument_spec=host_argument_spec(
            cuda_version=dict(type='str'),
            driver_branch=dict(type='str'),
            driver_version=dict(type='str'),
            kernel_module=dict(type='str', choices=['open', 'proprietary']),
            torch_version=dict(type='str'),
            architectures=dict(type='list', elements='str'),
            gpus=dict(type='list', elements='dict'),
            allow_minor_compat=dict(type='bool', default=True),
            fail_on_incompatible=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    driver = p['driver_version']
    unknown = []
    if p['architectures'] is not None:
        archs = list(p['architectures'])
    else:
        gpus = p['gpus']
        if gpus is None:
            facts = gather_facts(module)
            gpus = facts['gpus'] or [d for d in facts['pci_devices'] if d['kind'] == 'gpu']
            if driver is None and p['driver_branch'] is None:
                driver = facts['driver_version']
        archs = []
        for gpu in gpus:
            arch, _source = _facts.resolve_architecture(gpu)
            if arch is None:
                unknown.append(gpu)
            elif arch not in archs:
                archs.append(arch)
    try:
        result = _compat.check(cuda=p['cuda_version'], driver=driver, branch=p['driver_branch'],
                               architectures=archs, kernel_module=p['kernel_module'], torch=p['torch_version'],
                               allow_minor=p['allow_minor_compat'])
    except ValueError as e:
        module.fail_json(msg='cuda_compat: %s' % e)
    output = dict(changed=False, compatible=result['ok'], mode=result['mode'], problems=result['problems'],
                  notes=result['notes'], suggested_driver_branch=result['suggested_driver_branch'],
                  architectures=[_compat.canonical_architecture(a) or a for a in archs], unknown_gpus=unknown,
                  driver_version=driver)
    if p['cuda_version']:
        try:
            output['cuda_min_driver'] = dict(toolkit=_compat.cuda_min_driver(p['cuda_version'], 'toolkit'),
                                             minor=None)
            if _compat.parse_version(p['cuda_version'])[0] in _compat.CUDA_MINOR_COMPAT_MIN_DRIVER:
                output['cuda_min_driver']['minor'] = _compat.cuda_min_driver(p['cuda_version'], 'minor')
        except ValueError:
            pass
    if not result['ok'] and p['fail_on_incompatible']:
        module.fail_json(msg='Incompatible GPU software selection: %s' % '; '.join(
            '%s: %s (fix: %s)' % (pr['variable'], pr['message'], pr['fix']) for pr in result['problems']), **output)
    module.exit_json(**output)


if __name__ == '__main__':
    main()
