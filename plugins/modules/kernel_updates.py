#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: kernel_updates
short_description: Find the kernel updates the archive has for the installed kernel flavours (read-only)
version_added: 1.0.0
description:
  - Finds the installed kernel metapackages with C(dpkg-query). A metapackage is an installed C(linux-image-<flavour>),
    C(linux-headers-<flavour>) or C(linux-modules-nvidia-<branch>-server[-open]-<flavour>) package whose Depends name a
    per-release package (C(linux-image-<release>), C(linux-headers-<release>),
    C(linux-modules-nvidia-<branch>-server-<release>)).
  - Simulates their upgrade with C(apt-get -s install --only-upgrade <metapackages>) and reads the C(Inst) lines. The
    simulation changes nothing, so the module runs the same way in check mode.
  - Reports the running kernel (C(uname -r)) and the newest installed one. In a container the running kernel is the
    Docker host's.
  - When apt refuses the upgrade (unmet dependencies, for example a new kernel's prebuilt NVIDIA module that needs a
    newer driver than the held one), the module does not fail. It returns the reason in RV(refusal).
  - Debian and Ubuntu (dpkg and apt) only.
author:
  - gpuops maintainers (@gpuops)
options:
  nvidia_modules:
    description:
      - Include the C(linux-modules-nvidia-*-<flavour>) metapackages in the simulation.
      - Set it to V(false) when the NVIDIA modules come from elsewhere in the same run (a new driver branch, whose
        role installs that branch's modules, or DKMS).
    type: bool
    default: true
  simulate:
    description:
      - Run the C(apt-get -s) simulation. V(false) only reads the installed and running kernels (after an upgrade).
    type: bool
    default: true
  timeout:
    description:
      - Seconds after which each command is killed.
    type: int
    default: 120
extends_documentation_fragment:
  - gpuops.gpu_server.package_reader
  - gpuops.gpu_server.read_only
notes:
  - The module never reports a change.
  - It does not refresh the package lists. Run C(apt-get update) first (M(ansible.builtin.apt) with O(ansible.builtin.apt#module:update_cache=true)).
  - A kernel update that keeps the release (Debian sometimes keeps the ABI) is listed in RV(inplace_kernels). The
    running release alone cannot tell whether the new build is running.
'''

EXAMPLES = r'''
- name: Find the kernel updates of the installed flavours
  gpuops.gpu_server.kernel_updates:
  register: kernel_updates

- name: Show them
  ansible.builtin.debug:
    msg: "{{ kernel_updates.running }} -> {{ kernel_updates.new_kernels | join(', ') or 'no update' }}"
'''

RETURN = r'''
metapackages:
  description: The kernel metapackages that were simulated (all installed ones, less the NVIDIA ones with O(nvidia_modules=false)).
  returned: always
  type: list
  elements: str
  sample: [linux-image-cloud-amd64]
nvidia_metapackages:
  description: The installed C(linux-modules-nvidia-*-<flavour>) metapackages, whether simulated or not.
  returned: always
  type: list
  elements: str
  sample: [linux-modules-nvidia-580-server-generic]
upgrades:
  description: The metapackages the upgrade changes, with their versions.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "linux-image-cloud-amd64", "from": "6.1.176-1", "to": "6.1.192-3"}]
installs:
  description: Every package the simulated upgrade installs or upgrades (C(from) is null for a new package).
  returned: always
  type: list
  elements: dict
  sample: [{"name": "linux-image-6.1.0-57-cloud-amd64", "from": null, "to": "6.1.192-3"}]
new_kernels:
  description: The kernel releases whose image the upgrade installs, newest first.
  returned: always
  type: list
  elements: str
  sample: [6.1.0-57-cloud-amd64]
inplace_kernels:
  description: The installed releases whose image the upgrade replaces with a new build of the same release.
  returned: always
  type: list
  elements: str
  sample: []
installed_kernels:
  description: The releases of the installed kernel images, newest first.
  returned: always
  type: list
  elements: str
  sample: [6.1.0-50-cloud-amd64]
running:
  description: The running kernel (C(uname -r)); in a container, the Docker host's.
  returned: always
  type: str
  sample: 6.1.0-50-cloud-amd64
newest_installed:
  description: The newest installed kernel release, null when no kernel image is installed.
  returned: always
  type: str
  sample: 6.1.0-50-cloud-amd64
newest_after:
  description: The newest kernel release once the upgrade is installed.
  returned: always
  type: str
  sample: 6.1.0-57-cloud-amd64
nvidia_module_branches:
  description: The per-release Canonical NVIDIA module packages the upgrade installs, with their driver branch.
  returned: always
  type: dict
  sample: {"linux-modules-nvidia-580-server-7.0.0-1018-aws": "580"}
refusal:
  description:
    - Why apt refuses the upgrade, null when it does not (or nothing was simulated).
    - C(nvidia) is true when the unmet dependencies name an NVIDIA package.
  returned: always
  type: dict
  sample: {"message": "nvidia-kernel-common-535-server : Conflicts: nvidia-kernel-common", "nvidia": true,
           "unmet": ["nvidia-kernel-common-535-server : Conflicts: nvidia-kernel-common"]}
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_updates


def run(module, argv, ok=(0,)):
    """(rc, stdout, stderr) of one command; fails the module naming the command when it cannot answer."""
    try:
        rc, out, err = _command.run(argv, timeout=module.params['timeout'])
    except _command.CommandError as e:
        module.fail_json(msg=str(e))
    if rc not in ok:
        module.fail_json(msg='Command %s failed with exit code %s: %s' % (
            _command.format_argv(argv), rc, (err or out).strip()[-2000:]), rc=rc, stdout=out, stderr=err)
    return rc, out, err


def main():
    module = AnsibleModule(
        argument_spec=dict(
            nvidia_modules=dict(type='bool', default=True),
            simulate=dict(type='bool', default=True),
            timeout=dict(type='int', default=120),
        ),
        supports_check_mode=True,
    )
    if module.params['timeout'] < 1:
        module.fail_json(msg='timeout must be a positive number of seconds, got %s' % module.params['timeout'])
    dpkg_query = module.get_bin_path('dpkg-query', required=True)
    dummy, out, dummy = run(module, [dpkg_query, '-W', '-f', _kernel_updates.DPKG_QUERY_FORMAT])
    packages = _kernel_updates.parse_dpkg_query(out)
    found = _kernel_updates.kernel_metapackages(packages)
    nvidia = [m for m in found if m.startswith('linux-modules-nvidia-')]
    metas = found if module.params['nvidia_modules'] else [m for m in found if m not in nvidia]
    rc = text = None
    if module.params['simulate'] and metas:
        apt_get = module.get_bin_path('apt-get', required=True)
        # 100: apt refuses (unmet dependencies); the reason is returned, not a failure of the module.
        rc, out, err = run(module, [apt_get, '-s', 'install', '--only-upgrade'] + metas, ok=(0, 100))
        text = out + '\n' + err
    result = _kernel_updates.summarize(packages, metas, os.uname()[2], rc, text)
    result['nvidia_metapackages'] = nvidia
    module.exit_json(changed=False, **result)


if __name__ == '__main__':
    main()
