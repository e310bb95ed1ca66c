#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: gpu_vendor
short_description: Choose the GPU vendor whose roles a host gets, from the PCI bus
version_added: 1.1.0
description:
  - Reads the GPUs on the PCI bus from sysfs (vendor C(0x10de) NVIDIA with a display class, C(0x1002) AMD with a
    display or processing accelerator class) and says whose roles the host gets, C(nvidia), C(amd) or C(none).
  - O(vendor) forces the choice. It is parsed strictly, exactly V(auto), V(nvidia), V(amd) or V(none) as a string;
    anything else fails the module, naming O(vendor_variable), before any change.
  - With V(auto), a host with GPUs of one vendor gets that vendor; a host without an NVIDIA or AMD GPU gets
    V(nvidia), what site.yml ran before the choice existed; a host with GPUs of both vendors fails, asking for
    O(vendor).
  - Each sysfs attribute is read bounded and only from a regular file; a function whose attributes are missing,
    not the kernel's format, or links to something else is listed in RV(skipped) with the reason.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.gpu_server.read_only
options:
  vendor:
    description:
      - V(auto), V(nvidia), V(amd) or V(none), exactly as written.
    type: raw
    default: auto
  vendor_variable:
    description:
      - The variable that O(vendor) came from, named in the error message.
    type: str
    default: gpuops_gpu_vendor
  sysfs_root:
    description:
      - Where sysfs is mounted; tests point it at a fake PCI bus.
    type: path
    default: /sys
'''

EXAMPLES = r'''
- name: Choose the GPU vendor's roles
  gpuops.gpu_server.gpu_vendor:
    vendor: "{{ gpuops_gpu_vendor | default('auto') }}"
  register: __gpu_vendor

- name: Say what was chosen
  ansible.builtin.debug:
    msg: "{{ __gpu_vendor.vendor }}: {{ __gpu_vendor.reason }}"
'''

RETURN = r'''
vendor:
  description: The vendor whose roles the host gets.
  type: str
  returned: success
  sample: amd
reason:
  description: Why, in words.
  type: str
  returned: success
  sample: "auto: 8 AMD GPU(s) on the PCI bus"
vendors_on_bus:
  description: The vendors of the GPUs on the PCI bus, sorted.
  type: list
  elements: str
  returned: success
  sample: [amd]
devices:
  description: The GPUs on the PCI bus.
  type: list
  elements: dict
  returned: success
  sample: [{pci_bus_id: "0000:41:00.0", vendor: amd, pci_device_id: "1002:74a1", pci_class: "0x0302", driver: null}]
skipped:
  description: PCI functions that could not be read, with the reason.
  type: list
  elements: dict
  returned: success
  sample: [{entry: "0000:02:00.0", reason: "class is 'junk', not what the kernel writes (0x and 6 hex digits)"}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_vendor


def main():
    module = AnsibleModule(
        argument_spec=dict(
            vendor=dict(type='raw', default='auto'),
            vendor_variable=dict(type='str', default='gpuops_gpu_vendor'),
            sysfs_root=dict(type='path', default='/sys'),
        ),
        supports_check_mode=True,
    )
    name = module.params['vendor_variable']
    try:
        choice = _gpu_vendor.parse_choice(module.params['vendor'], name)
        found = _gpu_vendor.scan(module.params['sysfs_root'])
        vendor, reason = _gpu_vendor.decide(choice, found)
    except _gpu_vendor.VendorChoiceError as e:
        module.fail_json(msg='%s. Nothing was changed.' % e)
    module.exit_json(changed=False, vendor=vendor, reason=reason, vendors_on_bus=found['vendors'],
                     devices=found['devices'], skipped=found['skipped'])


if __name__ == '__main__':
    main()
