# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    """The check-mode and diff attributes of every module that only reads the host. Each module's platform attribute
    (what it reads) comes from its host fragment: gpu_host.platform, amd_host.platform or package_reader."""

    DOCUMENTATION = r'''
attributes:
  check_mode:
    support: full
    description: The module only reads the host; it runs the same way in check mode.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to diff.
'''
