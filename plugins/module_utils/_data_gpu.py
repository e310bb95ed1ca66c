# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Data: GPU architectures, PCI device ids, product names and chip code names. Literals only, one row per line.

Architecture names are spelled exactly as nvidia-smi prints ``product_architecture``. The exact lookups over
these tables live in _gpu_lookup.py, the logic that reasons with them in _compat_gpu.py and _compat.py;
tests/unit/plugins/module_utils/test_data.py checks every row.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# One row per architecture, oldest first (the order is the order of the generations):
# (name, compute capabilities, first CUDA, last CUDA, first driver branch, last driver branch,
#  driver branch NVIDIA recommends, open kernel modules).
# compute capabilities: CUDA C++ Programming Guide, "Compute Capabilities" table, and
# https://developer.nvidia.com/cuda-gpus.
# first CUDA: the CUDA release that first compiled for the architecture (release notes of that version).
# last CUDA: Kepler (sm_35/sm_37) was removed in CUDA 12.0 (CUDA 12.0 release notes, "Deprecated or
# Dropped Features"); Maxwell, Pascal and Volta offline compilation and library support were removed
# in CUDA 13.0 (CUDA 12.8/12.9 release notes "Deprecated Architectures", CUDA 13.0 release notes).
# first branch: the first driver branch that supports the architecture's datacenter parts (driver
# release notes: A100 in R450, H100 in R520 (R525 recommended), L4/L40 and RTX 40 in R520/R525,
# B200 and RTX 50 in R570). last branch: R470 is the last branch for Kepler (NVIDIA support notice
# "Kepler GPUs ... end of support", R470 LTSB); R580 is the last branch for Maxwell, Pascal and Volta
# (NVIDIA R580 release notes / "Maxwell, Pascal and Volta end of support" notice).
# recommended branch: branches NVIDIA recommends beyond the first (driver release notes / datacenter docs).
# open kernel modules: 'unsupported' before Turing, 'required' on Blackwell (NVIDIA driver README,
# "Open Linux Kernel Modules": Turing and later only; Blackwell requires the open modules).
ARCHITECTURE_ROWS = (
    ('Kepler', ('3.0', '3.2', '3.5', '3.7'), '4.2', '11.8', None, 470, None, 'unsupported'),
    ('Maxwell', ('5.0', '5.2', '5.3'), '6.0', '12.9', None, 580, None, 'unsupported'),
    ('Pascal', ('6.0', '6.1', '6.2'), '8.0', '12.9', 367, 580, None, 'unsupported'),
    ('Volta', ('7.0', '7.2'), '9.0', '12.9', 384, 580, None, 'unsupported'),
    ('Turing', ('7.5',), '10.0', None, 410, None, None, 'supported'),
    ('Ampere', ('8.0', '8.6', '8.7'), '11.0', None, 450, None, None, 'supported'),
    ('Ada Lovelace', ('8.9',), '11.8', None, 520, None, None, 'supported'),
    ('Hopper', ('9.0',), '11.8', None, 520, None, 525, 'supported'),
    ('Blackwell', ('10.0', '10.3', '12.0', '12.1'), '12.8', None, 570, None, None, 'required'),
)

# Other spellings users write (lower case, spaces collapsed) -> the name nvidia-smi prints.
ARCHITECTURE_ALIASES = {
    'ada': 'Ada Lovelace',
    'lovelace': 'Ada Lovelace',
}

