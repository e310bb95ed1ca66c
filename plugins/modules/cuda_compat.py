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
version_added: 1.0.0
description:
  - Answers whether a wanted CUDA toolkit, NVIDIA driver branch, kernel module flavour (open or proprietary) and
    PyTorch release work together on a host's GPUs, before anything is installed.
  - The GPU architectures come from O(architectures) or O(gpus) when given; otherwise the module reads the host
    itself (the PCI bus, which works before any driver is installed, and nvidia-smi when it runs).
  - Each problem names what to change and how, so a role preflight can fail with it. What to change is named
    by its subject (V(cuda_version), V(driver_branch), V(driver_version), V(kernel_module), V(torch_version),
    V(architectures), V(gpus)), worded with the caller's own variable names from O(variables).
  - "Knowledge used: the CUDA release notes' minimum driver per toolkit, CUDA minor version compatibility
    (11.x from 450.80.02, 12.x from 525.60.13, 13.x from 580), the last driver branch per architecture (Kepler 470;
    Maxwell, Pascal and Volta 580), the first (Hopper 520, Blackwell 570), the last CUDA per architecture (Kepler 11.8;
    Maxwell, Pascal and Volta 12.9), open kernel modules (Turing or newer, required on Blackwell), proprietary kernel
    modules (none from branch 620), the driver branches NVIDIA published (up to 620) and the CUDA wheels PyTorch
    published per release."
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.gpu_server.gpu_host
  - gpuops.gpu_server.gpu_host.platform
  - gpuops.gpu_server.read_only
options:
  cuda_version:
    description:
      - The CUDA toolkit version to check, V(12.4) or with an update, V(12.2.2); exactly C(X.Y) or C(X.Y.U), U the
        update from 0 to 9. Anything else fails the task, naming the expected form (V(11.8abc), V(12.4.0.0.1), an
        nvcc build number such as V(12.2.91)).
      - A string. An unquoted YAML number lost its trailing zeros (V(12.10) arrives as 12.1), so a number with a
        fraction fails the task with a message to quote it; a whole number (V(13.0)) is accepted.
      - Versions are read from ASCII digits only in every option; other digits (Arabic-Indic, fullwidth) fail the task.
    type: raw
  driver_branch:
    description:
      - The driver branch to check, for example V(535), V(570-server), V(580-open), V(nvidia-driver-570-open).
        Anything else (V(535.x), V(latest)) fails the task. A string, or an integer; see O(cuda_version) for numbers.
    type: raw
  driver_version:
    description:
      - An exact driver version to check, for example V(535.104.05) or V(390.116), C(NNN.NN) or C(NNN.NN.NN) (the
        branch, then one or two numbers of one to three digits). Anything else fails the task, a bare branch such as
        V(550) included (give that as O(driver_branch)). A string; see O(cuda_version) for numbers.
      - With O(driver_branch) as well, both must be of the same branch (V(550.54.15) and V(550-server)); a version of
        another branch (V(550.54.15) with V(470)) fails the task, naming both.
      - When neither this nor O(driver_branch) is given, the version of the loaded driver is used, if any.
    type: raw
  kernel_module:
    description:
      - The kernel module flavour to check.
    type: str
    choices: [open, proprietary]
  torch_version:
    description:
      - A PyTorch release to check, optionally with its CUDA variant, V(2.4.1) or V(1.13.1+cu117); C(X.Y) or C(X.Y.Z)
        with an optional C(+tag); anything else fails the task. A string; see O(cuda_version) for numbers
        (V(2.10) unquoted is 2.1).
    type: raw
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
      - "A GPU whose architecture cannot be determined (V({architecture: Rubin}), V({})) makes the answer unknown:
        RV(verdict=unknown), RV(compatible=false), and the task fails unless O(fail_on_incompatible=false) or
        O(allow_unknown_gpus=true). The same holds for the GPUs read from the host."
    type: list
    elements: dict
  allow_unknown_gpus:
    description:
      - Check only the GPUs whose architecture is known and list the others in RV(unknown_gpus) and RV(notes),
        instead of answering V(unknown).
    type: bool
    default: false
  allow_minor_compat:
    description:
      - Accept a driver that runs the CUDA version only through minor version compatibility (with its limits, see C(notes)).
    type: bool
    default: true
  allow_unknown_branch:
    description:
      - A driver branch (or driver version) newer than the newest branch this collection knows (620) is a problem by
        default, naming that newest branch, since what GPUs, kernel module flavours and CUDA versions it supports cannot be
        checked. With V(true) it is a note instead, and the other checks treat the branch by its number alone.
    type: bool
    default: false
    version_added: 1.0.0
  variables:
    description:
      - "The caller's name for each subject a problem can be about, used to word RV(problems) and the failure
        message, for example V({cuda_version: cuda_toolkit_version, driver_branch: cuda_toolkit_driver_branch})."
      - "Subjects: V(cuda_version), V(driver_branch), V(driver_version), V(kernel_module), V(torch_version),
        V(architectures), V(gpus), and the switch V(allow_unknown_branch) that a fix can name. A subject left out is
        named as this module's option of that name."
    type: dict
    default: {}
    version_added: 1.0.0
  fail_on_incompatible:
    description:
      - Fail the task when a problem is found or a GPU cannot be identified (RV(verdict) is not V(compatible)),
        with a message naming the variables and the fixes.
    type: bool
    default: true
