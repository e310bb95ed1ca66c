#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: amd_gpu_facts
short_description: Gather facts about AMD GPUs from amd-smi, rocm-smi or the kernel's sysfs
version_added: 1.1.0
description:
  - Returns the AMD GPUs of the host as C(ansible_facts.amd). The keys of each GPU match
    C(ansible_facts.nvidia.gpus) of M(gpuops.gpu_server.gpu_facts) wherever the meaning is the same, plus the
    C(gfx_target), the temperatures and limits per sensor, RAS bad pages, throttling and the XGMI links.
  - Reads C(amd-smi static --json), C(amd-smi metric --json) and C(amd-smi topology --json) first. amd-smi prints a
    bare list of GPUs in ROCm 6.x and an object with C(gpu_data) in ROCm 7.x; the module tells the two apart from the
    JSON itself, never from the tool's version.
  - amd-smi prints memory sizes in C(MB) and means MiB (the library divides bytes by 1024 * 1024); the module reads
    them as MiB.
  - Without a working amd-smi it reads C(rocm-smi -a --json) (rocm-smi is dropped in ROCm 10); without either it
    reads the kernel's sysfs, which needs no ROCm at all (C(/sys/class/drm/card*/device) - vendor 0x1002,
    C(mem_info_vram_total), C(gpu_busy_percent), hwmon temperatures, limits and power, RAS error counts
    C(ras/*_err_count) and bad pages C(ras/gpu_vram_bad_pages)). What a tool leaves unknown is filled from sysfs for
    the GPU at the same PCI address.
  - A missing tool, a tool that fails or prints something unreadable, and a driver that is not loaded do not fail
    the module; C(driver_loaded) is false with a C(reason), and C(notes) says what each source answered.
  - A tool that hangs is killed after O(timeout) seconds and the module fails (a hung amd-smi usually means a sick GPU).
extends_documentation_fragment:
  - gpuops.gpu_server.amd_host
  - gpuops.gpu_server.amd_host.platform
  - gpuops.gpu_server.read_only
author:
  - gpuops maintainers (@gpuops)
notes:
  - Values a GPU does not report (V(N/A)) are null; so is a figure that is no reading (a non-ASCII digit, more than
    20 digits, beyond plus or minus 2**64, NaN, a value in another unit than expected), never an error.
  - "C(ecc_errors.volatile) holds the amdgpu RAS counts, which the driver keeps in memory (since it loaded).
    AMD reports no lifetime count: C(ecc_errors.aggregate) is always null; the lasting record is C(bad_pages)."
  - No AMD GPU has run this module in this collection's tests; it is tested on recorded amd-smi and rocm-smi output
    from public repositories and on built sysfs trees.
seealso:
  - module: gpuops.gpu_server.amd_gpu_health
  - module: gpuops.gpu_server.gpu_facts
'''

EXAMPLES = r'''
- name: Gather AMD GPU facts
  gpuops.gpu_server.amd_gpu_facts:

- name: Show the GPUs and their gfx targets
  ansible.builtin.debug:
    msg: "{{ ansible_facts.amd.gpus | map(attribute='gfx_target') | list }} (from {{ ansible_facts.amd.source }})"
  when: ansible_facts.amd.driver_loaded

- name: Explain why there is no driver
  ansible.builtin.debug:
    msg: "{{ ansible_facts.amd.reason }}"
  when: not ansible_facts.amd.driver_loaded
'''

RETURN = r'''
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    amd:
      description: The AMD GPUs of the host.
      returned: always
      type: dict
      contains:
        driver_loaded:
          description: Whether amd-smi or rocm-smi described the GPUs, or sysfs shows a GPU bound to amdgpu.
          type: bool
          returned: always
          sample: true
        reason:
          description: Why C(driver_loaded) is false; null otherwise.
          type: str
          returned: always
          sample: "1 AMD GPU(s) on the PCI bus but none is bound to the amdgpu kernel driver (...); amd-smi was not found on PATH"
        source:
          description: Which source described the GPUs, V(amd-smi), V(rocm-smi) or V(sysfs); null when none did.
          type: str
          returned: always
          sample: amd-smi
        notes:
          description: What each source tried before answered, or why a part (the XGMI links) was not read.
          type: list
          elements: str
          returned: always
          sample: []
        gpu_count:
          description: The number of GPUs in C(gpus).
          type: int
          returned: always
          sample: 8
        gpus:
          description: One entry per GPU (an MI250 or MI250X OAM is two GPUs, one per GCD), in the tool's order.
          type: list
          elements: dict
          returned: always
          contains:
            index:
              description: Position in the tool's output (amd-smi's C(gpu), rocm-smi's card number).
              type: int
              returned: always
              sample: 0
            name:
              description: Product name as the tool prints it (sysfs - the PCI ID Repository's name).
              type: str
              returned: always
              sample: AMD Instinct MI210
            pci_bus_id: {description: PCI address in sysfs form., type: str, returned: always, sample: "0000:2f:00.0"}
            pci_device_id: {description: PCI vendor and device id., type: str, returned: always, sample: "1002:740f"}
            model:
              description: The Instinct model of the PCI id (or name) in the collection's table, V(MI250X/MI250) where the id names both.
              type: str
              returned: always
              sample: MI210
            gfx_target:
              description: The LLVM gfx target as amd-smi prints it, else from the collection's table.
              type: str
              returned: always
              sample: gfx90a
            memory_total_mib: {description: VRAM size in MiB., type: int, returned: always, sample: 65520}
            temperature_c:
              description: GPU temperature in Celsius, the junction (hotspot) sensor, else edge.
              type: float
              returned: always
              sample: 35.0
            temperatures_c:
              description: Temperatures per sensor, C(edge), C(junction) (amd-smi's hotspot) and C(mem).
              type: dict
              returned: always
              sample: {edge: 32.0, junction: 35.0, mem: 43.0}
            temperature_limits_c:
              description: Per sensor, the device's C(critical) (amd-smi's slowdown) and C(emergency) (shutdown) temperatures.
              type: dict
              returned: always
              sample: {edge: {critical: 99, emergency: 99}, junction: {critical: 100, emergency: 105}, mem: {critical: 94, emergency: 99}}
            power_draw_w: {description: Power draw in watts (socket power)., type: float, returned: always, sample: 89.0}
            power_limit_w: {description: Power cap in watts., type: float, returned: always, sample: 300.0}
            gpu_busy_percent: {description: GFX activity in percent., type: int, returned: always, sample: 0}
            ecc_errors:
              description: ECC error counts, C(volatile) (the driver's RAS counts since it loaded) and C(aggregate) (always null on AMD).
              type: dict
              returned: always
              sample: {volatile: {corrected: 0, uncorrected: 0}, aggregate: {corrected: null, uncorrected: null}}
            bad_pages:
              description: VRAM pages in the RAS bad page table, C(retired), C(pending) and C(unreservable); null when not read.
              type: dict
              returned: always
              sample: {retired: 0, pending: 0, unreservable: 0}
            throttled: {description: Whether the GPU reports throttling; null when unknown., type: bool, returned: always, sample: false}
            throttle_reasons: {description: The active throttle (violation) reasons., type: list, elements: str, returned: always, sample: []}
            xgmi_links:
              description:
                - The GPU's XGMI links from C(amd-smi topology), each C(peer), C(peer_bus_id) and C(status) (V(ENABLED), V(DISABLED)).
                - Null when not read.
              type: list
              elements: dict
              returned: always
            xgmi_error:
              description: amd-smi's XGMI error status, when printed.
              type: str
              returned: always
            source: {description: Which source described this GPU., type: str, returned: always, sample: amd-smi}
        pci_devices:
          description: AMD GPUs found in sysfs, whether or not a tool described them.
          type: list
          elements: dict
          returned: always
          sample:
            - {pci_bus_id: "0000:2f:00.0", pci_device_id: "1002:740c", model: MI250X/MI250, driver: amdgpu}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils._amd_facts import ARGUMENT_SPEC, gather_for_module


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(changed=False, ansible_facts=dict(amd=gather_for_module(module)))


if __name__ == '__main__':
    main()