# Source: The PCI ID Repository (https://pci-ids.ucw.cz/read/PC/10de), cross-checked against the
# device ids in NVIDIA's driver README "Appendix A. Supported NVIDIA GPU Products".
# PCI vendor:device id -> (product, architecture, kind). Exact ids only, no ranges.
# kind 'nvswitch' entries are NVLink switches (PCI class 0x0680), not GPUs.
PCI_IDS = {
    # Kepler
    '10de:1022': ('Tesla K20c', 'Kepler', 'gpu'),
    '10de:1028': ('Tesla K20m', 'Kepler', 'gpu'),
    '10de:1021': ('Tesla K20Xm', 'Kepler', 'gpu'),
    '10de:1023': ('Tesla K40m', 'Kepler', 'gpu'),
    '10de:1024': ('Tesla K40c', 'Kepler', 'gpu'),
    '10de:102d': ('Tesla K80', 'Kepler', 'gpu'),
    # Maxwell
    '10de:13bd': ('Tesla M10', 'Maxwell', 'gpu'),
    '10de:13f2': ('Tesla M60', 'Maxwell', 'gpu'),
    '10de:17fd': ('Tesla M40', 'Maxwell', 'gpu'),
    '10de:1431': ('Tesla M4', 'Maxwell', 'gpu'),
    '10de:13c0': ('GeForce GTX 980', 'Maxwell', 'gpu'),
    '10de:17c8': ('GeForce GTX 980 Ti', 'Maxwell', 'gpu'),
    # Pascal
    '10de:15f7': ('Tesla P100 PCIe 12GB', 'Pascal', 'gpu'),
    '10de:15f8': ('Tesla P100 PCIe 16GB', 'Pascal', 'gpu'),
    '10de:15f9': ('Tesla P100 SXM2 16GB', 'Pascal', 'gpu'),
    '10de:1b38': ('Tesla P40', 'Pascal', 'gpu'),
    '10de:1bb3': ('Tesla P4', 'Pascal', 'gpu'),
    '10de:1b06': ('GeForce GTX 1080 Ti', 'Pascal', 'gpu'),
    '10de:1b80': ('GeForce GTX 1080', 'Pascal', 'gpu'),
    '10de:1b81': ('GeForce GTX 1070', 'Pascal', 'gpu'),
    '10de:1b02': ('TITAN Xp', 'Pascal', 'gpu'),
    '10de:1d01': ('GeForce GT 1030', 'Pascal', 'gpu'),
    # Volta
    '10de:1db1': ('Tesla V100 SXM2 16GB', 'Volta', 'gpu'),
    '10de:1db4': ('Tesla V100 PCIe 16GB', 'Volta', 'gpu'),
    '10de:1db5': ('Tesla V100 SXM2 32GB', 'Volta', 'gpu'),
    '10de:1db6': ('Tesla V100 PCIe 32GB', 'Volta', 'gpu'),
    '10de:1db8': ('Tesla V100 SXM3 32GB', 'Volta', 'gpu'),
    '10de:1df6': ('Tesla V100S PCIe 32GB', 'Volta', 'gpu'),
    '10de:1d81': ('TITAN V', 'Volta', 'gpu'),
    # Turing
    '10de:1eb8': ('Tesla T4', 'Turing', 'gpu'),
    '10de:1e02': ('TITAN RTX', 'Turing', 'gpu'),
    '10de:1e04': ('GeForce RTX 2080 Ti', 'Turing', 'gpu'),
    '10de:1e07': ('GeForce RTX 2080 Ti Rev. A', 'Turing', 'gpu'),
    '10de:1e30': ('Quadro RTX 6000/8000', 'Turing', 'gpu'),
    '10de:2182': ('GeForce GTX 1660 Ti', 'Turing', 'gpu'),
    # Ampere
    '10de:20b0': ('A100 SXM4 40GB', 'Ampere', 'gpu'),
    '10de:20b2': ('A100 SXM4 80GB', 'Ampere', 'gpu'),
    '10de:20b5': ('A100 PCIe 80GB', 'Ampere', 'gpu'),
    '10de:20f1': ('A100 PCIe 40GB', 'Ampere', 'gpu'),
    '10de:20f3': ('A800 SXM4 80GB', 'Ampere', 'gpu'),
    '10de:20b7': ('A30', 'Ampere', 'gpu'),
    '10de:2235': ('A40', 'Ampere', 'gpu'),
    '10de:2236': ('A10', 'Ampere', 'gpu'),
    '10de:2237': ('A10G', 'Ampere', 'gpu'),
    '10de:2230': ('RTX A6000', 'Ampere', 'gpu'),
    '10de:2231': ('RTX A5000', 'Ampere', 'gpu'),
    '10de:2204': ('GeForce RTX 3090', 'Ampere', 'gpu'),
    '10de:2206': ('GeForce RTX 3080', 'Ampere', 'gpu'),
    '10de:2208': ('GeForce RTX 3080 Ti', 'Ampere', 'gpu'),
    '10de:2484': ('GeForce RTX 3070', 'Ampere', 'gpu'),
    # Ada Lovelace
    '10de:27b8': ('L4', 'Ada Lovelace', 'gpu'),
    '10de:26b5': ('L40', 'Ada Lovelace', 'gpu'),
    '10de:26b9': ('L40S', 'Ada Lovelace', 'gpu'),
    '10de:26b1': ('RTX 6000 Ada Generation', 'Ada Lovelace', 'gpu'),
    '10de:2684': ('GeForce RTX 4090', 'Ada Lovelace', 'gpu'),
    '10de:2704': ('GeForce RTX 4080', 'Ada Lovelace', 'gpu'),
    # Hopper
    '10de:2330': ('H100 SXM5 80GB', 'Hopper', 'gpu'),
    '10de:2331': ('H100 PCIe', 'Hopper', 'gpu'),
    '10de:2339': ('H100 SXM5 94GB', 'Hopper', 'gpu'),
    '10de:2321': ('H100 NVL', 'Hopper', 'gpu'),
    '10de:2324': ('H800', 'Hopper', 'gpu'),
    '10de:2335': ('H200 SXM 141GB', 'Hopper', 'gpu'),
    '10de:233b': ('H200 NVL', 'Hopper', 'gpu'),
    '10de:2342': ('GH200', 'Hopper', 'gpu'),
    # Blackwell
    '10de:2901': ('B200', 'Blackwell', 'gpu'),
    '10de:2941': ('GB200', 'Blackwell', 'gpu'),
    '10de:2b85': ('GeForce RTX 5090', 'Blackwell', 'gpu'),
    # NVSwitch (PCI class 0x0680, bridge): not GPUs.
    '10de:1af1': ('NVSwitch (A100 generation)', 'Ampere', 'nvswitch'),
    '10de:22a3': ('NVSwitch (H100 generation)', 'Hopper', 'nvswitch'),
}

