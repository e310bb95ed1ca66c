#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: amdgpu_kernels
short_description: Say whether each bootable kernel's amdgpu and the firmware can drive the AMD GPUs on the bus
version_added: 1.1.0
description:
  - Reads the AMD GPUs on the PCI bus from sysfs, the kernels the host can boot (C(/boot/vmlinuz-<release>) with
    its C(/lib/modules/<release>)), and for each kernel the firmware its amdgpu module asks for
    (C(modinfo -F firmware)).
  - A GPU family whose support is recent (the MI300 series) needs its IP blocks' firmware both named by the kernel's
    amdgpu module and present in the firmware the host gets. Each gap is a problem in RV(problems); the module
    itself changes nothing and does not fail on a problem, so that the role refuses with its own fix.
  - A kernel without an amdgpu module yet (Ubuntu's linux-modules-extra not installed) is listed with
    C(module=null) and is not judged.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.gpu_server.read_only
options:
  sysfs_root:
    description: Where sysfs is mounted; tests point it at a fake PCI bus.
    type: path
    default: /sys
  root:
    description: The root of the tree whose kernels and firmware are read.
    type: path
    default: /
  firmware_available:
    description:
      - Firmware files (C(amdgpu/<name>.bin)) that the distribution's firmware package holds, which the role is about
        to install. The files already under C(<root>/lib/firmware/amdgpu) and C(<root>/lib/firmware/updates/amdgpu)
        count too.
    type: list
    elements: str
    default: []
  modules_extra:
    description:
      - Whether amdgpu comes in a separate package per kernel, C(linux-modules-extra-<release>) (Ubuntu 24.04's GA
        kernels). Each bootable kernel without an amdgpu module then gets that package in RV(packages), and the
        kernel's installed linux-image metapackage its entry in O(modules_extra_metapackages).
    type: bool
    default: false
  modules_extra_metapackages:
    description:
      - Installed linux-image metapackage to the metapackage that brings C(linux-modules-extra) with every kernel it
        brings (Ubuntu 24.04 - C(linux-image-virtual) to C(linux-image-generic)).
    type: dict
    default: {}
'''

EXAMPLES = r'''
- name: Check the kernels and firmware against the AMD GPUs
  gpuops.gpu_server.amdgpu_kernels:
    firmware_available: [amdgpu/gc_9_4_3_mec.bin]
  register: __amdgpu
'''

RETURN = r'''
devices:
  description: The AMD GPUs on the PCI bus (as gpu_vendor returns them).
  type: list
  elements: dict
  returned: success
kernels:
  description: The bootable kernels, newest first, each with C(release), C(module) (the amdgpu module's path or null).
  type: list
  elements: dict
  returned: success
problems:
  description: What stops the in-tree amdgpu, each C(kind) (kernel or firmware), C(release), C(gpu), C(missing).
  type: list
  elements: dict
  returned: success
packages:
  description: The packages that give every bootable kernel its amdgpu module and keep it there on upgrades.
  type: list
  elements: str
  returned: success
  sample: [linux-modules-extra-6.8.0-155-generic, linux-image-generic]
messages:
  description: The problems in words.
  type: list
  elements: str
  returned: success
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amdgpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_vendor
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _boot_kernels
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _deb_control
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _image_tree

# Where a kernel keeps amdgpu: in-tree (Debian's linux-image, Ubuntu's linux-modules-extra) or DKMS's build.
_MODULE_DIRS = ('kernel/drivers/gpu/drm/amd/amdgpu', 'updates/dkms', 'updates')
_MODULE_NAMES = ('amdgpu.ko', 'amdgpu.ko.xz', 'amdgpu.ko.zst', 'amdgpu.ko.gz')


def _module_path(root, release):
    mdir = _boot_kernels.modules_dir(root, release)
    if mdir is None:
        return None
    for sub in _MODULE_DIRS:
        for name in _MODULE_NAMES:
            path = os.path.join(mdir, sub, name)
            if os.path.isfile(path):
                return path
    return None


def _firmware_on_disk(root):
    names = []
    for sub in ('lib/firmware/amdgpu', 'lib/firmware/updates/amdgpu', 'usr/lib/firmware/amdgpu'):
        try:
            entries = os.listdir(os.path.join(root, sub))
        except OSError:
            continue
        names.extend('amdgpu/' + e for e in entries)
    return names


def _modules_extra_packages(module, root, kernels):
    dpkg_query = module.get_bin_path('dpkg-query', required=True)
    argv = [dpkg_query]
    if root not in ('/', ''):
        argv.append('--admindir=' + os.path.join(root, 'var/lib/dpkg'))
    argv += ['-W', '-f', '${Package}\t${Status}\t${Depends}\n', 'linux-image-*']
    rc, out, err = module.run_command(argv, environ_update={'LC_ALL': 'C', 'LANG': 'C'})
    if rc not in (0, 1):                                # 1: no package matched
        module.fail_json(msg='%s failed with exit code %d: %s' % (' '.join(argv), rc, err.strip()))
    metapackages = _deb_control.image_metapackages(out, [k['release'] for k in kernels])
    return _amdgpu.modules_extra_packages(kernels, metapackages, module.params['modules_extra_metapackages'])


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type='path', default='/sys'),
            root=dict(type='path', default='/'),
            firmware_available=dict(type='list', elements='str', default=[]),
            modules_extra=dict(type='bool', default=False),
            modules_extra_metapackages=dict(type='dict', default={}),
        ),
        supports_check_mode=True,
    )
    root = module.params['root']
    found = _gpu_vendor.scan(module.params['sysfs_root'])
    devices = [d for d in found['devices'] if d['vendor'] == 'amd']
    try:
        releases = _boot_kernels.bootable_kernels(root)
    except _image_tree.PathRefused as e:
        module.fail_json(msg='Cannot read the kernels under %s: %s' % (root, e))
    kernels = []
    modinfo = None
    for release in releases:
        path = _module_path(root, release)
        names = set()
        if path is not None:
            modinfo = modinfo or module.get_bin_path('modinfo', required=True)
            rc, out, err = module.run_command([modinfo, '-F', 'firmware', path],
                                              environ_update={'LC_ALL': 'C', 'LANG': 'C'})
            if rc != 0:
                module.fail_json(msg='%s -F firmware %s failed with exit code %d: %s' % (modinfo, path, rc, err.strip()))
            names = _amdgpu.parse_firmware_list(out)
        kernels.append({'release': release, 'module': path, 'firmware': sorted(names)})
    packages = []
    if module.params['modules_extra'] and kernels:
        packages = _modules_extra_packages(module, root, kernels)
    available = list(module.params['firmware_available']) + _firmware_on_disk(root)
    problems = _amdgpu.problems(devices, kernels, available)
    module.exit_json(changed=False, devices=devices,
                     kernels=[{'release': k['release'], 'module': k['module']} for k in kernels],
                     problems=problems, packages=packages, messages=_amdgpu.describe(problems))


if __name__ == '__main__':
    main()
