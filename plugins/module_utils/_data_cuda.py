# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Data: CUDA releases and the drivers that run them, NVIDIA driver branches. Literals only, one row per line.

The logic that reads these tables lives in _compat_cuda.py and _compat_gpu.py; tests/unit/plugins/module_utils/test_data.py checks every row.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# Source: NVIDIA CUDA Toolkit Release Notes, table "CUDA Toolkit and Corresponding Driver Versions"
# (https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#id5, and the release notes of
# each version under https://docs.nvidia.com/cuda/archive/), Linux x86_64 column, "Toolkit Driver
# Version". One row per row of NVIDIA's table, spelled as NVIDIA spells it: (CUDA major.minor, release,
# minimum driver). The release is "GA" or "Update N" ("RC" only for 11.0.1). Adding a CUDA release is
# adding its row here.
# 13.0 Update 2 .. 13.3 Update 1: the CUDA 13.3 Update 1 release notes' table. CUDA 13.4 and 13.5 are
# published, but from 13.4 on the Linux driver is no longer bundled with the toolkit and the table's
# Linux value for them could not be verified here: they are left out until someone reads it. Whoever adds
# them: NVIDIA versions the 13.4 GA release 13.4.1 ("the third digit is a build number and does not indicate an
# update release", https://docs.nvidia.com/cuda/archive/13.4.1/cuda-toolkit-release-notes/index.html) and 13.4
# Update 1 13.4.2, so from 13.4 on X.Y.U no longer spells "Update U" (see _compat_versions.parse_cuda).
# 13.3 GA and 13.3 Update 1 both list 610.43.02 (checked again 2026-12-03): Update 1 shipped no new
# driver, NVIDIA's own installers bundle the same one, cuda_13.3.0_610.43.02_linux.run and
# https://developer.download.nvidia.com/compute/cuda/13.3.1/local_installers/cuda_13.3.1_610.43.02_linux.run
# (the installer name carries the bundled driver, as it did for every release up to 13.3.1).
CUDA_RELEASES = (
    ('9.0', 'GA', '384.81'),
    ('9.1', 'GA', '390.46'),
    ('9.2', 'GA', '396.26'),
    ('9.2', 'Update 1', '396.37'),      # 9.2.148 Update 1
    ('10.0', 'GA', '410.48'),
    ('10.1', 'GA', '418.39'),
    ('10.2', 'GA', '440.33'),
    ('11.0', 'RC', '450.36.06'),        # 11.0.1 RC; treated as the 11.0 floor
    ('11.0', 'Update 2', '450.51.05'),  # 11.0.2 GA
    ('11.0', 'Update 3', '450.51.06'),  # 11.0.3 Update 1
    ('11.1', 'GA', '455.23'),
    ('11.1', 'Update 1', '455.32'),
    ('11.2', 'GA', '460.27.03'),
    ('11.2', 'Update 1', '460.32.03'),
    ('11.3', 'GA', '465.19.01'),
    ('11.4', 'GA', '470.42.01'),
    ('11.4', 'Update 1', '470.57.02'),
    ('11.4', 'Update 3', '470.82.01'),
    ('11.5', 'GA', '495.29.05'),
    ('11.6', 'GA', '510.39.01'),
    ('11.6', 'Update 1', '510.47.03'),
    ('11.7', 'GA', '515.43.04'),
    ('11.7', 'Update 1', '515.48.07'),
    ('11.8', 'GA', '520.61.05'),
    ('12.0', 'GA', '525.60.13'),
    ('12.0', 'Update 1', '525.85.12'),
    ('12.1', 'GA', '530.30.02'),
    ('12.2', 'GA', '535.54.03'),
    ('12.2', 'Update 1', '535.86.09'),
    ('12.2', 'Update 2', '535.104.05'),
    ('12.3', 'GA', '545.23.06'),
    ('12.3', 'Update 1', '545.23.08'),
    ('12.4', 'GA', '550.54.14'),
    ('12.4', 'Update 1', '550.54.15'),
    ('12.5', 'GA', '555.42.02'),
    ('12.5', 'Update 1', '555.42.06'),
    ('12.6', 'GA', '560.28.03'),
    ('12.6', 'Update 1', '560.35.03'),
    ('12.6', 'Update 3', '560.35.05'),
    ('12.8', 'GA', '570.26'),
    ('12.8', 'Update 1', '570.124.06'),
    ('12.9', 'GA', '575.51.03'),
    ('12.9', 'Update 1', '575.57.08'),
    ('13.0', 'GA', '580.65.06'),
    ('13.0', 'Update 1', '580.82.07'),
    ('13.0', 'Update 2', '580.95.05'),
    ('13.1', 'GA', '590.44.01'),
    ('13.1', 'Update 1', '590.48.01'),
    ('13.2', 'GA', '595.45.04'),
    ('13.2', 'Update 1', '595.58.03'),
    ('13.3', 'GA', '610.43.02'),
    ('13.3', 'Update 1', '610.43.02'),
)

