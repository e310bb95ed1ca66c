#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: rocm_devices
short_description: Read the AMD GPU device files a ROCm container needs, with a CDI specification made from them
version_added: 1.1.0
description:
  - Reads /dev/kfd and the render nodes of the AMD GPUs (C(/sys/class/drm/renderD*) whose PCI vendor is 1002) and
    returns the C(docker run) arguments AMD documents for ROCm containers (ROCm documentation, "Running ROCm Docker
    containers") and a CDI specification (kind C(amd.com/gpu), one device per GPU and C(all)).
  - Reads only; writing the specification is the caller's (the rocm role writes it with
    M(gpuops.gpu_server.config_files)).
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.gpu_server.read_only
options:
  sysfs_root:
    description: Where sysfs is mounted.
    type: path
    default: /sys
  dev_root:
    description: Where the device files are (a test's fake tree); the CDI specification maps them to C(/dev) in the
      container.
    type: path
    default: /dev
'''

EXAMPLES = r'''
- name: Read the AMD GPUs' device files
  gpuops.gpu_server.rocm_devices:
  register: __rocm_devices
'''

RETURN = r'''
kfd:
  description: /dev/kfd, whether it exists and its group id.
  type: dict
  returned: always
  sample: {path: /dev/kfd, exists: true, gid: 993}
render_nodes:
  description: The AMD GPUs' render nodes, in minor order, each with C(name), C(minor), C(path), C(pci_bus_id),
    C(exists) and C(gid).
  type: list
  elements: dict
  returned: always
gpu_count:
  description: How many AMD render nodes exist.
  type: int
  returned: always
docker_run_args:
  description: The C(docker run) arguments for every AMD GPU (devices, their groups by number, seccomp unconfined);
    empty when /dev/kfd or the render nodes are absent.
  type: list
  elements: str
  returned: always
  sample: [--device, /dev/kfd, --device, /dev/dri/renderD128, --group-add, "993", --security-opt, seccomp=unconfined]
cdi_spec:
  description: The CDI specification of the GPUs; null when /dev/kfd or the render nodes are absent.
  type: dict
  returned: always
reason:
  description: Why there is nothing to run containers on, or null.
  type: str
  returned: always
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _rocm_devices


def main():
    module = AnsibleModule(
        argument_spec=dict(sysfs_root=dict(type='path', default='/sys'), dev_root=dict(type='path', default='/dev')),
        supports_check_mode=True,
    )
    sysfs_root, dev_root = module.params['sysfs_root'], module.params['dev_root']
    nodes = _rocm_devices.render_nodes(sysfs_root, dev_root)
    kfd = _rocm_devices.kfd(dev_root)
    reason = None
    if not kfd['exists']:
        reason = '%s does not exist (the amdgpu driver is not loaded, or this is a container or a host without an ' \
                 'AMD GPU)' % kfd['path']
    elif not [n for n in nodes if n['exists']]:
        reason = 'no render node of an AMD GPU under %s/class/drm exists under %s/dri' % (sysfs_root, dev_root)
    module.exit_json(changed=False, kfd=kfd, render_nodes=nodes, gpu_count=len([n for n in nodes if n['exists']]),
                     docker_run_args=_rocm_devices.docker_run_args(nodes, kfd),
                     cdi_spec=_rocm_devices.cdi_spec(nodes, kfd, dev_root), reason=reason)


if __name__ == '__main__':
    main()
