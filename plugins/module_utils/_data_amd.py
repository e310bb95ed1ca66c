# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Data: AMD Instinct GPUs, their PCI device ids, gfx targets, memory, bandwidth and XGMI links. Literals only, one row
per line.

The lookups over these tables live in _amd_gpu.py; tests/unit/plugins/module_utils/test_data_amd.py checks every row.
A figure no source gives is None, never a guess.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# PCI vendor id of AMD/ATI GPUs. Source: The PCI ID Repository (https://pci-ids.ucw.cz/read/PC/1002), "Advanced Micro
# Devices, Inc. [AMD/ATI]".
AMD_PCI_VENDOR = '1002'

# One row per Instinct model, oldest first:
# (model, architecture, gfx target (LLVM target name), GPUs per package, memory GiB per package,
#  peak memory bandwidth GB/s (10^9 bytes per second) per package, AMD Infinity Fabric (XGMI) links per package).
#
# architecture, gfx target and memory: ROCm documentation, "Accelerator and GPU hardware specifications"
# (ROCm/ROCm docs/reference/gpu-arch-specs.rst at commit e396b4898f459db094bfd60b876f419f77eb9f09, table
# instinct-arch-spec-table: columns "Architecture", "LLVM target name", "VRAM (GiB)"). The table gives memory in GiB:
# so does this column.
# GPUs per package: an MI250 or MI250X OAM holds two graphics compute dies (GCDs), "each of which constitutes one GPU
# device in the system" (ROCm/ROCm docs/conceptual/gpu-arch/mi250.md, "Dual-GCD architecture"): each GCD is a PCI
# function of its own, with its own PCIe link, and amd-smi/rocm-smi list it as a GPU. The others are one GPU each
# (same table: one compute-unit count without "per GCD").
# bandwidth and links, per row:
# - MI100: "peak memory bandwidth of the attached HBM2 is 1.228 TB/sec" (ROCm/ROCm docs/conceptual/gpu-arch/mi100.md);
#   three Infinity Fabric links: AMD's launch specifications as tabled by AnandTech, "AMD Releases Instinct MI210
#   Accelerator: CDNA 2 On a PCIe Card" (2022-03-22, row "Infinity Fabric Links": MI250 6, MI210 3, MI100 3); the
#   ROCm MI100 page describes the matching "hive of four accelerators" that is fully connected (three peers each).
# - MI210: 1.6 TB/s and 3 Infinity Fabric links (the same AnandTech table of AMD's specifications).
# - MI250: 3.2 TB/s per OAM, 1.6 TB/s per GCD (ROCm mi250.md, "aggregated peak memory bandwidth of the GPU is
#   3.2 TB/sec (1.6 TB/sec per GCD)"); 6 Infinity Fabric links (AnandTech table above).
# - MI250X: 3.2 TB/s ("128GB of HBM2e memory (total bandwidth 3.2 TB/s)", AMD's MI200 announcement as reported by
#   meterpreter.org, "AMD releases Instinct MI200 series computing cards", 2021-11); the MI250X and MI250 share the
#   memory system (ROCm mi250.md). Its link count: None (the same report says "up to 8" for the MI200 series, which
#   is not a count for this model).
# - MI300X: "theoretical aggregated peak memory bandwidth of the GPU is 5.3 TB per second"; "seven high-bandwidth,
#   low-latency AMD Infinity Fabric links ... to form a fully connected 8-GPU system" (ROCm/ROCm
#   docs/conceptual/gpu-arch/mi300.md).
# - MI300A: bandwidth and links None (not given by the ROCm pages read here).
# - MI325X: "6 TB/s of peak memory bandwidth" and "Seven Infinity Fabric links ensuring full connectivity between
#   eight GPUs": AMD's MI325X accelerator and platform text
#   (https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html), as a reseller reproduces it (wiaix.com,
#   "AMD Instinct MI325X Accelerators").
INSTINCT_MODELS = (
    ('MI100', 'CDNA', 'gfx908', 1, 32, 1228, 3),
    ('MI210', 'CDNA2', 'gfx90a', 1, 64, 1600, 3),
    ('MI250', 'CDNA2', 'gfx90a', 2, 128, 3200, 6),
    ('MI250X', 'CDNA2', 'gfx90a', 2, 128, 3200, None),
    ('MI300A', 'CDNA3', 'gfx942', 1, 128, None, None),
    ('MI300X', 'CDNA3', 'gfx942', 1, 192, 5300, 7),
    ('MI325X', 'CDNA3', 'gfx942', 1, 256, 6000, 7),
)

# PCI vendor:device id -> (the name The PCI ID Repository gives, the models that id can be: one or more
# INSTINCT_MODELS names). An id that names two models (740c: "Instinct MI250X/MI250") names both: a lookup gives only
# the figures they share.
# Source: The PCI ID Repository, vendor 1002 (pciutils/pciids pci.ids at commit
# c1c12547d626ebf05fd0223144ad87fab5e95d06). The kernel's amdgpu_drv.c pciidlist carries 0x738C, 0x7388, 0x738E as
# CHIP_ARCTURUS and 0x7408, 0x740C, 0x740F as CHIP_ALDEBARAN (drm/amdgpu: "Add DID for aldebaran", amd-gfx,
# 2021-02); the MI300 series (Aqua Vanjaram, GC 9.4.3) has no per-id row there: amdgpu binds it by PCI class through
# IP discovery. 0x7388 (pci.ids: "Arcturus GL-XL", no product) and 0x7410 (kernel: CHIP_ALDEBARAN, no pci.ids name)
# have no row: no source names their product. Virtual functions (74b5 "MI300X VF", 74b9 "MI325X VF") and the two
# "MI300X HF" ids (74a9, 74bd) are listed so that such a host or guest is recognised; they are the same models. 74a2
# ("Instinct MI308X") has no row: no source read here gives that model's figures (_amdgpu.py still names it among the
# MI300 series that the kernel check judges, test_amdgpu.py holds the two lists together).
PCI_IDS = {
    '1002:738c': ('Arcturus GL-XL [Instinct MI100]', ('MI100',)),
    '1002:738e': ('Arcturus GL-XL [Instinct MI100]', ('MI100',)),
    '1002:7408': ('Aldebaran/MI200 [Instinct MI250X]', ('MI250X',)),
    '1002:740c': ('Aldebaran/MI200 [Instinct MI250X/MI250]', ('MI250X', 'MI250')),
    '1002:740f': ('Aldebaran/MI200 [Instinct MI210]', ('MI210',)),
    '1002:74a0': ('Aqua Vanjaram [Instinct MI300A]', ('MI300A',)),
    '1002:74a1': ('Aqua Vanjaram [Instinct MI300X]', ('MI300X',)),
    '1002:74a5': ('Aqua Vanjaram [Instinct MI325X]', ('MI325X',)),
    '1002:74a9': ('Aqua Vanjaram [Instinct MI300X HF]', ('MI300X',)),
    '1002:74b5': ('Aqua Vanjaram [Instinct MI300X VF]', ('MI300X',)),
    '1002:74b9': ('Aqua Vanjaram [Instinct MI325X VF]', ('MI325X',)),
    '1002:74bd': ('Aqua Vanjaram [Instinct MI300X HF]', ('MI300X',)),
}