# Source: NVIDIA product pages and https://developer.nvidia.com/cuda-gpus (product -> compute
# capability). (regular expression, case-insensitive, searched in the product name; architecture).
# First match wins, so newer generations (whose names reuse letters) come first.
PRODUCT_PATTERNS = (
    (r'\bG?B[123]00\b|\bGB\d{3}\b|RTX PRO \d+ Blackwell|RTX 50[5-9]0\b|\bB40\b', 'Blackwell'),
    (r'\bGH200\b|\bH(?:100|200|800|20)\b', 'Hopper'),
    (r'\bL4\b|\bL40S?\b|\bL20\b|RTX 40[5-9]0\b|\bRTX \d{4} Ada\b|Ada Generation', 'Ada Lovelace'),
    (r'\bA(?:100|800|30|40|10G?|16|2)\b|\bRTX A\d{3,4}\b|RTX 30[5-9]0\b', 'Ampere'),
    (r'\bT4\b|RTX 20[6-8]0\b|TITAN RTX|Quadro RTX|GTX 16[5-6]0\b|\bT(?:400|600|1000)\b', 'Turing'),
    (r'V100|TITAN V\b|GV100', 'Volta'),
    (r'P100|\bP40\b|\bP4\b|\bP6000\b|GTX 10[5-8]0\b|\bGT 10[13]0\b|TITAN Xp\b|TITAN X \(Pascal\)|Quadro P\d+', 'Pascal'),
    (r'\bM(?:4|6|10|40|60)\b|GTX 9[5-8]0\b|GTX 750\b|GTX TITAN X\b|Quadro M\d+', 'Maxwell'),
    (r'\bK(?:10|20X?m?c?|40m?c?|80|520)\b|GTX 6[5-9]0\b|GTX 7[6-8]0\b|GTX TITAN(?! X)', 'Kepler'),
)

# Source: the chip code names in the PCI ID Repository's NVIDIA names ("GK210GL [Tesla K80]",
# "GP108 [GeForce GT 1030]", "TU116 [GeForce GTX 1660 Ti]", "GH100 [H100 SXM5 80GB]"), and NVIDIA's
# architecture whitepapers. Chip code name prefix -> architecture.
CHIP_PREFIXES = (
    ('GK', 'Kepler'),
    ('GM', 'Maxwell'),
    ('GP', 'Pascal'),
    ('GV', 'Volta'),
    ('TU', 'Turing'),
    ('GA', 'Ampere'),
    ('AD', 'Ada Lovelace'),
    ('GH', 'Hopper'),
    ('GB', 'Blackwell'),
)

