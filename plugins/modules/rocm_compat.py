#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: rocm_compat
short_description: Check that a ROCm source carries code objects for the AMD GPUs' gfx targets
version_added: 1.1.0
description:
  - Answers, before anything is installed, whether the ROCm libraries of a source (the distribution's archive of the
    host's platform, or AMD's repository) carry a code object for every AMD GPU's gfx target. A GPU whose target is
    missing cannot run them (HIP reports C(hipErrorNoBinaryForGpu)).
  - When the answer is no, the problem names the sources that carry the targets, for example Ubuntu 26.04's
    distribution ROCm or AMD's repository for an MI300X (gfx942), which Debian 13's distribution ROCm lacks.
  - The GPUs come from O(gfx_targets) or O(gpus) when given; otherwise the module reads the PCI bus under
    O(sysfs_root) (vendor 1002, a display controller or processing accelerator), which works before any driver is loaded,
    and looks each PCI device id up in the collection's table of AMD Instinct GPUs.
  - "Knowledge used: the gfx targets of the rocBLAS packages of Debian 13, Ubuntu 24.04 and Ubuntu 26.04 (read from
    the packages' files), that Debian 12 and Ubuntu 22.04 carry no ROCm library, and the targets AMD supports with
    ROCm 7."
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.gpu_server.read_only
options:
  source:
    description:
      - Where ROCm comes from, V(distribution) (the archive of O(distribution) O(distribution_release)) or V(amd)
        (AMD's repository or a mirror of it).
    type: str
    required: true
    choices: [distribution, amd]
  distribution:
    description:
      - The distribution, as C(ansible_facts.distribution) names it (V(Debian), V(Ubuntu)). Required with
        O(source=distribution).
    type: str
  distribution_release:
    description:
      - Its release as the archive is named, Debian's major version (V(13)) or Ubuntu's C(YY.MM) (V(24.04)). A string.
        Required with O(source=distribution).
    type: str
  gfx_targets:
    description:
      - The GPUs' gfx targets as rocminfo prints them (V(gfx90a), V(gfx942:sramecc+:xnack-)). Anything else fails the
        task, naming the entry.
    type: list
    elements: raw
  gpus:
    description:
      - The GPUs, each a dict with C(gfx_target) or C(pci_device_id) (V(1002:74a1)), as C(ansible_facts.amd.gpus)
        gives them. A GPU whose target cannot be found makes the answer V(unknown) unless O(allow_unknown_gpus=true).
    type: list
    elements: raw
  sysfs_root:
    description: Where sysfs is mounted; the PCI bus is read under it when neither O(gfx_targets) nor O(gpus) is given.
    type: path
    default: /sys
  allow_unknown_gpus:
    description: Check only the GPUs whose target is known and list the others in RV(unknown_gpus) and RV(notes).
    type: bool
    default: false
  variables:
    description:
      - "The caller's name for each subject a problem can be about, used to word RV(problems) and the failure
        message, for example V({source: rocm_source}). Subjects: V(source), V(gpus)."
    type: dict
    default: {}
  fail_on_incompatible:
    description: Fail the task when RV(verdict) is not V(compatible), with a message naming the fix.
    type: bool
    default: true
seealso:
  - module: gpuops.gpu_server.cuda_compat
'''

EXAMPLES = r'''
- name: Refuse a ROCm source whose libraries do not run on this host's AMD GPUs
  gpuops.gpu_server.rocm_compat:
    source: "{{ rocm_source }}"
    distribution: "{{ ansible_facts['distribution'] }}"
    distribution_release: "{{ ansible_facts['distribution_version'] if ansible_facts['distribution'] == 'Ubuntu'
                              else ansible_facts['distribution_major_version'] }}"
    variables:
      source: rocm_source

- name: Ask about GPUs that are not this host's, without failing
  gpuops.gpu_server.rocm_compat:
    source: distribution
    distribution: Debian
    distribution_release: "13"
    gfx_targets: [gfx942]
    fail_on_incompatible: false
  register: __rocm_compat
'''

RETURN = r'''
compatible:
  description: Whether every GPU was identified and the source carries its target (RV(verdict=compatible)).
  type: bool
  returned: always
  sample: false
verdict:
  description: V(compatible), V(incompatible) or V(unknown) (a GPU could not be identified).
  type: str
  returned: always
  sample: incompatible
source:
  description: The ROCm source checked, by name.
  type: str
  returned: always
  sample: Debian 13's distribution ROCm
gfx_targets:
  description: The distinct gfx targets checked.
  type: list
  elements: str
  returned: always
  sample: [gfx942]
source_gfx_targets:
  description: The gfx targets the source's libraries carry; empty where it carries no library.
  type: list
  elements: str
  returned: always
  sample: [gfx803, gfx900, gfx906, gfx908, gfx90a, gfx1010, gfx1030, gfx1100, gfx1101, gfx1102]
problems:
  description: What does not fit, each with C(subject), C(variable), C(message) and C(fix).
  type: list
  elements: dict
  returned: always