seealso:
  - module: gpuops.gpu_server.gpu_facts
'''

EXAMPLES = r'''
- name: Refuse a driver branch and CUDA version that do not fit this host's GPUs, naming the role's variables
  gpuops.gpu_server.cuda_compat:
    cuda_version: "{{ cuda_toolkit_version }}"
    driver_branch: "{{ nvidia_driver_branch }}"
    kernel_module: "{{ nvidia_driver_kernel_module }}"
    variables:
      cuda_version: cuda_toolkit_version
      driver_branch: nvidia_driver_branch
      kernel_module: nvidia_driver_kernel_module

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
  description: Whether no problem was found and every GPU was identified (RV(verdict=compatible)).
  type: bool
  returned: always
  sample: false
verdict:
  description: V(compatible), V(incompatible) (a problem was found) or V(unknown) (no problem among the GPUs that
    could be identified, but some could not and O(allow_unknown_gpus) is false).
  type: str
  returned: always
  sample: unknown
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
    subject:
      description: What the problem is about, V(cuda_version), V(driver_branch), V(driver_version), V(kernel_module),
        V(torch_version), V(architectures) or V(gpus).
      type: str
      sample: driver_branch
      version_added: 1.0.0
    variable:
      description: The caller's name for the subject (see O(variables)).
      type: str
      sample: nvidia_driver_branch
    message: {description: What does not fit., type: str, sample: "driver branch 470 does not support Hopper GPUs: ..."}
    fix:
      description: How to fix it, in the caller's names.
      type: str
      sample: "set nvidia_driver_branch to '580'"
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
  description: GPUs whose architecture could not be determined (not checked; they make RV(verdict) V(unknown) unless
    O(allow_unknown_gpus=true)).
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
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_versions
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _facts
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pci
from ansible_collections.gpuops.gpu_server.plugins.module_utils._module import gather_facts, host_argument_spec


# What a problem can be about: the check's subjects, plus the GPUs this module could not identify.
SUBJECTS = _compat.SUBJECTS + ('gpus',)
# What a fix can name: the subjects, and the switches the caller may want worded with its own names.
NAMES = SUBJECTS + _compat.SWITCHES

VERSION_OPTIONS = (
    ('cuda_version', _compat_versions.CUDA_FORM),
    ('driver_branch', _compat_versions.BRANCH_FORM),
    ('driver_version', _compat_versions.DRIVER_FORM),
    ('torch_version', _compat_versions.TORCH_FORM),
)


def _describe_gpu(gpu):
    if not isinstance(gpu, dict) or not gpu:
        return 'a GPU with nothing to identify it by (%r)' % (gpu,)
    parts = ['%s=%s' % (k, gpu[k]) for k in ('name', 'product', 'pci_device_id', 'architecture', 'pci_bus_id')
             if gpu.get(k)]
    return ', '.join(parts) or repr(gpu)