# Nominal device-memory bandwidth of a GPU, in GB/s (10^9 bytes per second), for the acceptance test's copy bandwidth
# check (roles/gpu_acceptance): (regular expression searched, case-sensitive, in the name nvidia-smi prints; GB/s;
# a name nvidia-smi prints for such a GPU, which must reach this row). _gpu_lookup.memory_bandwidth_gbps reads it: a
# row names a GPU only where the rest of the name after its match is a memory size, memory type or form factor
# ("NVIDIA GeForce RTX 3090 Ti" is not the RTX 3090), and the longest such match wins, then the first row. One figure
# per GPU (a K80 board holds two GPUs). Each figure is the vendor's "GPU memory bandwidth" line of the datasheet
# named beside it; a name that no row names has no nominal figure (the role then fails or warns,
# gpu_acceptance_unknown_model), never a guessed one.
MEMORY_BANDWIDTH_GBPS = (
    # NVIDIA GH200 Grace Hopper Superchip datasheet: 144GB HBM3e 4.9 TB/s; 96GB HBM3 4 TB/s.
    (r'GH200.*(?:144G|HBM3e)', 4900, 'NVIDIA GH200 144G HBM3e'),
    (r'GH200', 4000, 'NVIDIA GH200 480GB'),
    # NVIDIA H200 Tensor Core GPU datasheet: H200 SXM and H200 NVL, 4.8 TB/s.
    (r'H200', 4800, 'NVIDIA H200'),
    # NVIDIA H100 Tensor Core GPU datasheet: H100 NVL 3.9 TB/s, H100 PCIe 2 TB/s, H100 SXM 3.35 TB/s.
    (r'H100 NVL', 3900, 'NVIDIA H100 NVL'),
    (r'H100 PCIe', 2000, 'NVIDIA H100 PCIe'),
    (r'H100', 3350, 'NVIDIA H100 80GB HBM3'),
    # NVIDIA H800 datasheet: H800 PCIe 80GB 2 TB/s, H800 SXM 3.35 TB/s.
    (r'H800 PCIe', 2000, 'NVIDIA H800 PCIe'),
    (r'H800', 3350, 'NVIDIA H800'),
    # NVIDIA HGX B200 datasheet: 8 TB/s per GPU (GB200's GPUs: NVIDIA GB200 NVL72 datasheet, 8 TB/s per GPU).
    (r'B200', 8000, 'NVIDIA B200'),
    # NVIDIA A100 Tensor Core GPU datasheet: 80GB PCIe 1,935 GB/s, 80GB SXM 2,039 GB/s, 40GB PCIe and SXM 1,555 GB/s;
    # NVIDIA A800 datasheet: the same figures for the A800 40GB PCIe, 80GB PCIe and SXM4 80GB.
    (r'A[18]00.*80GB.*PCIe|A[18]00-PCIE-80GB', 1935, 'NVIDIA A100 80GB PCIe'),
    (r'A[18]00.*80GB', 2039, 'NVIDIA A100-SXM4-80GB'),
    (r'\bA[18]00\b', 1555, 'NVIDIA A100-PCIE-40GB'),
    # NVIDIA A30 Tensor Core GPU datasheet: 933 GB/s.
    (r'\bA30\b', 933, 'NVIDIA A30'),
    # NVIDIA A40 datasheet: 696 GB/s.
    (r'\bA40\b', 696, 'NVIDIA A40'),
    # NVIDIA A10 Tensor Core GPU datasheet: 600 GB/s. The A10G is AWS's variant (EC2 G5), for which NVIDIA publishes
    # no datasheet: the same 24 GB GDDR6 at 600 GB/s (Baseten, "NVIDIA A10 vs A10G for ML model inference", spec table).
    (r'\bA10G\b', 600, 'NVIDIA A10G'),
    (r'\bA10\b', 600, 'NVIDIA A10'),
    # NVIDIA L40 and L40S datasheets: 864 GB/s each.
    (r'\bL40S?\b', 864, 'NVIDIA L40S'),
    # NVIDIA L4 Tensor Core GPU datasheet: 300 GB/s.
    (r'\bL4\b', 300, 'NVIDIA L4'),
    # NVIDIA V100S datasheet: 1,134 GB/s; NVIDIA Tesla V100 datasheet: 900 GB/s (SXM2 and PCIe).
    (r'V100S', 1134, 'Tesla V100S-PCIE-32GB'),
    (r'V100', 900, 'Tesla V100-SXM2-32GB'),
    # NVIDIA T4 datasheet: 320+ GB/s.
    (r'\bT4\b', 320, 'Tesla T4'),
    # NVIDIA Tesla P100 PCIe datasheet: 12GB 549 GB/s, 16GB 732 GB/s; Tesla P100 SXM2 (NVLink) datasheet: 732 GB/s.
    (r'P100-PCIE-12GB', 549, 'Tesla P100-PCIE-12GB'),
    (r'P100', 732, 'Tesla P100-PCIE-16GB'),
    # NVIDIA GeForce RTX 4090 and RTX 3090 specifications (memory 21 Gbps and 19.5 Gbps on a 384-bit bus): 1,008 and
    # 936 GB/s; GeForce GTX 1660 Ti specifications (12 Gbps, 192-bit): 288 GB/s. No row for the RTX 3090 Ti: its figure
    # (21 Gbps on 384 bits in the press) was not found on an NVIDIA page, so it is an unknown model (issue 52).
    (r'RTX 4090', 1008, 'NVIDIA GeForce RTX 4090'),
    (r'RTX 3090', 936, 'NVIDIA GeForce RTX 3090'),
    (r'GTX 1660 Ti', 288, 'GeForce GTX 1660 Ti'),
    # NVIDIA GeForce GT 1030 specifications: GDDR5 48 GB/s. The DDR4 GT 1030 (16.8 GB/s) prints the same name and
    # falls below the minimum: set gpu_acceptance_nominal_bandwidth_gbps for it.
    (r'GT 1030', 48, 'GeForce GT 1030'),
    # NVIDIA Tesla K80 datasheet: 480 GB/s per board, which holds two GK210 GPUs of 240 GB/s each.
    (r'K80', 240, 'Tesla K80'),
)