unknown_gpus:
  description: The GPUs whose gfx target could not be found, described.
  type: list
  elements: str
  returned: always
gpu_count:
  description: How many GPUs were checked (given or found on the PCI bus).
  type: int
  returned: always
  sample: 8
packages:
  description: The packages of the distribution's ROCm that the rocm role installs for O(source=distribution) (the
    runtime, tools and the libraries whose targets were checked); empty for O(source=amd) and for a distribution
    that carries no ROCm library.
  type: list
  elements: str
  returned: always
  sample: [rocminfo, rocm-smi, amd-smi, libamdhip64-5, libhsa-runtime64-1, librocblas0, librccl1]
notes:
  description: Things worth knowing that are not problems.
  type: list
  elements: str
  returned: always
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _rocm_compat

SUBJECTS = ('source', 'gpus')


def main():
    module = AnsibleModule(
        argument_spec=dict(
            source=dict(type='str', required=True, choices=list(_rocm_compat.SOURCE_CHOICES)),
            distribution=dict(type='str'),
            distribution_release=dict(type='str'),
            gfx_targets=dict(type='list', elements='raw'),
            gpus=dict(type='list', elements='raw'),
            sysfs_root=dict(type='path', default='/sys'),
            allow_unknown_gpus=dict(type='bool', default=False),
            variables=dict(type='dict', default={}),
            fail_on_incompatible=dict(type='bool', default=True),
        ),
        required_if=[('source', 'distribution', ('distribution', 'distribution_release'))],
        mutually_exclusive=[('gfx_targets', 'gpus')],
        supports_check_mode=True,
    )
    p = module.params
    names = p['variables']
    wrong = ['%s=%r' % (k, v) for k, v in names.items() if k not in SUBJECTS or not isinstance(v, str) or not v.strip()]
    if wrong:
        module.fail_json(msg='rocm_compat: variables maps each subject (%s) to a variable name; got %s'
                             % (', '.join(SUBJECTS), ', '.join(sorted(wrong))))
    targets, unknown, count, notes = [], [], 0, []
    try:
        key = _rocm_compat.source_key(p['source'], p['distribution'], p['distribution_release'])
        if p['gfx_targets'] is not None:
            for i, value in enumerate(p['gfx_targets']):
                target = _rocm_compat.gfx_target(value, 'gfx_targets[%d]' % i)
                count += 1
                if target not in targets:
                    targets.append(target)
        else:
            gpus = p['gpus']
            if gpus is None:
                gpus = _rocm_compat.amd_gpus_from_sysfs(p['sysfs_root'])
                if gpus is None:
                    module.fail_json(msg='rocm_compat: %s/bus/pci/devices cannot be read, so the GPUs are unknown: '
                                         'give gfx_targets or gpus' % p['sysfs_root'])
                if not gpus:
                    notes.append('no AMD GPU on the PCI bus under %s: nothing to check' % p['sysfs_root'])
            for i, gpu in enumerate(gpus):
                target, described = _rocm_compat.resolve_gpu(gpu, 'gpus[%d]' % i)
                count += 1
                if target is None:
                    unknown.append(described)
                elif target not in targets:
                    targets.append(target)
    except ValueError as e:
        module.fail_json(msg='rocm_compat: %s' % e)
    source = _rocm_compat.SOURCES[key]
    problems = _rocm_compat.check(key, targets) if targets or source['gfx_targets'] is None else []
    verdict = 'incompatible' if problems else 'compatible'
    if unknown:
        if p['allow_unknown_gpus']:
            notes.append('%d GPU(s) could not be identified and were not checked (allow_unknown_gpus): %s'
                         % (len(unknown), '; '.join(unknown)))
        else:
            problems.append({'subject': 'gpus', 'message': '%d GPU(s) have no known gfx target, so whether %s runs '
                             'on them is unknown: %s' % (len(unknown), source['label'], '; '.join(unknown)),
                             'fix': 'give each GPU its gfx_target (as rocminfo prints it), or allow unknown GPUs to '
                                    'check only the known ones'})
            if verdict == 'compatible':
                verdict = 'unknown'
    worded = []
    for problem in problems:
        fix = problem['fix'].replace('{source}', names.get('source') or 'source')
        worded.append(dict(problem, variable=names.get(problem['subject']) or problem['subject'], fix=fix))
    output = dict(changed=False, compatible=verdict == 'compatible', verdict=verdict, source=source['label'],
                  gfx_targets=targets, source_gfx_targets=list(source['gfx_targets'] or ()), problems=worded,
                  unknown_gpus=unknown, gpu_count=count, notes=notes,
                  packages=list(_rocm_compat.distribution_packages(key)))
    if verdict != 'compatible' and p['fail_on_incompatible']:
        module.fail_json(msg='%s ROCm source: %s' % (
            'Incompatible' if verdict == 'incompatible' else 'Unverifiable', '; '.join(
                '%s: %s (fix: %s)' % (pr['variable'], pr['message'], pr['fix']) for pr in worded)), **output)
    module.exit_json(**output)


if __name__ == '__main__':
    main()