# Source: CUDA Compatibility guide, "Minor Version Compatibility", Table "CUDA Toolkit 11.x, 12.x and
# 13.x Driver Version Ranges" (https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html).
# 11.x: 450.80.02 (the note under that table: 11.0 shipped with an older driver, minor version
# compatibility across 11.x needs 450.80.02); 12.x: >= 525 (525.60.13 is the first 525 release the
# release notes list); 13.x: >= 580 (580.65.06 is the first public 580 release, shipped with 13.0).
CUDA_MINOR_COMPAT_MIN_DRIVER = {
    11: '450.80.02',
    12: '525.60.13',
    13: '580.65.06',
}

# Source: same guide, "Limitations" of minor version compatibility.
MINOR_COMPAT_LIMITS = (
    'PTX built by a newer toolkit than the driver supports cannot be JIT-compiled by the driver: '
    'applications must ship SASS (cubins) for the GPU, or compile PTX with nvJitLink/nvPTXCompiler',
    'APIs and features introduced after the driver\'s CUDA version return '
    'cudaErrorCallRequiresNewerDriver (CUDA_ERROR_NOT_SUPPORTED at driver level)',
    'the driver stays the one installed: fixes and features of the newer driver are not available',
)

# The first open kernel module release (R515, "NVIDIA Releases Open-Source GPU Kernel Modules", May 2022).
OPEN_KERNEL_MODULE_MIN_BRANCH = 515

# The first branch without proprietary kernel modules: NVIDIA Driver Installation Guide, Release 620 (Nov 09, 2026),
# "Recent Updates: Proprietary Kernel Modules Removed", and its "Kernel Modules" page, which lists the open flavour
# only (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/620/kernel-modules.html). The Release 615
# guide still has "Proprietary GPU Kernel Modules Installation"
# (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/615/pdf/Driver_Installation_Guide.pdf).
PROPRIETARY_KERNEL_MODULE_END_BRANCH = 620

# Datacenter branches, long-term support first (https://docs.nvidia.com/datacenter/tesla/drivers/,
# "Supported Drivers and CUDA Toolkit Versions" and the lifecycle page): R470, R535, R580 are LTSB.
LTS_BRANCHES = (470, 535, 580)
# Every branch NVIDIA published, oldest first; the newest is the newest a preflight accepts without
# nvidia_driver_allow_unknown_branch. 450 .. 610: the driver release notes and the CUDA table above.
# 615: NVIDIA's driver redistributable manifests redistrib_615.71.09.json (2026-09-09) and
# redistrib_615.71.10.json (2026-10-19) under https://developer.download.nvidia.com/compute/nvidia-driver/redist/,
# and the Driver Installation Guide, Release 615 (Sep 09, 2026); Ubuntu ships it as
# nvidia-graphics-drivers-615[-server] 615.71.09 (jammy, noble and resolute -updates, multiverse).
# 620: redistrib_620.70.06.json (release date 2026-11-04; its CUDA forward compatibility package is for
# CUDA 13.5) and the Driver Installation Guide, Release 620 (Nov 09, 2026).
# Left out: 616, which third-party notes call the developer driver of CUDA 13.4 (">= 616.00"): no NVIDIA
# page or manifest for it could be read here.
KNOWN_BRANCHES = (450, 460, 470, 510, 515, 520, 525, 530, 535, 545, 550, 555, 560, 565, 570, 575, 580, 590, 595, 610, 615, 620)
