# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Data: where ROCm's user space comes from on each platform, and the GPU (gfx) targets its libraries carry code
objects for. Literals only, one row per line.

The logic that reads these tables lives in _rocm_compat.py; tests/unit/plugins/module_utils/test_rocm_compat.py checks
every row.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# A ROCm library (rocBLAS, RCCL, hipBLASLt ...) carries one code object per GPU target it was built for; HIP loads
# the one whose target is the GPU's exactly, and a GPU whose target is not among them gets "hipErrorNoBinaryForGpu"
# (ROCm documentation, "LLVM target names"/"GPU architecture specifications": a code object runs only on its own
# target unless it was built for a generic target, and none of the builds below is). rocBLAS, the base of every
# higher ROCm library in the archives, is the witness: its TensileLibrary files are named per target.
#
# One row per platform whose archive carries ROCm, and one for AMD's repository:
# (source key, how a message names it, the ROCm library that carries the code objects and its version,
#  the gfx targets of that library's code objects, or None where the source carries no ROCm library at all).
#
# Distribution rows: checked on 2026-12-07 in the collection's test images (tests/images/build.sh, archives as of that
# day) with `apt-get download <library>` and `dpkg-deb -c <library>.deb`, reading the gfx targets from the names of
# the files under the library's rocblas/library/ directory (TensileLibrary_*_gfxNNN.co and .hsaco):
# - Debian 12 (bookworm): rocminfo, rocm-smi, hipcc and libamdhip64-5 5.2.3, libhsa-runtime64-1 5.2.3-3; no rocBLAS,
#   RCCL or hipBLAS package at all (apt-cache search), so no library carries a code object.
# - Debian 13 (trixie): librocblas0 5.5.1+dfsg-7; targets as issue 55 lists them and as the package's files show:
#   gfx803, gfx900, gfx906, gfx908, gfx90a, gfx1010, gfx1030, gfx1100, gfx1101, gfx1102.
# - Ubuntu 22.04 (jammy): rocminfo 5.0.0-1 and libhsa-runtime64-1 only; no rocBLAS.
# - Ubuntu 24.04 (noble): librocblas0 5.5.1+dfsg-5 (Debian's package rebuilt): the same ten targets as Debian 13.
# - Ubuntu 26.04 (resolute): librocblas5 7.1.0-1ubuntu4: gfx908, gfx90a, gfx942, gfx1030, gfx1100, gfx1101, gfx1151,
#   gfx1200, gfx1201. No gfx950 (MI350X/MI355X).
# AMD's repository (repo.radeon.com/rocm/apt/7.x): the GPUs AMD supports with ROCm 7 on Linux, "System requirements
# (Linux)", table "Supported GPUs", column "LLVM target"
# (https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html, read
# 2026-12-07): Instinct
# MI355X/MI350X gfx950, MI325X/MI300X/MI300A gfx942, MI250X/MI250/MI210 gfx90a, MI100 gfx908; Radeon gfx1201,
# gfx1200, gfx1101, gfx1100, gfx1030. Not read from AMD's packages here (no AMD repository is reachable from the test
# machines): a row of what AMD supports, which is the set its libraries are built for.
ROCM_SOURCES = (
    ('debian12', "Debian 12's distribution ROCm", 'none (rocminfo, rocm-smi, hipcc 5.2.3 only)', None),
    ('debian13', "Debian 13's distribution ROCm", 'librocblas0 5.5.1',
     ('gfx803', 'gfx900', 'gfx906', 'gfx908', 'gfx90a', 'gfx1010', 'gfx1030', 'gfx1100', 'gfx1101', 'gfx1102')),
    ('ubuntu2204', "Ubuntu 22.04's distribution ROCm", 'none (rocminfo 5.0.0 only)', None),
    ('ubuntu2404', "Ubuntu 24.04's distribution ROCm", 'librocblas0 5.5.1',
     ('gfx803', 'gfx900', 'gfx906', 'gfx908', 'gfx90a', 'gfx1010', 'gfx1030', 'gfx1100', 'gfx1101', 'gfx1102')),
    ('ubuntu2604', "Ubuntu 26.04's distribution ROCm", 'librocblas5 7.1.0',
     ('gfx908', 'gfx90a', 'gfx942', 'gfx1030', 'gfx1100', 'gfx1101', 'gfx1151', 'gfx1200', 'gfx1201')),
    ('amd', "AMD's ROCm 7 repository", 'rocBLAS of ROCm 7',
     ('gfx908', 'gfx90a', 'gfx942', 'gfx950', 'gfx1030', 'gfx1100', 'gfx1101', 'gfx1200', 'gfx1201')),
)

# Platform (distribution name, release as Ansible's facts spell it: Debian's major version, Ubuntu's YY.MM) -> the
# ROCM_SOURCES key of its archive.
DISTRIBUTION_SOURCES = {
    ('Debian', '12'): 'debian12',
    ('Debian', '13'): 'debian13',
    ('Ubuntu', '22.04'): 'ubuntu2204',
    ('Ubuntu', '24.04'): 'ubuntu2404',
    ('Ubuntu', '26.04'): 'ubuntu2604',
}

# The packages of the distribution's ROCm that the rocm role installs, per source: the runtime and tools the archive
# has (package names from `apt-cache policy` in the same images, 2026-12-07) plus the library whose targets are above.
DISTRIBUTION_PACKAGES = {
    'debian13': ('rocminfo', 'rocm-smi', 'amd-smi', 'libamdhip64-5', 'libhsa-runtime64-1', 'librocblas0', 'librccl1'),
    'ubuntu2404': ('rocminfo', 'rocm-smi', 'libamdhip64-5', 'libhsa-runtime64-1', 'librocblas0', 'librccl1'),
    'ubuntu2604': ('rocminfo', 'rocm-smi', 'amd-smi', 'libamdhip64-7', 'libhsa-runtime64-1', 'librocblas5',
                   'librccl1'),
}
