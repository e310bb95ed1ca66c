# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    """The platform attribute of the modules that read a Debian or Ubuntu host's kernels and packages (nvidia_kernels,
    kernel_updates)."""

    DOCUMENTATION = r'''
attributes:
  platform:
    support: full
    platforms: posix
    description: Debian and Ubuntu hosts and images (dpkg and apt; initramfs-tools for the initramfs checks).
'''
