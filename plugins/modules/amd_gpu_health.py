#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: amd_gpu_health
short_description: Check the health of AMD GPUs from amd-smi, rocm-smi or sysfs
version_added: 1.1.0
description:
  - Reads the host once as M(gpuops.gpu_server.amd_gpu_facts) does and judges each GPU; the result has the shape of
    M(gpuops.gpu_server.gpu_health)'s (C(status), C(reaches), C(checks)), with the facts under C(amd).
  - "Checks: driver loaded; GPU count (against O(expected_gpu_count), else against the AMD GPUs on the PCI bus);
    uncorrectable ECC errors (fail); corrected ECC errors over O(ecc_correctable_max) (warn); RAS bad pages - a page
    that could not be retired fails, retired pages at the device's bad page threshold (or O(bad_pages_max)) fail,
    pending or retired pages warn; each temperature sensor (edge, junction, mem) against the device's own critical
    and emergency temperatures (at or above either fails, within O(temperature_margin_c) of critical warns);
    throttling (warn); an XGMI link that is not enabled (fail), an XGMI error status (warn), and an MI300X or MI325X
    joined by XGMI to fewer of the host's GPUs of its model than its baseboard joins (fail)."
  - A figure that is unknown (null in the facts) is not judged; it never fails the module.
  - The kernel log is not read (the NVIDIA module's Xid events have no AMD counterpart here).
extends_documentation_fragment:
  - gpuops.gpu_server.amd_host
  - gpuops.gpu_server.amd_host.platform
  - gpuops.gpu_server.read_only
author:
  - gpuops maintainers (@gpuops)
options:
  expected_gpu_count:
    description:
      - The number of GPUs this host must have (an MI250 or MI250X counts two). When unset, the module compares with
        the AMD GPUs on the PCI bus. 0 or more.
    type: int
  fail_on:
    description: Fail the task when the overall status reaches this level. V(never) only reports.
    type: str
    choices: [warn, fail, never]
    default: fail
  ecc_correctable_max:
    description: Warn when a GPU has more corrected ECC errors than this since the driver loaded. 0 or more.
    type: int
    default: 1000
  bad_pages_max:
    description:
      - Fail when a GPU has retired this many VRAM pages or more. 1 or more.
      - By default the device's own bad page threshold (amd-smi's C(ras.bad_page_threshold)) is the limit, and a GPU
        without one only warns for retired pages.
    type: int
  temperature_margin_c:
    description: Warn when a sensor is this close (in Celsius) to its critical temperature. 0 or more.
    type: int
    default: 5
seealso:
  - module: gpuops.gpu_server.amd_gpu_facts
  - module: gpuops.gpu_server.gpu_health
'''

EXAMPLES = r'''
- name: Check the GPUs of an 8-GPU MI300X node
  gpuops.gpu_server.amd_gpu_health:
    expected_gpu_count: 8
  register: __amd_gpu_health

- name: List the checks that are not ok
  ansible.builtin.debug:
    msg: "{{ __amd_gpu_health.checks | rejectattr('status', 'eq', 'ok') | map(attribute='message') | list }}"
'''

RETURN = r'''
status:
  description: The worst status of all checks, V(ok), V(warn) or V(fail).
  type: str
  returned: always
  sample: warn
reaches:
  description: Whether RV(status) reaches each O(fail_on) level, V(warn), V(fail) and V(never) (always false).
  type: dict
  returned: always
  sample: {warn: true, fail: false, never: false}
checks:
  description: Every check made, ok ones included.
  type: list
  elements: dict
  returned: always
  contains:
    check:
      description: The check, one of V(driver_loaded), V(gpu_count), V(ecc_uncorrectable), V(ecc_correctable),
        V(bad_pages), V(temperature), V(throttling), V(xgmi_links), V(xgmi_error).
      type: str
      sample: temperature
    gpu:
      description: The GPU index, null for host-wide checks.
      type: int
      sample: 3
    status:
      description: V(ok), V(warn) or V(fail).
      type: str
      sample: fail
    value:
      description: The value judged (a count, a temperature, the bad pages ...).
      type: raw
      sample: 101.0
    message:
      description: What was found, naming the GPU.
      type: str
      sample: "GPU 3 (0000:5c:00.0): junction temperature 101.0 C, at or above its critical temperature 100 C"
amd:
  description: The facts the checks were made on, as M(gpuops.gpu_server.amd_gpu_facts) returns them.
  type: dict
  returned: always
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils._amd_facts import ARGUMENT_SPEC, gather_for_module

# The lowest value each number option takes.
MINIMUM = {'expected_gpu_count': 0, 'ecc_correctable_max': 0, 'temperature_margin_c': 0, 'bad_pages_max': 1}


def main():
    spec = dict((k, dict(v)) for k, v in ARGUMENT_SPEC.items())
    spec.update(
        expected_gpu_count=dict(type='int'),
        fail_on=dict(type='str', default='fail', choices=['warn', 'fail', 'never']),
        ecc_correctable_max=dict(type='int', default=1000),
        bad_pages_max=dict(type='int'),
        temperature_margin_c=dict(type='int', default=5),
    )
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    for name, minimum in sorted(MINIMUM.items()):
        value = module.params[name]
        if value is not None and value < minimum:
            module.fail_json(msg='%s must be %d or more, got %d' % (name, minimum, value))
    facts = gather_for_module(module)
    thresholds = dict((k, module.params[k]) for k in _amd_health.DEFAULT_THRESHOLDS)
    result = _amd_health.evaluate(facts, expected_gpu_count=module.params['expected_gpu_count'], thresholds=thresholds)
    output = dict(changed=False, status=result['status'], reaches=_health.levels_reached(result['status']),
                  checks=result['checks'], amd=facts)
    if output['reaches'][module.params['fail_on']]:
        bad = [c['message'] for c in result['failing'] if _health.reaches(c['status'], module.params['fail_on'])]
        module.fail_json(msg='AMD GPU health is %s: %s' % (result['status'], '; '.join(bad)), **output)
    module.exit_json(**output)


if __name__ == '__main__':
    main()
