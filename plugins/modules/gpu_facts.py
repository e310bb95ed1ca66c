#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: gpu_facts
short_description: Gather facts about NVIDIA GPUs, driver and CUDA version
version_added: 1.0.0
description:
  - Runs C(nvidia-smi -q -x) exactly once and returns what it reports as C(ansible_facts.nvidia),
    the driver and CUDA version and, per GPU, identity, modes, memory, temperature, power, PCIe link,
    ECC counters, retired pages, row remapping and active clock event reasons.
  - Reads the NVIDIA devices on the PCI bus from sysfs as well, so that a host whose driver is
    missing or broken still reports its GPUs.
  - When nvidia-smi is missing or cannot talk to the driver (for example C(Failed to initialize NVML),
    exit code 9, or C(NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver)),
    the module does not fail; it returns C(driver_loaded=false) and a C(reason).
  - A report that names no driver version (an empty C(<nvidia_smi_log/>)) is not taken for a loaded driver either;
    the module returns C(driver_loaded=false), with that C(reason).
  - A hung nvidia-smi (a sick GPU) is killed after O(timeout) seconds and the module fails.
  - Output that is not an nvidia-smi XML report (not well-formed, entity declarations, a second DOCTYPE) fails the
    module with the reason; entities are never expanded.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.gpu_server.gpu_host
  - gpuops.gpu_server.gpu_host.platform
  - gpuops.gpu_server.read_only
notes:
  - Values that a GPU does not report (V(N/A), V([Not Supported])) are returned as V(null), numbers as numbers.
  - "A figure that is no reading is V(null) as well, never an error, V(inf) or V(nan): digits other than ASCII
    (Arabic-Indic, fullwidth), more than 20 digits before the point, or beyond plus or minus 2**64 (NVML reports
    nothing wider than 64 bits)."
  - C(gpu_count) counts the GPUs that nvidia-smi described; C(attached_gpus) is what the driver counted.
    They differ when nvidia-smi loses a GPU while reading.
seealso:
  - module: gpuops.gpu_server.gpu_health
  - module: gpuops.gpu_server.cuda_compat
'''

EXAMPLES = r'''
- name: Gather NVIDIA facts
  gpuops.gpu_server.gpu_facts:

- name: Show the driver and the GPUs
  ansible.builtin.debug:
    msg: "{{ ansible_facts.nvidia.driver_version }}: {{ ansible_facts.nvidia.gpus | map(attribute='name') | list }}"
  when: ansible_facts.nvidia.driver_loaded

- name: Explain why there is no driver
  ansible.builtin.debug:
    msg: "{{ ansible_facts.nvidia.reason }} ({{ ansible_facts.nvidia.pci_devices | selectattr('kind', 'eq', 'gpu') | list | length }} GPUs on the PCI bus)"
  when: not ansible_facts.nvidia.driver_loaded
'''

RETURN = r'''
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    nvidia:
      description: The NVIDIA GPUs of the host.
      returned: always
      type: dict
      contains:
        driver_loaded:
          description: Whether nvidia-smi could read the GPUs through the driver.
          type: bool
          returned: always
          sample: true
        driver_version:
          description: The loaded driver version.
          type: str
          returned: always
          sample: "570.86.15"
        cuda_version:
          description: The highest CUDA version the driver supports (as nvidia-smi prints it, or derived from the driver version for drivers older than R410).
          type: str
          returned: always
          sample: "12.8"
        attached_gpus:
          description: The number of GPUs the driver counted.
          type: int
          returned: always
          sample: 8
        gpu_count:
          description: The number of GPUs described in C(gpus).
          type: int
          returned: always
          sample: 8
        gpus:
          description: One entry per GPU, in nvidia-smi order.
          type: list
          elements: dict
          returned: always
          contains:
            index: {description: Position in nvidia-smi output (the nvidia-smi index)., type: int, returned: always, sample: 0}
            name: {description: Product name., type: str, returned: always, sample: NVIDIA H200}
            uuid: {description: GPU UUID., type: str, returned: always, sample: GPU-5a1c0e00-6c1d-4e5b-9a2f-3c2b1a000000}
            pci_bus_id: {description: PCI address in sysfs form., type: str, returned: always, sample: "0000:18:00.0"}
            pci_device_id: {description: PCI vendor and device id., type: str, returned: always, sample: "10de:2335"}
            architecture: {description: Architecture as nvidia-smi names it., type: str, returned: always, sample: Hopper}
            architecture_source:
              description: Where the architecture came from, V(nvidia-smi), V(pci_device_id) or V(product_name).
              type: str
              returned: always
              sample: nvidia-smi
            memory_total_mib: {description: Framebuffer size in MiB., type: int, returned: always, sample: 143771}
            persistence_mode: {description: Whether persistence mode is on., type: bool, returned: always, sample: true}
            mig_mode: {description: Whether MIG is enabled (null where MIG is not supported)., type: bool, returned: always, sample: false}
            ecc_mode: {description: Whether ECC is enabled (null where not supported)., type: bool, returned: always, sample: true}
            temperature_c: {description: GPU temperature in Celsius., type: int, returned: always, sample: 34}
            temperature_slowdown_c: {description: Temperature at which the GPU slows down., type: int, returned: always, sample: 87}
            power_draw_w: {description: Power draw in watts., type: float, returned: always, sample: 118.31}
            power_limit_w: {description: Current power limit in watts., type: float, returned: always, sample: 700.0}
            pcie_gen_current: {description: Current PCIe generation., type: int, returned: always, sample: 5}
            pcie_gen_max: {description: Maximum PCIe generation., type: int, returned: always, sample: 5}
            pcie_width_current: {description: Current PCIe link width (lanes)., type: int, returned: always, sample: 16}
            pcie_width_max: {description: Maximum PCIe link width (lanes)., type: int, returned: always, sample: 16}
            ecc_errors:
              description: ECC error totals, C(volatile) (since the driver loaded) and C(aggregate) (lifetime), each with C(corrected) and C(uncorrected).
              type: dict
              returned: always
              sample: {volatile: {corrected: 0, uncorrected: 0}, aggregate: {corrected: 12, uncorrected: 0}}
            retired_pages:
              description: Retired pages (C(single_bit_ecc), C(double_bit_ecc), C(total), C(pending)); null where the GPU uses row remapping instead.
              type: dict
              returned: always
            remapped_rows:
              description: Row remapping (C(correctable), C(uncorrectable), C(pending), C(failure)); null before Ampere.
              type: dict
              returned: always
            clock_event_reasons:
              description: Active clock event (throttle) reasons, e.g. V(gpu_idle), V(hw_slowdown).
              type: list
              elements: str
              returned: always
              sample: [gpu_idle]
        pci_devices:
          description: NVIDIA functions on the PCI bus, read from sysfs.
          type: list
          elements: dict
          returned: always
          sample:
            - {pci_bus_id: "0000:18:00.0", pci_device_id: "10de:2335", kind: gpu, architecture: Hopper,
               product: H200 SXM 141GB, driver: nvidia, pci_class: "0x0302"}
        reason:
          description: Why C(driver_loaded) is false; null otherwise.
          type: str
          returned: always
          sample: "NVML could not start (...). Command 'nvidia-smi -q -x' failed with exit code 255: Failed to initialize NVML: Unknown Error"
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils._module import gather_facts, host_argument_spec


def main():
    module = AnsibleModule(argument_spec=host_argument_spec(), supports_check_mode=True)
    facts = gather_facts(module)
    module.exit_json(changed=False, ansible_facts=dict(nvidia=facts))


if __name__ == '__main__':
    main()
