#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: gpu_health
short_description: Check the health of NVIDIA GPUs from nvidia-smi and the kernel log
version_added: 1.0.0
description:
  - Reads C(nvidia-smi -q -x) once (like M(gpuops.gpu_server.gpu_facts)) and the kernel log for C(NVRM Xid) lines,
    and judges each GPU.
  - "The kernel log is read from the source that holds the current boot's kernel messages: C(journalctl -k) when the
    journal has any, else C(dmesg) (a host whose journald keeps no kernel messages, or that has no journal, answers
    C(journalctl) with nothing: that is never taken for a clean log). RV(kernel_log_source) says which one answered.
    When neither can be read the C(kernel_log) check warns with both reasons."
  - "Checks: driver loaded; GPU count (against O(expected_gpu_count), else against the GPUs on the PCI bus);
    every Xid event, classified by code (hardware faults such as 48, 64, 74, 79, 94, 95, 119 fail; application-side
    codes such as 13, 31, 43, 45 and unknown codes warn); uncorrectable ECC errors; corrected ECC errors over a
    threshold; row remapping pending or failed; retired pages pending or at the limit; PCIe link narrower than its
    maximum; temperature at or near the slowdown threshold; persistence mode off; active hardware or thermal
    slowdown; a recovery action requested by the driver."
  - Returns the overall C(status) and the list of C(checks); fails when the status reaches O(fail_on),
    with a message naming each GPU and check.
  - A figure in the nvidia-smi report that is no reading (see M(gpuops.gpu_server.gpu_facts)) is null and its check
    is judged without it (the temperature check by the T.Limit margin alone, for example); it never fails the module.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.gpu_server.gpu_host
  - gpuops.gpu_server.gpu_host.platform
  - gpuops.gpu_server.read_only
options:
  expected_gpu_count:
    description:
      - The number of GPUs this host must have. When unset, the module compares with the GPUs on the PCI bus.
      - 0 or more; a negative number fails the task.
    type: int
  fail_on:
    description:
      - Fail the task when the overall status reaches this level. V(never) only reports.
    type: str
    choices: [warn, fail, never]
    default: fail
  kernel_log_since:
    description:
      - Read kernel messages since this time, in any form C(journalctl --since) accepts (V(-1h), V(2025-02-23 16:00:00), V(today)).
      - By default only the current boot is read.
      - A value journalctl cannot parse (V(not-a-time)) fails the task; it is never silently replaced by another reader.
      - When the journal holds no kernel messages of the current boot, C(dmesg) is read instead, and it always holds
        the whole current boot (it cannot be limited to this time).
    type: str
  kernel_log_path:
    description:
      - Read kernel messages from this file instead of running journalctl or dmesg
        (a saved C(journalctl -k) or C(dmesg) output, for tests and post-mortems).
      - It must be a regular file of at most 64 MiB; a FIFO, a device (V(/dev/zero), V(/dev/kmsg)), a directory or a
        larger file fails the task without hanging.
    type: path
  check_kernel_log:
    description:
      - Whether to read the kernel log for Xid events at all.
    type: bool
    default: true
  ecc_correctable_max:
    description:
      - Warn when a GPU has more corrected ECC errors than this since the driver loaded. 0 or more.
    type: int
    default: 1000
  retired_pages_max:
    description:
      - Fail when a GPU has retired this many pages or more (the hardware retires at most 64). 1 or more.
    type: int
    default: 60
  temperature_margin_c:
    description:
      - Warn when a GPU is this close (in Celsius) to its slowdown temperature; at or above it the check fails.
      - 0 or more.
    type: int
    default: 5
  require_persistence_mode:
    description:
      - Warn when persistence mode is off.
    type: bool
    default: true
seealso:
  - module: gpuops.gpu_server.gpu_facts
'''

EXAMPLES = r'''
- name: Check the GPUs of an 8-GPU node, failing on hardware faults
  gpuops.gpu_server.gpu_health:
    expected_gpu_count: 8
  register: __gpu_health

- name: Report without failing, Xid events of the last day only
  gpuops.gpu_server.gpu_health:
    fail_on: never
    kernel_log_since: -24h
  register: __gpu_health

- name: List the failing checks
  ansible.builtin.debug:
    msg: "{{ __gpu_health.checks | rejectattr('status', 'eq', 'ok') | map(attribute='message') | list }}"
'''

RETURN = r'''
status:
  description: The worst status of all checks.
  type: str
  returned: always
  sample: warn
checks:
  description: Every check made, ok ones included.
  type: list
  elements: dict
  returned: always
  contains:
    check:
      description: The check, one of V(driver_loaded), V(gpu_count), V(xid), V(ecc_uncorrectable), V(ecc_correctable),
        V(row_remapping), V(retired_pages), V(pcie_link_width), V(temperature), V(persistence_mode), V(clock_slowdown),
        V(recovery_action), V(kernel_log).
      type: str
      sample: pcie_link_width
    gpu:
      description: The GPU index, null for host-wide checks (and for Xid events of a device nvidia-smi does not describe).
      type: int
      sample: 5
    status:
      description: V(ok), V(warn) or V(fail).
      type: str
      sample: warn
    value:
      description: The value judged (a count, a temperature, an Xid code ...).
      type: raw
      sample: 8
    message:
      description: What was found, naming the GPU.
      type: str
      sample: "GPU 5 (0000:ab:00.0): PCIe link x8 of x16 (degraded: reseat or check the riser)"
