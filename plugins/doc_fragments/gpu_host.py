# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    """The options and attributes of the modules that read the host's GPUs (module_utils/_module.py)."""

    # gpu_facts, gpu_health and cuda_compat read the host through the same options.
    DOCUMENTATION = r'''
options:
  nvidia_smi_path:
    description:
      - Path to the C(nvidia-smi) executable.
      - By default it is looked up on E(PATH) and in the usual sbin directories.
    type: path
  timeout:
    description:
      - Seconds to wait for nvidia-smi (and for each kernel log reader) before killing it and failing.
      - A hung nvidia-smi usually means a sick GPU or a stuck driver.
      - A hard limit, a positive number. At the deadline the command and everything it started are killed, even a
        child that left its process group and keeps the output open. A command that prints more than 64 MiB is
        killed as well and the task fails.
    type: int
    default: 30
  sysfs_root:
    description:
      - Where sysfs is mounted. The PCI devices are read from C(<sysfs_root>/bus/pci/devices).
      - Meant for tests that point at a recorded sysfs tree; leave the default on real hosts.
    type: path
    default: /sys
'''

    # What the modules read (the check-mode and diff attributes: the read_only fragment).
    PLATFORM = r'''
attributes:
  platform:
    support: full
    platforms: posix
    description: Runs on Linux hosts (reads sysfs, nvidia-smi and the kernel log).
'''
