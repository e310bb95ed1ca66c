# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    """The options and attributes of the modules that read the host's AMD GPUs (module_utils/_amd_facts.py)."""

    # amd_gpu_facts and amd_gpu_health read the host through the same options.
    DOCUMENTATION = r'''
options:
  amd_smi_path:
    description:
      - Path to the C(amd-smi) executable. By default it is looked up on E(PATH) and in C(/opt/rocm/bin).
    type: path
  rocm_smi_path:
    description:
      - Path to the C(rocm-smi) executable. By default it is looked up on E(PATH) and in C(/opt/rocm/bin).
    type: path
  sysfs_root:
    description:
      - Where sysfs is mounted. The GPUs are read from C(<sysfs_root>/class/drm/card*/device).
      - Meant for tests that point at a built sysfs tree; leave the default on real hosts.
    type: path
    default: /sys
  timeout:
    description:
      - Seconds to wait for each amd-smi or rocm-smi command before killing it and failing. A positive number.
    type: int
    default: 30
'''

    # What the modules read (the check-mode and diff attributes: the read_only fragment).
    PLATFORM = r'''
attributes:
  platform:
    support: full
    platforms: posix
    description: Runs on Linux hosts (reads sysfs, amd-smi and rocm-smi).
'''
