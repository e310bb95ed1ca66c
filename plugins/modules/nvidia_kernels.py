#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: nvidia_kernels
short_description: Inventory the bootable kernels, their NVIDIA modules and initramfs, and plan the module packages
version_added: 1.0.0
description:
  - Lists the kernels the host can boot, not only the running one. A kernel is bootable when
    C(<root>/boot/vmlinuz-<release>) exists and so does its C(<root>/lib/modules/<release>) directory. In a
    container the running kernel (C(uname -r)) is the Docker host's and is not listed there. On an image builder the
    kernel of the image is listed although it is not running.
  - Per kernel it reads the NVIDIA module the kernel has (C(modinfo -k <release> <name>) for each of
    O(module_names) until one answers), whether its headers are installed (C(<root>/lib/modules/<release>/build)),
    whether it has the upstream C(nova_core) driver (from C(modules.dep) and C(modules.builtin), C(modinfo) when
    neither can be read), and whether its initramfs (C(<root>/boot/initrd.img-<release>)) carries O(blacklist_file)
    with the same bytes as on disk (extracted with C(unmkinitramfs) into a temporary directory that is removed
    afterwards).
  - With O(plan=true) it plans which packages give every kernel its module, the way C(ubuntu-drivers install --gpgpu)
    chooses for the running kernel. On Ubuntu that is Canonical's prebuilt, signed
    C(linux-modules-nvidia-<branch>-server[-open]-<release>) when the archive has it, else DKMS. The per-flavour
    metapackage C(linux-modules-nvidia-<branch>-server[-open]-<flavour>) is added only for a kernel whose
    C(linux-image-<flavour>) metapackage is installed and only when the archive has it. On Debian it is always DKMS.
    The plan reads C(apt-cache pkgnames) and C(dpkg-query) once each.
  - Unlike C(ubuntu-drivers), the plan does not take a prebuilt module built from another driver version than the
    host's (the installed C(nvidia-kernel-common-<branch>-server), else apt's candidate), because booting it would give
    "Driver/library version mismatch". The version a prebuilt package was built from is the lower bound of its
    C(nvidia-kernel-common-<branch>-server) dependency (C(dpkg-query -s) where installed, else
    C(apt-cache show --no-all-versions)). Such a kernel gets DKMS with O(source=auto) and is refused with
    O(source=prebuilt).
  - A kernel the plan cannot serve is not a failure of the module. It is returned in RV(plan.refusals) with a message
    and a fix, for the caller to fail on.
  - Every command is killed after O(timeout) seconds.
author:
  - gpuops maintainers (@gpuops)