def main():
    module = AnsibleModule(
        argument_spec=host_argument_spec(
            cuda_version=dict(type='raw'),
            driver_branch=dict(type='raw'),
            driver_version=dict(type='raw'),
            kernel_module=dict(type='str', choices=['open', 'proprietary']),
            torch_version=dict(type='raw'),
            architectures=dict(type='list', elements='str'),
            gpus=dict(type='list', elements='dict'),
            allow_minor_compat=dict(type='bool', default=True),
            allow_unknown_gpus=dict(type='bool', default=False),
            allow_unknown_branch=dict(type='bool', default=False),
            fail_on_incompatible=dict(type='bool', default=True),
            variables=dict(type='dict', default={}),
        ),
        supports_check_mode=True,
    )
    p = dict(module.params)
    wrong = ['%s=%r' % (k, v) for k, v in p['variables'].items()
             if k not in NAMES or not isinstance(v, str) or not v.strip()]
    if wrong:
        module.fail_json(msg='cuda_compat: variables maps each subject (%s) to a variable name; got %s'
                             % (', '.join(NAMES), ', '.join(sorted(wrong))))
    # Versions are strings: an unquoted YAML number lost its trailing zeros (12.10 -> 12.1) and is refused.
    for name, form in VERSION_OPTIONS:
        if p[name] is not None:
            try:
                p[name] = _compat_versions.version_text(p[name], name, form)
            except ValueError as e:
                module.fail_json(msg='cuda_compat: %s' % e)
    driver = p['driver_version']
    unknown = []
    if p['architectures'] is not None:
        archs = list(p['architectures'])
    else:
        gpus = p['gpus']
        if gpus is None:
            facts = gather_facts(module)
            gpus = facts['gpus'] or _pci.gpus(facts['pci_devices'])
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
                               allow_minor=p['allow_minor_compat'], allow_unknown_branch=p['allow_unknown_branch'])
    except ValueError as e:
        loaded = driver is not None and p['driver_version'] is None
        module.fail_json(msg='cuda_compat: %s%s' % (e, ' (the driver version is the one nvidia-smi reports for the '
                                                       'loaded driver)' if loaded else ''))
    problems, notes = list(result['problems']), list(result['notes'])
    verdict = 'incompatible' if problems else 'compatible'
    if unknown:
        described = '; '.join(_describe_gpu(g) for g in unknown)
        if p['allow_unknown_gpus']:
            notes.append('%d GPU(s) could not be identified and were not checked (allow_unknown_gpus): %s'
                         % (len(unknown), described))
        else:
            problems.append({'subject': 'gpus', 'message': '%d GPU(s) could not be identified, so whether they run '
                             'this selection is unknown: %s' % (len(unknown), described),
                             'fix': 'give each GPU its architecture ({architectures}, or gpus[].architecture as '
                                    'nvidia-smi names it), or set allow_unknown_gpus to check only the known ones'})
            if verdict == 'compatible':
                verdict = 'unknown'
    names = p['variables']
    problems = [dict(pr, variable=names.get(pr['subject']) or pr['subject'], fix=_compat.word(pr['fix'], names))
                for pr in problems]
    output = dict(changed=False, compatible=verdict == 'compatible', verdict=verdict, mode=result['mode'],
                  problems=problems, notes=notes, suggested_driver_branch=result['suggested_driver_branch'],
                  architectures=[_compat_gpu.canonical_architecture(a) or a for a in archs], unknown_gpus=unknown,
                  driver_version=driver)
    if p['cuda_version']:
        try:
            output['cuda_min_driver'] = dict(toolkit=_compat_cuda.cuda_min_driver(p['cuda_version'], 'toolkit'),
                                             minor=None)
            if _compat_versions.parse_cuda(p['cuda_version'])[0] in _data_cuda.CUDA_MINOR_COMPAT_MIN_DRIVER:
                output['cuda_min_driver']['minor'] = _compat_cuda.cuda_min_driver(p['cuda_version'], 'minor')
        except ValueError:
            pass
    if verdict != 'compatible' and p['fail_on_incompatible']:
        module.fail_json(msg='%s GPU software selection: %s' % (
            'Incompatible' if verdict == 'incompatible' else 'Unverifiable', '; '.join(
                '%s: %s (fix: %s)' % (pr['variable'], pr['message'], pr['fix']) for pr in problems)), **output)
    module.exit_json(**output)


if __name__ == '__main__':
    main()