xid_events:
  description:
    - The Xid events found in the kernel log.
    - C(code) is null for an Xid line whose code is no number this module can read (more than 9 digits); such an
      event warns. Codes are read from ASCII digits only.
    - C(pci) is the device (V(0000:3b:00)), null where the line names no PCI address (the event then counts for the
      host, not a GPU).
    - C(text) is the rest of the line after the code, without control characters, at most 512 characters followed
      by V( [... N more characters]) where the line was longer.
  type: list
  elements: dict
  returned: always
  sample: [{time: "2025-02-23T16:24:18+0000", host: gpu01, pci: "0000:3b:00", code: 79, status: fail,
            description: GPU has fallen off the bus, text: "pid=1234, name=python3, GPU has fallen off the bus."}]
reaches:
  description:
    - Whether RV(status) reaches each O(fail_on) level, V(warn), V(fail) and V(never) (always false), so that a
      caller that ran with O(fail_on=never) can decide later without ranking the statuses itself.
  type: dict
  returned: always
  sample: {warn: true, fail: false, never: false}
  version_added: 1.0.0
kernel_log_source:
  description: Where the kernel log came from, V(journalctl), V(dmesg) (also when the journal held no kernel
    messages of the current boot), V(file), or null when it was not read.
  type: str
  returned: always
  sample: journalctl
nvidia:
  description: The facts the checks were made on, as M(gpuops.gpu_server.gpu_facts) returns them.
  type: dict
  returned: always
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log
from ansible_collections.gpuops.gpu_server.plugins.module_utils._module import (
    BIN_DIRS, at_least, gather_facts, host_argument_spec)


def read_kernel_log(module):
    path = module.params['kernel_log_path']
    if path:
        try:
            return _kernel_log.read_file(path), 'file', None
        except _kernel_log.KernelLogError as e:
            module.fail_json(msg='kernel_log_path %s' % e)
    try:
        return _kernel_log.read(
            journalctl_path=module.get_bin_path('journalctl', opt_dirs=BIN_DIRS),
            dmesg_path=module.get_bin_path('dmesg', opt_dirs=BIN_DIRS),
            since=module.params['kernel_log_since'],
            timeout=module.params['timeout'])
    except _kernel_log.KernelLogError as e:
        module.fail_json(msg=str(e))
    except (_command.CommandTimeout, _command.CommandOutputTooLarge) as e:
        return None, None, str(e)


def main():
    module = AnsibleModule(
        argument_spec=host_argument_spec(
            expected_gpu_count=dict(type='int'),
            fail_on=dict(type='str', default='fail', choices=['warn', 'fail', 'never']),
            kernel_log_since=dict(type='str'),
            kernel_log_path=dict(type='path'),
            check_kernel_log=dict(type='bool', default=True),
            ecc_correctable_max=dict(type='int', default=1000),
            retired_pages_max=dict(type='int', default=60),
            temperature_margin_c=dict(type='int', default=5),
            require_persistence_mode=dict(type='bool', default=True),
        ),
        mutually_exclusive=[('kernel_log_since', 'kernel_log_path')],
        supports_check_mode=True,
    )
    at_least(module, 0, 'expected_gpu_count', 'ecc_correctable_max', 'temperature_margin_c')
    at_least(module, 1, 'retired_pages_max', 'timeout')
    if module.params['kernel_log_since'] is not None and not module.params['kernel_log_since'].strip():
        module.fail_json(msg='kernel_log_since must not be empty; leave it unset to read the current boot')
    facts = gather_facts(module)
    events, source, log_error = [], None, None
    if module.params['check_kernel_log']:
        text, source, log_error = read_kernel_log(module)
        events = _kernel_log.parse(text) if text is not None else []
    thresholds = dict((k, module.params[k]) for k in _health.DEFAULT_THRESHOLDS)
    result = _health.evaluate(facts, events, expected_gpu_count=module.params['expected_gpu_count'],
                              thresholds=thresholds, kernel_log_error=log_error)
    for event in events:
        event.pop('line', None)
    output = dict(changed=False, status=result['status'], reaches=_health.levels_reached(result['status']),
                  checks=result['checks'], xid_events=events, kernel_log_source=source, nvidia=facts)
    if output['reaches'][module.params['fail_on']]:
        bad = [c['message'] for c in result['failing'] if _health.reaches(c['status'], module.params['fail_on'])]
        module.fail_json(msg='GPU health is %s: %s' % (result['status'], '; '.join(bad)), **output)
    module.exit_json(**output)


if __name__ == '__main__':
    main()