options:
  kernels:
    description:
      - The kernel releases to inventory and plan for, for example V(6.8.0-149-generic).
      - Empty means every bootable kernel. A release that is not bootable fails the module, naming the bootable ones.
    type: list
    elements: str
    default: []
  root:
    description:
      - The root of the tree to read, V(/) on a host, or where an image is mounted.
      - When not V(/), C(modinfo) runs with C(-b <root>), C(apt-cache) with C(-o Dir=<root>) and C(dpkg-query) with
        C(--admindir=<root>/var/lib/dpkg), and links to absolute paths in the tree resolve inside it.
      - The module's own reads of the tree resolve every component of a path inside O(root), not only the last one
        (an image's C(lib -> /usr/lib) continues in the image, C(..) stops at O(root)), so an image's kernels are never
        judged from the build host's files. A path whose links do not end (more than 40, a loop) fails the module,
        naming the path.
    type: path
    default: /
  module_names:
    description:
      - The names the NVIDIA kernel module may have, asked in this order.
      - Debian's DKMS packages name it C(nvidia-current).
    type: list
    elements: str
    default: [nvidia, nvidia-current]
  blacklist_file:
    description:
      - An absolute path in the tree, for example C(/etc/modprobe.d/gpuops-blacklist-nouveau.conf).
        initramfs-tools copies C(/etc/modprobe.d) into the image. Each kernel's initramfs is checked for
        C(etc/modprobe.d/<its name>) with the bytes the file has on disk.
      - Empty skips that check (RV(kernels[].initramfs_blacklist) is null).
    type: path
    default: ''
  branch:
    description:
      - The NVIDIA driver branch to plan for, for example V(580). Required when O(plan=true).
    type: str
  kernel_module:
    description:
      - The flavour of the kernel module, NVIDIA's proprietary one or the open one (the C(-open) packages).
    type: str
    choices: [proprietary, open]
    default: proprietary
  source:
    description:
      - V(auto) takes the prebuilt module where the archive has one and DKMS elsewhere (Ubuntu). V(prebuilt) refuses a
        kernel without a prebuilt module and V(dkms) always builds.
    type: str
    choices: [auto, prebuilt, dkms]
    default: auto
  dkms_package:
    description:
      - The DKMS package to plan with. Empty means C(nvidia-dkms-<branch>-server[-open]) on Ubuntu and
        C(nvidia-kernel-dkms) or C(nvidia-open-kernel-dkms) on Debian. Pass C(nvidia-tesla-<branch>-kernel-dkms) for
        Debian's tesla branches.
    type: str
    default: ''
  driver_version:
    description:
      - The exact driver version the host is to run, for example V(580.178.04) (the nvidia_driver role's
        C(nvidia_driver_version)). A prebuilt module built from another version is not taken.
      - Empty means the installed C(nvidia-kernel-common-<branch>-server), else apt's candidate.
    type: str
    default: ''
  plan:
    description:
      - Whether to read apt and plan the packages. V(false) only inventories, for example to verify a result.
    type: bool
    default: true
  expect_version:
    description:
      - The installed driver version, for example V(580.178.04). When set, every selected kernel's module must have it;
        a difference is a problem in RV(problems).
    type: str
    default: ''
  prebuilt_kernels:
    description:
      - Kernels whose module must carry O(prebuilt_signer)'s signature (the kernels a plan gave a prebuilt module).
    type: list
    elements: str
    default: []
  prebuilt_signer:
    description:
      - The signer of prebuilt modules, for example V(Canonical Ltd. Kernel Module Signing).
    type: str
    default: ''
  secure_boot:
    description:
      - Whether the firmware has Secure Boot on (the caller reads it with C(mokutil --sb-state) or from the SecureBoot EFI
        variable). With O(plan=true) and O(secure_boot_mode=fail), a plan that builds any kernel's module with DKMS
        while O(mok_certificate) is not enrolled (C(mokutil --test-key)) gets a refusal in RV(plan.refusals), as the
        kernel would reject the module. Canonical's prebuilt modules are signed with a key the kernel trusts.
    type: bool
    default: false
  secure_boot_mode:
    description:
      - V(fail) refuses DKMS modules whose signing key is not enrolled under Secure Boot; V(enroll) leaves that to the
        caller, which queues the key for enrollment.
    type: str
    choices: [fail, enroll]
    default: fail
  mok_certificate:
    description:
      - The certificate of the key DKMS signs modules with (Debian V(/var/lib/dkms/mok.pub), Ubuntu
        V(/var/lib/shim-signed/mok/MOK.der)). Only read with O(secure_boot=true).
    type: path
    default: /var/lib/dkms/mok.pub
  dkms_log:
    description:
      - Also read the newest DKMS build log under C(/var/lib/dkms) and return its first error line in RV(dkms_log), to
        say why a build failed.
    type: bool
    default: false
  timeout:
    description:
      - Seconds each command may run before it is killed, a positive number. C(unmkinitramfs) on a large initramfs
        is the slowest of them.
    type: int
    default: 120
extends_documentation_fragment:
  - gpuops.gpu_server.package_reader
  - gpuops.gpu_server.read_only
notes:
  - The module never reports a change. The only thing it writes is the temporary directory that an initramfs is
    extracted into, which it removes.
  - A flavour metapackage in RV(plan.metapackages) follows the archive's newest kernel ABI. Installing it also
    installs that kernel, with its module, when the host does not have it yet.
  - The plan reads apt's package lists as they are. Update them first (C(apt-get update)); with stale lists a kernel
    whose headers the archive still has can be refused as if they were gone.
  - A missing C(unmkinitramfs) (package C(initramfs-tools-core)) makes RV(kernels[].initramfs_blacklist)
    V(unreadable), with the reason; it does not fail the module.
seealso:
  - name: ubuntu-drivers (UbuntuDrivers/detect.py, get_linux_modules_metapackage)
    description: The rule the plan follows per kernel.
    link: https://github.com/canonical/ubuntu-drivers-common
  - module: gpuops.gpu_server.gpu_facts
'''

EXAMPLES = r'''
- name: Plan the NVIDIA 580 modules for every bootable kernel
  gpuops.gpu_server.nvidia_kernels:
    branch: "580"
    kernel_module: open
    blacklist_file: /etc/modprobe.d/gpuops-blacklist-nouveau.conf
  register: __nvidia_driver_kernels

- name: Refuse, naming the kernel and the fix
  ansible.builtin.fail:
    msg: "{{ item.message }} {{ item.fix }}"
  loop: "{{ __nvidia_driver_kernels.plan.refusals }}"

- name: Install what the plan names
  ansible.builtin.apt:
    name: "{{ __nvidia_driver_kernels.plan.packages + __nvidia_driver_kernels.plan.metapackages }}"

- name: Verify that every bootable kernel has the module
  gpuops.gpu_server.nvidia_kernels:
    plan: false
  register: __nvidia_driver_kernels_after

- name: Fail on a kernel without it
  ansible.builtin.assert:
    that: __nvidia_driver_kernels_after.kernels | selectattr('module', 'eq', {}) | list | length == 0
    fail_msg: "No NVIDIA module in {{ __nvidia_driver_kernels_after.kernels | selectattr('module', 'eq', {}) | map(attribute='release') | join(', ') }}"
'''

RETURN = r'''
running:
  description: The running kernel (C(uname -r)); in a container, the Docker host's.
  returned: always
  type: str
  sample: 6.8.0-149-generic
kernels:
  description: The kernels inventoried, newest first.
  returned: always
  type: list
  elements: dict
  contains:
    release: {description: The kernel release., type: str, returned: always, sample: 6.8.0-149-generic}
    flavour:
      description: The flavour the release ends with (V(generic), V(aws), V(cloud-amd64)); empty when it matches no
        Ubuntu or Debian pattern.
      type: str
      returned: always
      sample: generic
    running:
      description: Whether this is the running kernel (always false when O(root) is not V(/)).
      type: bool
      returned: always
      sample: true
    headers: {description: Whether the kernel's headers are installed (C(lib/modules/<release>/build))., type: bool, returned: always, sample: false}
    nova_core:
      description: Whether the kernel has the upstream C(nova_core) driver (kernels from 6.15 on); null when neither
        C(modules.dep), C(modules.builtin) nor C(modinfo) could answer.
      type: bool
      returned: always
      sample: false
    module:
      description: The NVIDIA module of this kernel as C(modinfo) prints it, C(filename), C(version), C(vermagic),
        C(signer) and C(sig_key) (empty strings for fields it does not print); empty when the kernel has none.
      type: dict
      returned: always
      sample: {filename: /lib/modules/6.8.0-149-generic/kernel/nvidia-580srv/nvidia.ko, version: 580.178.04,
               vermagic: 6.8.0-149-generic SMP preempt mod_unload modversions,
               signer: Canonical Ltd. Kernel Module Signing, sig_key: "E9:DF:13:0F:92:92:A9:B7"}
    initramfs:
      description: The kernel's initramfs, or null when it has none.
      type: str
      returned: always
      sample: /boot/initrd.img-6.8.0-149-generic
    initramfs_blacklist:
      description:
        - Whether the initramfs carries O(blacklist_file) with its bytes on disk. V(current) it does, V(stale) a
          copy differs (or the file is gone from disk), V(missing) no copy, V(no-initramfs) the kernel has no
          initramfs, V(unreadable) it could not be extracted or read (see RV(kernels[].initramfs_reason)).
        - Null when O(blacklist_file) is empty.
      type: str
      returned: always
      sample: current
    initramfs_reason:
      description: The sentence behind RV(kernels[].initramfs_blacklist); null when it is null.
      type: str
      returned: always
      sample: the initramfs carries etc/modprobe.d/gpuops-blacklist-nouveau.conf with the same bytes as on disk
problems:
  description:
    - One sentence per problem of the selected kernels, empty when every one passes. A kernel without an NVIDIA module,
      a module whose vermagic is another kernel's, a module of another version than O(expect_version), a prebuilt
      module not signed by O(prebuilt_signer), and an initramfs without the current blacklist.
  returned: always
  type: list
  elements: str
  sample:
    - >-
      The NVIDIA module of kernel 6.8.0-1052-aws is version 580.126.20, the installed driver 580.178.04: booting it
      would give "Driver/library version mismatch".
dkms_log:
  description: The newest DKMS build log and its first error line; empty when there is no log.
  returned: when O(dkms_log=true)
  type: dict
  contains:
    path:
      description: The log file.
      type: str
      returned: when a log exists
      sample: /var/lib/dkms/nvidia/580.178.04/build/make.log
    first_error:
      description: Its first error line, or an empty string.
      type: str
      returned: when a log exists
    kernel:
      description: The kernel release the log was written for (the log's first line), or an empty string.
      type: str
      returned: when a log exists
      sample: 6.12.118+deb12-cloud-amd64
plan:
  description: Which packages give every kernel its NVIDIA module.
  returned: when O(plan=true)
  type: dict
  contains:
    kernels:
      description: Per kernel that can have a module, how (a refused kernel is in RV(plan.refusals) instead).
      type: list
      elements: dict
      returned: always
      sample:
        - release: 6.8.0-149-generic
          source: prebuilt
          packages: [linux-modules-nvidia-580-server-6.8.0-149-generic]
          why: "linux-modules-nvidia-580-server-6.8.0-149-generic is in the archive: Canonical's prebuilt module for
            kernel 6.8.0-149-generic, signed by Canonical; linux-modules-nvidia-580-server-generic follows the
            installed linux-image-generic, so future generic kernels get their module too (the ubuntu-drivers rule)."
    packages:
      description: The union of the kernels' packages, sorted (the DKMS package and headers included).
      type: list
      elements: str
      returned: always
      sample: [linux-modules-nvidia-580-server-6.8.0-149-generic]
    metapackages:
      description:
        - The flavour metapackages that give future kernels their module (prebuilt) or headers (DKMS), as apt
          specifications. One not installed yet carries the version of the installed kernel generation
          (C(name=version)), so that installing it installs no kernel; one the archive has only for a newer
          generation is left out and named in RV(plan.notes).
      type: list
      elements: str
      returned: always
      sample: [linux-modules-nvidia-580-server-generic=6.8.0-149.149]
    metapackage_images:
      description: For each flavour metapackage, the installed linux-image metapackage it follows.
      type: dict
      returned: when a metapackage is planned
      sample: {linux-modules-nvidia-580-server-generic: linux-image-generic}
    notes:
      description: Sentences about what the plan left out and why (a flavour metapackage of a newer generation only).
      type: list
      elements: str
      returned: always
    dkms_package:
      description: The DKMS package when a kernel needs it, else empty.
      type: str
      returned: always
      sample: ''
    driver_version:
      description: The driver version the prebuilt modules were judged against (O(driver_version), else the installed
        C(nvidia-kernel-common-<branch>-server), else apt's candidate); empty on Debian, with O(source=dkms), or when
        the archive has no prebuilt module for the kernels.
      type: str
      returned: always
      sample: 580.196.07-0ubuntu0.24.04.1
    prebuilt_built_with:
      description: For each prebuilt module package of the kernels, the driver version it was built from (empty when
        its dependencies do not say).
      type: dict
      returned: always
      sample: {linux-modules-nvidia-580-server-6.8.0-149-generic: 580.178.04}
    refusals:
      description: The kernels the plan cannot serve, each with C(kernel) (empty when it is about no single kernel),
        C(message) and C(fix), plain ASCII sentences naming the variable to change.
      type: list
      elements: dict
      returned: always
      sample:
        - kernel: 6.8.0-1052-aws
          message: "Kernel 6.8.0-1052-aws (flavour aws) has no prebuilt NVIDIA 590 module: ..."
          fix: Set nvidia_driver_branch to one of 580, 570, or set nvidia_driver_module_source to dkms (or auto) ...
'''

import os
import re
import shutil
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _boot_kernels
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _deb_control
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _dkms
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _image_tree
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _initramfs
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_plan
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_release
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _modinfo

_MODULE_NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}\Z')
_MODULE_FIELDS = ('filename', 'version', 'vermagic', 'signer', 'sig_key')
# What each command may print: modinfo a few KiB, the package lists a few MiB.
_SMALL_OUTPUT = 1024 * 1024
_LIST_OUTPUT = 32 * 1024 * 1024


class Host(object):
    """The module's reads of the tree at ``root``, each command time-bound through _command.run."""

    def __init__(self, module):
        self.module = module
        self.root = module.params['root']
        self.timeout = module.params['timeout']
        self._modinfo = None

    def run(self, argv, what, ok=(0,), max_bytes=_SMALL_OUTPUT, fail=True):
        """Run ARGV (time- and size-bound through _command.run) and return ``(rc, out, err, problem)``.

        ``problem`` is None when the command answered with an exit code that ``ok`` accepts (a tuple of codes, a
        function of the code and stderr, or None for any code); otherwise it is the message: the CommandError of a
        command that could not answer, or _command.failure_message of a refused exit code. With ``fail`` the
        module ends there instead, with "WHAT: <the CommandError>" or the failure_message. The one place that
        handles a failed command of this module.
        """
        try:
            rc, out, err = _command.run(argv, timeout=self.timeout, max_bytes=max_bytes)
        except _command.CommandError as e:
            if fail:
                self.module.fail_json(msg='%s: %s' % (what, e))
            return None, '', '', str(e)
        accepted = ok is None or (ok(rc, err) if callable(ok) else rc in ok)
        problem = None if accepted else _command.failure_message(argv, rc, err, out)
        if problem and fail:
            self.module.fail_json(msg=problem)
        return rc, out, err, problem

    def mok_test_key(self, certificate):
        """What ``mokutil --test-key CERTIFICATE`` prints; '' when the certificate or mokutil is missing."""
        mokutil = self.module.get_bin_path('mokutil')
        if not mokutil or not os.path.isfile(certificate):
            return ''
        # Its exit code is not judged: it exits non-zero for "not enrolled" as for errors; its words are the answer.
        _rc, out, err, _problem = self.run([mokutil, '--test-key', certificate],
                                           'asking mokutil whether %s is enrolled' % certificate, ok=None)
        return (out or '') + (err or '')

    def modinfo_argv(self, release, name):
        if self._modinfo is None:
            self._modinfo = self.module.get_bin_path('modinfo') or ''
            if not self._modinfo:
                self.module.fail_json(msg='modinfo was not found on PATH or in /sbin (install kmod)')
        argv = [self._modinfo]
        if self.root != '/':
            argv += ['-b', self.root]
        return argv + ['-k', release, name]

    def nvidia_module(self, release):
        for name in self.module.params['module_names']:
            # An exit code other than 0 is kmod's "not found": no module by this name.
            rc, out, _err, _problem = self.run(self.modinfo_argv(release, name),
                                               'reading the NVIDIA module of kernel %s' % release, ok=None)
            fields = _modinfo.parse_modinfo(out) if rc == 0 else {}
            if fields.get('filename'):
                return dict((k, fields.get(k, '')) for k in _MODULE_FIELDS)
        return {}

    def nova_core(self, release):
        listed = _boot_kernels.module_listed(self.root, release, 'nova_core')
        if listed is not None:
            return listed
        rc, _out, _err, problem = self.run(self.modinfo_argv(release, 'nova_core'), 'asking modinfo for nova_core',
                                           ok=None, fail=False)
        return None if problem else rc == 0

    def initramfs(self, release, blacklist_file, on_disk, disk_reason):
        image = _image_tree.resolve_in_root(self.root, os.path.join(self.root, 'boot', 'initrd.img-' + release))
        shown = '/boot/initrd.img-' + release if self.root == '/' else image
        if not os.path.isfile(image):
            if not blacklist_file:
                return None, None, None
            return None, 'no-initramfs', 'kernel %s has no initramfs (%s)' % (release, shown)
        if not blacklist_file:
            return shown, None, None
        if disk_reason:
            return shown, 'unreadable', disk_reason
        tool = self.module.get_bin_path('unmkinitramfs')
        if not tool:
            return shown, 'unreadable', 'unmkinitramfs was not found (install initramfs-tools-core)'
        tree = tempfile.mkdtemp(prefix='gpuops-initramfs-')
        try:
            _rc, _out, _err, problem = self.run([tool, image, tree], 'extracting %s' % shown, fail=False)
            if problem:
                return shown, 'unreadable', problem
            state, reason = _initramfs.blacklist_state(tree, os.path.basename(blacklist_file), on_disk)
            return shown, state, reason
        finally:
            _remove_tree(tree)

    def dpkg_query_argv(self, args):
        dpkg_query = self.module.get_bin_path('dpkg-query')
        if not dpkg_query:
            self.module.fail_json(msg='dpkg-query was not found: the plan needs dpkg (run with plan=false to only '
                                      'inventory the kernels)')
        argv = [dpkg_query]
        if self.root != '/':
            argv.append('--admindir=' + _image_tree.resolve_in_root(self.root, os.path.join(self.root, 'var/lib/dpkg')))
        return argv + list(args)

    def apt_cache_argv(self, args):
        apt_cache = self.module.get_bin_path('apt-cache')
        if not apt_cache:
            self.module.fail_json(msg='apt-cache was not found: the plan needs apt (run with plan=false to only '
                                      'inventory the kernels)')
        return [apt_cache] + (['-o', 'Dir=' + self.root] if self.root != '/' else []) + list(args)

    def installed_versions(self):
        """The installed kernel, headers and NVIDIA modules packages with their versions."""
        argv = self.dpkg_query_argv(['-W', '-f', '${Package}\\t${Status}\\t${Version}\\n', 'linux-image-*',
                                     'linux-headers-*', 'linux-modules-nvidia-*'])
        # dpkg-query exits 1 when a pattern matches nothing; what it printed is still the answer.
        _rc, out, _err, _problem = self.run(argv, 'reading the installed kernel packages', ok=(0, 1),
                                            max_bytes=_LIST_OUTPUT)
        return _deb_control.installed_versions(out)

    def madison(self, names):
        """The versions apt offers for NAMES (apt-cache madison)."""
        argv = self.apt_cache_argv(['madison'] + [n.split('=', 1)[0] for n in names])
        _rc, out, _err, _problem = self.run(argv, 'reading the versions of %s' % ', '.join(names),
                                            max_bytes=_LIST_OUTPUT)
        return _deb_control.parse_madison(out)

    def control(self, names, installed):
        """``parse_control`` of NAMES as installed (dpkg-query -s) or as apt's candidates (apt-cache show
        --no-all-versions)."""
        if not names:
            return {}
        if installed:
            argv = self.dpkg_query_argv(['-s'] + list(names))
        else:
            argv = self.apt_cache_argv(['show', '--no-all-versions'] + list(names))
        # dpkg-query -s exits 1 when a package is not installed; it still prints the installed ones.
        _rc, out, _err, _problem = self.run(argv, 'reading the control data of %s' % ', '.join(names),
                                            ok=(0, 1) if installed else (0,), max_bytes=_LIST_OUTPUT)
        return _deb_control.parse_control(out)

    def prebuilt_versions(self, releases, known):
        """The driver version the host has (or gets) and the driver version each of Canonical's prebuilt module
        packages for RELEASES was built from (``_deb_control.driver_versions``); nothing to judge on Debian, with
        source=dkms, or when the archive has no prebuilt package for these kernels."""
        p = self.module.params
        prebuilt = [n for n in (_kernel_plan.prebuilt_package(p['branch'], p['kernel_module'], r) for r in releases)
                    if n in known]
        if not prebuilt or p['source'] == 'dkms':
            return '', {}
        common = 'nvidia-kernel-common-%s-server' % p['branch']
        names = prebuilt + [common]
        version, built = _deb_control.driver_versions(self.control(names, True),
                                                      self.control([n for n in names if n in known], False),
                                                      common, prebuilt, p['branch'])
        return p['driver_version'] or version, built

    def family(self):
        for path in ('etc/os-release', 'usr/lib/os-release'):
            data, _reason = _image_tree.read_bounded(
                _image_tree.resolve_in_root(self.root, os.path.join(self.root, path)), _kernel_plan.MAX_OS_RELEASE_BYTES)
            if data is not None:
                return _kernel_plan.os_family(data)
        return ''

    def known_packages(self):
        _rc, out, _err, _problem = self.run(self.apt_cache_argv(['pkgnames']), 'reading the package names apt knows',
                                            max_bytes=_LIST_OUTPUT)
        return _deb_control.package_names(out)

    def image_metapackages(self, releases):
        argv = self.dpkg_query_argv(['-W', '-f', '${Package}\\t${Status}\\t${Depends}\\n', 'linux-image-*'])
        # dpkg-query -W exits 1 when no installed or known package matches the pattern: no metapackage.
        rc, out, _err, _problem = self.run(argv, 'reading the installed linux-image packages',
                                           ok=lambda code, stderr: code == 0 or (code == 1 and 'no packages found' in stderr),
                                           max_bytes=_LIST_OUTPUT)
        if rc == 1:
            return {}
        return _deb_control.image_metapackages(out, releases)


def _remove_tree(tree):
    """Remove the extraction directory; an image can hold directories without write or search permission, which
    are opened up (top down, before the walk enters them) first."""
    for dirpath, dirnames, _filenames in os.walk(tree):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                try:
                    os.chmod(path, stat.S_IRWXU)
                except OSError:
                    pass
    shutil.rmtree(tree, ignore_errors=True)


def check_params(module):
    p = module.params
    if p['timeout'] < 1:
        module.fail_json(msg='timeout must be a positive number, got %s' % p['timeout'])
    if not os.path.isdir(p['root']):
        module.fail_json(msg='root %s is not a directory' % p['root'])
    p['root'] = os.path.abspath(p['root'])
    if not p['module_names']:
        module.fail_json(msg='module_names must name at least one module, for example nvidia')
    for name in p['module_names']:
        if not _MODULE_NAME.match(name):
            module.fail_json(msg='module_names: %r is not a kernel module name' % (name,))
    if p['blacklist_file'] and not os.path.isabs(p['blacklist_file']):
        module.fail_json(msg='blacklist_file must be an absolute path, got %r' % (p['blacklist_file'],))
    if p['plan']:
        if not p['branch']:
            module.fail_json(msg='branch is required when plan is true, for example 580')
        try:
            _kernel_plan.check_plan_arguments('Ubuntu', p['branch'], p['kernel_module'], p['source'], p['dkms_package'])
        except ValueError as e:
            module.fail_json(msg=str(e))


def select_kernels(module, bootable):
    requested = module.params['kernels']
    if not requested:
        return bootable
    not_bootable = [k for k in requested if k not in bootable]
    if not_bootable:
        module.fail_json(msg='kernels: %s %s not bootable in %s (no boot/vmlinuz-<release> with its '
                             'lib/modules/<release> directory); the bootable kernels are: %s' % (
                                 ', '.join(repr(k) for k in not_bootable), 'is' if len(not_bootable) == 1 else 'are',
                                 module.params['root'], ', '.join(bootable) or 'none'))
    return _kernel_release.newest_first(set(requested))


def read_blacklist(root, blacklist_file):
    """The bytes of the blacklist file on disk (None when absent) and a reason when it cannot be read."""
    if not blacklist_file:
        return None, None
    path = _image_tree.resolve_in_root(root, os.path.join(root, blacklist_file.lstrip('/')))
    return _image_tree.read_bounded(path, _initramfs.MAX_CONFIG_BYTES)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            kernels=dict(type='list', elements='str', default=[]),
            root=dict(type='path', default='/'),
            module_names=dict(type='list', elements='str', default=['nvidia', 'nvidia-current']),
            blacklist_file=dict(type='path', default=''),
            branch=dict(type='str'),
            kernel_module=dict(type='str', default='proprietary', choices=['proprietary', 'open']),
            source=dict(type='str', default='auto', choices=['auto', 'prebuilt', 'dkms']),
            dkms_package=dict(type='str', default=''),
            driver_version=dict(type='str', default=''),
            plan=dict(type='bool', default=True),
            timeout=dict(type='int', default=120),
            expect_version=dict(type='str', default=''),
            prebuilt_kernels=dict(type='list', elements='str', default=[]),
            prebuilt_signer=dict(type='str', default=''),
            dkms_log=dict(type='bool', default=False),
            secure_boot=dict(type='bool', default=False),
            secure_boot_mode=dict(type='str', default='fail', choices=['fail', 'enroll']),
            mok_certificate=dict(type='path', default='/var/lib/dkms/mok.pub'),
        ),
        required_if=[('plan', True, ['branch'])],
        supports_check_mode=True,
    )
    check_params(module)
    try:
        module.exit_json(**inventory(module))
    except _image_tree.PathRefused as e:
        module.fail_json(msg='root %s: %s; fix or remove the link in the tree' % (module.params['root'], e))


def inventory(module):
    """The kernels of the tree at root, their problems, and the plan (the module's result)."""
    p = module.params
    host = Host(module)
    running = os.uname()[2]
    selected = select_kernels(module, _boot_kernels.bootable_kernels(p['root']))
    on_disk, disk_reason = read_blacklist(p['root'], p['blacklist_file'])
    kernels = []
    for release in selected:
        image, state, reason = host.initramfs(release, p['blacklist_file'], on_disk, disk_reason)
        kernels.append(dict(
            release=release,
            flavour=_kernel_release.kernel_flavour(release),
            running=p['root'] == '/' and release == running,
            headers=_boot_kernels.headers_installed(p['root'], release),
            nova_core=host.nova_core(release),
            module=host.nvidia_module(release),
            initramfs=image,
            initramfs_blacklist=state,
            initramfs_reason=reason,
        ))
    result = dict(changed=False, running=running, kernels=kernels,
                  problems=_modinfo.check(kernels, p['expect_version'], p['prebuilt_kernels'], p['prebuilt_signer']))
    if p['dkms_log']:
        log = _dkms.newest_build_log(p['root'])
        text, _reason = _image_tree.read_bounded(log, _dkms.MAX_BUILD_LOG_BYTES) if log else (None, None)
        text = text.decode('utf-8', 'replace') if isinstance(text, bytes) else text or ''
        result['dkms_log'] = dict(path=log, first_error=_dkms.first_build_error(text),
                                  kernel=_dkms.build_log_kernel(text)) if log else {}
    if p['plan']:
        family = host.family()
        known, metas, driver_version, built = set(), {}, '', {}
        if family in _kernel_plan.FAMILIES and kernels:
            known = host.known_packages()
            metas = host.image_metapackages(selected)
            if family == 'Ubuntu':
                driver_version, built = host.prebuilt_versions(selected, known)
        result['plan'] = _kernel_plan.plan(
            [dict(release=k['release'], running=k['running'], headers_installed=k['headers']) for k in kernels],
            family, p['branch'], p['kernel_module'], p['source'], known, metas, dkms_package=p['dkms_package'],
            driver_version=driver_version, prebuilt_built_with=built)
        result['plan']['driver_version'] = driver_version
        result['plan']['prebuilt_built_with'] = built
        if result['plan']['metapackages']:
            result['plan'] = _kernel_plan.pin_metapackages(
                result['plan'], host.installed_versions(), host.madison(result['plan']['metapackages']))
        if p['secure_boot']:
            refusal = _kernel_plan.secure_boot_refusal(result['plan']['kernels'], True, p['secure_boot_mode'],
                                                       p['mok_certificate'], host.mok_test_key(p['mok_certificate']))
            if refusal:
                result['plan']['refusals'].append(refusal)
    return result


if __name__ == '__main__':
    main()