# NVLinks of one GPU, for the acceptance test's link check (roles/gpu_acceptance, filter gpu_link_check): (regular
# expression searched, case-sensitive, in the name nvidia-smi prints; the number of NVLinks the GPU has; a name
# nvidia-smi prints for such a GPU, which must match this row and no other). Only GPUs whose NVLinks are all wired by
# the board they sit on (SXM modules on HGX/DGX baseboards, through NVSwitches or a mesh): such a GPU among several
# must be joined by NVLink, with every link up. Cards joined by optional bridges (PCIe, NVL) and models without a
# source for their count (H800, A800, H20, GH200, GB200 ...) have no row: their links are not counted, never guessed.
# Names: nvidia-smi's product_name in the fixtures (tests/unit/fixtures/nvidia_smi: h200_sxm_r580_idle.xml, recorded,
# "NVIDIA H200", h100_lost_gpus_r535.xml "NVIDIA H100 80GB HBM3", a100_mig_r535.xml "NVIDIA A100-SXM4-80GB",
# v100_retired_pages_r470.xml "Tesla V100-SXM2-32GB").
NVLINKS_PER_GPU = (
    # NVIDIA NVLink page (https://www.nvidia.com/en-us/data-center/nvlink/, specifications table "Maximum Number of
    # Links per GPU"): 18 NVLinks on Hopper (fourth generation, 900GB/s) and Blackwell (fifth generation, 1,800GB/s).
    # H200 SXM: NVIDIA's MLPerf Inference v4.1 system description of H200-SXM-141GBx8 ("18x 4th Gen NVLink, 900GB/s";
    # mlcommons/inference_results_v4.1, closed/NVIDIA/systems/H200-SXM-141GBx8_TRT_MaxQ.json).
    # The H200 NVL and H100 NVL are PCIe cards joined by optional bridges: no row.
    (r'^NVIDIA H200$', 18, 'NVIDIA H200'),
    (r'^NVIDIA H100 80GB HBM3$', 18, 'NVIDIA H100 80GB HBM3'),
    (r'^NVIDIA B200$', 18, 'NVIDIA B200'),
    # NVIDIA NVLink page: "A single NVIDIA A100 Tensor Core GPU supports up to 12 third-generation NVLink connections"
    # (600GB/s); the DGX A100 joins each A100 SXM4 to its six NVSwitches with twelve NVLinks. The A100 PCIe: no row.
    (r'^NVIDIA A100-SXM4-(?:40|80)GB$', 12, 'NVIDIA A100-SXM4-80GB'),
    # NVIDIA NVLink page: A100's NVLink "increased the number of links from 6 to 12" (Volta: 6, 300GB/s); NVIDIA DGX-1
    # With Tesla V100 System Architecture whitepaper: each V100 SXM2 has 6 NVLinks (the hybrid cube mesh).
    (r'^Tesla V100-SXM2-(?:16|32)GB$', 6, 'Tesla V100-SXM2-32GB'),
    # NVIDIA NVLink page, first generation (Pascal, 160GB/s): 4 links per GPU, as on the Tesla P100 SXM2.
    (r'^Tesla P100-SXM2-16GB$', 4, 'Tesla P100-SXM2-16GB'),
)
