# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""What works with what: CUDA, drivers, GPU architectures, kernel modules, PyTorch wheels.

Every table cites its source next to it. Architecture names are spelled exactly as nvidia-smi
prints ``product_architecture``. Functions answer questions with reasons, never bare booleans
where a user needs to know what to change.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

KEPLER = 'Kepler'
MAXWELL = 'Maxwell'
PASCAL = 'Pascal'
VOLTA = 'Volta'
TURING = 'Turing'
AMPERE = 'Ampere'
ADA = 'Ada Lovelace'
HOPPER = 'Hopper'
BLACKWELL = 'Blackwell'
ARCHITECTURE_ORDER = (KEPLER, MAXWELL, PASCAL, VOLTA, TURING, AMPERE, ADA, HOPPER, BLACKWELL)

# Role variable names used in problem reports, so that a failure names what to change.
VAR_CUDA = 'cuda_toolkit_version'
VAR_BRANCH = 'nvidia_driver_branch'
VAR_DRIVER = 'nvidia_driver_version'
VAR_KERNEL_MODULE = 'nvidia_driver_kernel_module'
VAR_TORCH = 'torch_version'
VAR_ARCH = 'architectures'


# ---------------------------------------------------------------------------------------------
# Versions
# ---------------------------------------------------------------------------------------------

_VERSION_RE = re.compile(r'^\d+(?:\.\d+)*$')
_CUDA_RE = re.compile(r'^(\d+)\.(\d+)(?:\.(\d+))?$')
# A driver version (535.104.05, 570.26) or branch (535).
_DRIVER_VERSION_RE = re.compile(r'^(\d{3})(?:\.\d+){0,2}$')
# A branch or version, optionally inside a package name or with a flavour: 535-server, nvidia-driver-570-open.
_DRIVER_BRANCH_RE = re.compile(r'^(?:[A-Za-z][A-Za-z0-9]*-)*(\d{3})(?:\.\d+){0,2}(?:-(?:server|open))*$')
_TORCH_RE = re.compile(r'^(\d+)\.(\d+)(?:\.(\d+))?(?:\+([A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*))?$')
# CUDA updates are small numbers (11.4.4 is the highest so far); nvcc's build numbers (V12.2.91) are not.
CUDA_MAX_UPDATE = 9

CUDA_FORM = "'X.Y' or 'X.Y.U' with U the update (0-%d), for example '12.4' or '12.2.2'" % CUDA_MAX_UPDATE
DRIVER_FORM = "a driver version such as '535.104.05' or a branch such as '535'"
BRANCH_FORM = "a driver branch such as '535', '570-server', '580-open' or a version such as '535.104.05'"
TORCH_FORM = "'X.Y' or 'X.Y.Z', optionally with a local tag, for example '2.4.1' or '1.13.1+cu117'"


def version_text(value, what='version', form=CUDA_FORM):
    """A version given as a string, an int or a float -> its text, stripped.

    A float is refused unless it is whole (``12.0``): YAML reads an unquoted ``12.10`` as the float 12.1, so
    a float with a fraction cannot tell which version was written (12.1 or 12.10, 2.1 or 2.10). The
    message says to quote it. Raises ValueError naming ``what`` and the expected ``form``.
    """
    if isinstance(value, bool) or value is None:
        raise ValueError('%s: expected %s, got %r' % (what, form, value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and 0 <= value < 1e15:
            return '%d.0' % value
        raise ValueError("%s: got the number %r, not a string: YAML reads an unquoted version as a number and drops "
                         "trailing zeros (12.10 becomes 12.1), so it cannot tell which version was meant. Quote it "
                         "('%s' or '%s0') to say which one" % (what, value, value, value))
    if not isinstance(value, str):
        raise ValueError('%s: expected %s, got %r' % (what, form, value))
    return value.strip()


def parse_version(text):
    """``'535.104.05'`` -> (535, 104, 5); ``'12.4'`` -> (12, 4). Only dots and digits.

    Raises ValueError for anything else (``'11.8abc'``, ``'535.x'``) and for floats that lost a trailing zero.
    """
    if isinstance(text, tuple):
        return tuple(int(p) for p in text)
    text = version_text(text, 'version', "a dotted number such as '12.4'")
    if not _VERSION_RE.match(text):
        raise ValueError("expected a dotted number such as '12.4', got %r" % (text,))
    return tuple(int(p) for p in text.split('.'))


def parse_cuda(cuda):
    """``'12.2.2'`` -> (12, 2, 2), ``'12.4'`` -> (12, 4, 0). Raises ValueError for any other form.

    A third number over CUDA_MAX_UPDATE is nvcc's build number (``release 12.2, V12.2.91``), not an update.
    """
    if isinstance(cuda, tuple):
        cuda = version_str(cuda)
    text = version_text(cuda, 'CUDA version', CUDA_FORM)
    m = _CUDA_RE.match(text)
    if not m:
        raise ValueError('CUDA version: expected %s, got %r' % (CUDA_FORM, text))
    update = int(m.group(3) or 0)
    if update > CUDA_MAX_UPDATE:
        raise ValueError("CUDA version %r: %d is not an update number (nvcc prints build numbers, V%s); expected %s"
                         % (text, update, text, CUDA_FORM))
    return int(m.group(1)), int(m.group(2)), update


def parse_driver_version(driver):
    """``'535.104.05'`` -> (535, 104, 5); also a bare branch ``'535'``. Raises ValueError for any other form."""
    text = version_text(driver, 'driver version', DRIVER_FORM)
    if not _DRIVER_VERSION_RE.match(text):
        raise ValueError('driver version: expected %s, got %r' % (DRIVER_FORM, text))
    return tuple(int(p) for p in text.split('.'))


def version_str(version):
    return '.'.join(str(p) for p in version)


def compare_versions(a, b):
    """-1, 0 or 1. Missing trailing parts count as 0 (``12.4 == 12.4.0``)."""
    va, vb = list(parse_version(a)), list(parse_version(b))
    width = max(len(va), len(vb))
    va += [0] * (width - len(va))
    vb += [0] * (width - len(vb))
    return (va > vb) - (va < vb)


def version_ge(a, b):
    return compare_versions(a, b) >= 0


def driver_branch(driver):
    """``'535.104.05'`` / ``'535'`` / ``'535-server'`` / ``'nvidia-driver-535-open'`` -> 535.

    Raises ValueError for anything else (``'535.x'``, ``'latest'``).
    """
    if isinstance(driver, int) and not isinstance(driver, bool):
        if 100 <= driver <= 999:
            return driver
        raise ValueError('expected %s, got %r' % (BRANCH_FORM, driver))
    text = version_text(driver, 'driver branch', BRANCH_FORM)
    m = _DRIVER_BRANCH_RE.match(text)
    if not m:
        raise ValueError('expected %s, got %r' % (BRANCH_FORM, text))
    return int(m.group(1))


def cuda_major_minor(cuda):
    return parse_cuda(cuda)[:2]


# ---------------------------------------------------------------------------------------------
# CUDA toolkit -> minimum Linux x86_64 driver
# ---------------------------------------------------------------------------------------------

# Source: NVIDIA CUDA Toolkit Release Notes, table "CUDA Toolkit and Corresponding Driver Versions"
# (https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#id5, and the release notes of
# each version under https://docs.nvidia.com/cuda/archive/), Linux x86_64 column, "Toolkit Driver
# Version". One row per row of NVIDIA's table, spelled as NVIDIA spells it: (CUDA major.minor, release,
# minimum driver). The release is "GA" or "Update N" ("RC" only for 11.0.1). Adding a CUDA release is
# adding its row here: tests/unit/plugins/module_utils/test_compat.py checks that every row parses,
# that the minimum drivers never go down, and that every release answers.
# 13.0 Update 2 .. 13.3 Update 1: the CUDA 13.3 Update 1 release notes' table. CUDA 13.4 and 13.5 are
# published, but from 13.4 on the Linux driver is no longer bundled with the toolkit and the table's
# Linux value for them could not be verified here: they are left out until someone reads it.
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

_RELEASE_RE = re.compile(r'^(?:GA|RC|Update (\d+))$')


def _release_key(cuda, release):
    """``('12.2', 'Update 2')`` -> (12, 2, 2); ``('12.2', 'GA')`` -> (12, 2, 0)."""
    m = _RELEASE_RE.match(release)
    if not m:
        raise ValueError('CUDA release %r of %s is neither GA, RC nor "Update N"' % (release, cuda))
    major, minor = (int(p) for p in cuda.split('.'))
    return (major, minor, int(m.group(1) or 0))


# (major, minor, update) -> minimum driver; update 0 is the GA (or RC) row.
CUDA_TOOLKIT_MIN_DRIVER = dict((_release_key(c, r), d) for c, r, d in CUDA_RELEASES)

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


def known_cuda_versions():
    """Every CUDA major.minor in the table, oldest first, as strings."""
    return ['%d.%d' % mm for mm in sorted(set(k[:2] for k in CUDA_TOOLKIT_MIN_DRIVER))]


def cuda_min_driver(cuda, mode='toolkit'):
    """Minimum Linux driver for CUDA ``cuda`` (``'11.8'``, ``'12.2.2'``).

    mode ``toolkit``: the driver that the release notes list for that toolkit (full compatibility).
    mode ``minor``: the minimum under CUDA minor version compatibility (CUDA 11 and later).
    Raises ValueError for a version the tables do not know.
    """
    if mode not in ('toolkit', 'minor'):
        raise ValueError("mode must be 'toolkit' or 'minor', got %r" % (mode,))
    major, minor, update = parse_cuda(cuda)
    v = (major, minor, update) if update else (major, minor)
    if mode == 'minor':
        if major not in CUDA_MINOR_COMPAT_MIN_DRIVER:
            raise ValueError('CUDA %s has no minor version compatibility (it exists for CUDA %s)'
                             % (version_str(v), ', '.join('%d.x' % m for m in sorted(CUDA_MINOR_COMPAT_MIN_DRIVER))))
        return CUDA_MINOR_COMPAT_MIN_DRIVER[major]
    rows = sorted(k for k in CUDA_TOOLKIT_MIN_DRIVER if k[:2] == (major, minor) and k[2] <= update)
    if not rows:
        raise ValueError('CUDA %s is not in the table of CUDA releases (known: %s)'
                         % (version_str(v), ', '.join(known_cuda_versions())))
    return CUDA_TOOLKIT_MIN_DRIVER[rows[-1]]


def driver_cuda_version(driver):
    """Highest CUDA major.minor whose toolkit driver is <= ``driver`` (what nvidia-smi shows), or None."""
    parse_driver_version(driver)
    best = None
    for key in sorted(CUDA_TOOLKIT_MIN_DRIVER):
        if key[2] != 0:
            continue
        if version_ge(driver, CUDA_TOOLKIT_MIN_DRIVER[key]):
            best = key[:2]
    return '%d.%d' % best if best else None


def cuda_driver_mode(driver, cuda):
    """How a driver runs CUDA ``cuda``: ``'full'``, ``'minor'`` (minor version compatibility) or ``'none'``."""
    parse_driver_version(driver)
    if version_ge(driver, cuda_min_driver(cuda, 'toolkit')):
        return 'full'
    major = parse_cuda(cuda)[0]
    if major in CUDA_MINOR_COMPAT_MIN_DRIVER and version_ge(driver, CUDA_MINOR_COMPAT_MIN_DRIVER[major]):
        return 'minor'
    return 'none'


def cuda_driver_compatible(driver, cuda, minor=False):
    mode = cuda_driver_mode(driver, cuda)
    return mode == 'full' or (minor and mode == 'minor')


# ---------------------------------------------------------------------------------------------
# Architectures
# ---------------------------------------------------------------------------------------------

# compute_capabilities: CUDA C++ Programming Guide, "Compute Capabilities" table, and
# https://developer.nvidia.com/cuda-gpus.
# first_cuda: the CUDA release that first compiled for the architecture (release notes of that version).
# last_cuda: Kepler (sm_35/sm_37) was removed in CUDA 12.0 (CUDA 12.0 release notes, "Deprecated or
# Dropped Features"); Maxwell, Pascal and Volta offline compilation and library support were removed
# in CUDA 13.0 (CUDA 12.8/12.9 release notes "Deprecated Architectures", CUDA 13.0 release notes).
# min_branch: the first driver branch that supports the architecture's datacenter parts (driver
# release notes: A100 in R450, H100 in R520 (R525 recommended), L4/L40 and RTX 40 in R520/R525,
# B200 and RTX 50 in R570). last_branch: R470 is the last branch for Kepler (NVIDIA support notice
# "Kepler GPUs ... end of support", R470 LTSB); R580 is the last branch for Maxwell, Pascal and Volta
# (NVIDIA R580 release notes / "Maxwell, Pascal and Volta end of support" notice).
# open_kernel_module: 'unsupported' before Turing, 'required' on Blackwell (NVIDIA driver README,
# "Open Linux Kernel Modules": Turing and later only; Blackwell requires the open modules).
ARCHITECTURES = {
    KEPLER: {'compute_capabilities': ['3.0', '3.2', '3.5', '3.7'], 'first_cuda': '4.2', 'last_cuda': '11.8',
             'min_branch': None, 'last_branch': 470, 'open_kernel_module': 'unsupported'},
    MAXWELL: {'compute_capabilities': ['5.0', '5.2', '5.3'], 'first_cuda': '6.0', 'last_cuda': '12.9',
              'min_branch': None, 'last_branch': 580, 'open_kernel_module': 'unsupported'},
    PASCAL: {'compute_capabilities': ['6.0', '6.1', '6.2'], 'first_cuda': '8.0', 'last_cuda': '12.9',
             'min_branch': 367, 'last_branch': 580, 'open_kernel_module': 'unsupported'},
    VOLTA: {'compute_capabilities': ['7.0', '7.2'], 'first_cuda': '9.0', 'last_cuda': '12.9',
            'min_branch': 384, 'last_branch': 580, 'open_kernel_module': 'unsupported'},
    TURING: {'compute_capabilities': ['7.5'], 'first_cuda': '10.0', 'last_cuda': None,
             'min_branch': 410, 'last_branch': None, 'open_kernel_module': 'supported'},
    AMPERE: {'compute_capabilities': ['8.0', '8.6', '8.7'], 'first_cuda': '11.0', 'last_cuda': None,
             'min_branch': 450, 'last_branch': None, 'open_kernel_module': 'supported'},
    ADA: {'compute_capabilities': ['8.9'], 'first_cuda': '11.8', 'last_cuda': None,
          'min_branch': 520, 'last_branch': None, 'open_kernel_module': 'supported'},
    HOPPER: {'compute_capabilities': ['9.0'], 'first_cuda': '11.8', 'last_cuda': None,
             'min_branch': 520, 'last_branch': None, 'open_kernel_module': 'supported'},
    BLACKWELL: {'compute_capabilities': ['10.0', '10.3', '12.0', '12.1'], 'first_cuda': '12.8', 'last_cuda': None,
                'min_branch': 570, 'last_branch': None, 'open_kernel_module': 'required'},
}

# Branches NVIDIA recommends beyond the minimum (driver release notes / datacenter docs).
RECOMMENDED_MIN_BRANCH = {HOPPER: 525}

# The first open kernel module release (R515, "NVIDIA Releases Open-Source GPU Kernel Modules", May 2022).
OPEN_KERNEL_MODULE_MIN_BRANCH = 515

# Datacenter branches, long-term support first (https://docs.nvidia.com/datacenter/tesla/drivers/,
# "Supported Drivers and CUDA Toolkit Versions" and the lifecycle page): R470, R535, R580 are LTSB.
LTS_BRANCHES = (470, 535, 580)
KNOWN_BRANCHES = (450, 460, 470, 510, 515, 520, 525, 530, 535, 545, 550, 555, 560, 565, 570, 575, 580, 590, 595, 610)


def canonical_architecture(name):
    """Case-insensitive lookup of an architecture name (``'ada'``, ``'Ada Lovelace'``) -> canonical, or None."""
    if not isinstance(name, str):
        return None
    low = ' '.join(name.split()).lower()
    if low in ('ada', 'ada lovelace', 'lovelace'):
        return ADA
    for arch in ARCHITECTURE_ORDER:
        if arch.lower() == low:
            return arch
    return None


def architecture_info(arch):
    canon = canonical_architecture(arch)
    if canon is None:
        raise ValueError('unknown GPU architecture %r (known: %s)' % (arch, ', '.join(ARCHITECTURE_ORDER)))
    info = dict(ARCHITECTURES[canon])
    info['name'] = canon
    return info


def driver_supports_architecture(driver, arch):
    """Whether a driver branch (``'535'``) or version (``'535.104.05'``) drives ``arch``."""
    return not branch_architecture_problems(driver_branch(driver), arch)


def branch_architecture_problems(branch, arch):
    """Reasons why driver branch ``branch`` cannot drive ``arch`` (empty list when it can)."""
    info = architecture_info(arch)
    problems = []
    if info['last_branch'] is not None and branch > info['last_branch']:
        problems.append('driver branch %d does not support %s GPUs: the last branch that does is %d'
                        % (branch, info['name'], info['last_branch']))
    if info['min_branch'] is not None and branch < info['min_branch']:
        problems.append('driver branch %d predates %s GPUs: they need branch %d or newer'
                        % (branch, info['name'], info['min_branch']))
    return problems


def architectures_for_branch(branch):
    """Architectures a driver branch drives, oldest first."""
    branch = driver_branch(branch)
    return [a for a in ARCHITECTURE_ORDER if not branch_architecture_problems(branch, a)]


# ---------------------------------------------------------------------------------------------
# PCI device id -> product and architecture (exact lookup, no ranges)
# ---------------------------------------------------------------------------------------------

# Source: The PCI ID Repository (https://pci-ids.ucw.cz/read/PC/10de), cross-checked against the
# device ids in NVIDIA's driver README "Appendix A. Supported NVIDIA GPU Products".
# kind 'nvswitch' entries are NVLink switches (PCI class 0x0680), not GPUs.
PCI_IDS = {
    # Kepler
    '10de:1022': ('Tesla K20c', KEPLER, 'gpu'),
    '10de:1028': ('Tesla K20m', KEPLER, 'gpu'),
    '10de:1021': ('Tesla K20Xm', KEPLER, 'gpu'),
    '10de:1023': ('Tesla K40m', KEPLER, 'gpu'),
    '10de:1024': ('Tesla K40c', KEPLER, 'gpu'),
    '10de:102d': ('Tesla K80', KEPLER, 'gpu'),
    # Maxwell
    '10de:13bd': ('Tesla M10', MAXWELL, 'gpu'),
    '10de:13f2': ('Tesla M60', MAXWELL, 'gpu'),
    '10de:17fd': ('Tesla M40', MAXWELL, 'gpu'),
    '10de:1431': ('Tesla M4', MAXWELL, 'gpu'),
    '10de:13c0': ('GeForce GTX 980', MAXWELL, 'gpu'),
    '10de:17c8': ('GeForce GTX 980 Ti', MAXWELL, 'gpu'),
    # Pascal
    '10de:15f7': ('Tesla P100 PCIe 12GB', PASCAL, 'gpu'),
    '10de:15f8': ('Tesla P100 PCIe 16GB', PASCAL, 'gpu'),
    '10de:15f9': ('Tesla P100 SXM2 16GB', PASCAL, 'gpu'),
    '10de:1b38': ('Tesla P40', PASCAL, 'gpu'),
    '10de:1bb3': ('Tesla P4', PASCAL, 'gpu'),
    '10de:1b06': ('GeForce GTX 1080 Ti', PASCAL, 'gpu'),
    '10de:1b80': ('GeForce GTX 1080', PASCAL, 'gpu'),
    '10de:1b81': ('GeForce GTX 1070', PASCAL, 'gpu'),
    '10de:1b02': ('TITAN Xp', PASCAL, 'gpu'),
    '10de:1d01': ('GeForce GT 1030', PASCAL, 'gpu'),
    # Volta
    '10de:1db1': ('Tesla V100 SXM2 16GB', VOLTA, 'gpu'),
    '10de:1db4': ('Tesla V100 PCIe 16GB', VOLTA, 'gpu'),
    '10de:1db5': ('Tesla V100 SXM2 32GB', VOLTA, 'gpu'),
    '10de:1db6': ('Tesla V100 PCIe 32GB', VOLTA, 'gpu'),
    '10de:1db8': ('Tesla V100 SXM3 32GB', VOLTA, 'gpu'),
    '10de:1df6': ('Tesla V100S PCIe 32GB', VOLTA, 'gpu'),
    '10de:1d81': ('TITAN V', VOLTA, 'gpu'),
    # Turing
    '10de:1eb8': ('Tesla T4', TURING, 'gpu'),
    '10de:1e02': ('TITAN RTX', TURING, 'gpu'),
    '10de:1e04': ('GeForce RTX 2080 Ti', TURING, 'gpu'),
    '10de:1e07': ('GeForce RTX 2080 Ti Rev. A', TURING, 'gpu'),
    '10de:1e30': ('Quadro RTX 6000/8000', TURING, 'gpu'),
    '10de:2182': ('GeForce GTX 1660 Ti', TURING, 'gpu'),
    # Ampere
    '10de:20b0': ('A100 SXM4 40GB', AMPERE, 'gpu'),
    '10de:20b2': ('A100 SXM4 80GB', AMPERE, 'gpu'),
    '10de:20b5': ('A100 PCIe 80GB', AMPERE, 'gpu'),
    '10de:20f1': ('A100 PCIe 40GB', AMPERE, 'gpu'),
    '10de:20f3': ('A800 SXM4 80GB', AMPERE, 'gpu'),
    '10de:20b7': ('A30', AMPERE, 'gpu'),
    '10de:2235': ('A40', AMPERE, 'gpu'),
    '10de:2236': ('A10', AMPERE, 'gpu'),
    '10de:2237': ('A10G', AMPERE, 'gpu'),
    '10de:2230': ('RTX A6000', AMPERE, 'gpu'),
    '10de:2231': ('RTX A5000', AMPERE, 'gpu'),
    '10de:2204': ('GeForce RTX 3090', AMPERE, 'gpu'),
    '10de:2206': ('GeForce RTX 3080', AMPERE, 'gpu'),
    '10de:2208': ('GeForce RTX 3080 Ti', AMPERE, 'gpu'),
    '10de:2484': ('GeForce RTX 3070', AMPERE, 'gpu'),
    # Ada Lovelace
    '10de:27b8': ('L4', ADA, 'gpu'),
    '10de:26b5': ('L40', ADA, 'gpu'),
    '10de:26b9': ('L40S', ADA, 'gpu'),
    '10de:26b1': ('RTX 6000 Ada Generation', ADA, 'gpu'),
    '10de:2684': ('GeForce RTX 4090', ADA, 'gpu'),
    '10de:2704': ('GeForce RTX 4080', ADA, 'gpu'),
    # Hopper
    '10de:2330': ('H100 SXM5 80GB', HOPPER, 'gpu'),
    '10de:2331': ('H100 PCIe', HOPPER, 'gpu'),
    '10de:2339': ('H100 SXM5 94GB', HOPPER, 'gpu'),
    '10de:2321': ('H100 NVL', HOPPER, 'gpu'),
    '10de:2324': ('H800', HOPPER, 'gpu'),
    '10de:2335': ('H200 SXM 141GB', HOPPER, 'gpu'),
    '10de:233b': ('H200 NVL', HOPPER, 'gpu'),
    '10de:2342': ('GH200', HOPPER, 'gpu'),
    # Blackwell
    '10de:2901': ('B200', BLACKWELL, 'gpu'),
    '10de:2941': ('GB200', BLACKWELL, 'gpu'),
    '10de:2b85': ('GeForce RTX 5090', BLACKWELL, 'gpu'),
    # NVSwitch (PCI class 0x0680, bridge): not GPUs.
    '10de:1af1': ('NVSwitch (A100 generation)', AMPERE, 'nvswitch'),
    '10de:22a3': ('NVSwitch (H100 generation)', HOPPER, 'nvswitch'),
}

_PCI_ID_RE = re.compile(r'^(?:0x)?([0-9a-f]{4})[:\s]+(?:0x)?([0-9a-f]{4})$')


def normalize_pci_id(text):
    """``'10DE:2330'``, ``'0x10de 0x2330'`` -> ``'10de:2330'``; None when not a PCI vendor:device id."""
    if not isinstance(text, str):
        return None
    m = _PCI_ID_RE.match(text.strip().lower())
    if not m:
        return None
    return '%s:%s' % (m.group(1), m.group(2))


def pci_id_info(pci_id):
    """``{'product', 'architecture', 'kind'}`` for a known id, None otherwise (exact lookup only)."""
    key = normalize_pci_id(pci_id)
    if key is None or key not in PCI_IDS:
        return None
    product, arch, kind = PCI_IDS[key]
    return {'pci_device_id': key, 'product': product, 'architecture': arch, 'kind': kind}


# ---------------------------------------------------------------------------------------------
# Product name -> architecture
# ---------------------------------------------------------------------------------------------

# Source: NVIDIA product pages and https://developer.nvidia.com/cuda-gpus (product -> compute
# capability). First match wins, so newer generations (whose names reuse letters) come first.
PRODUCT_PATTERNS = (
    (re.compile(r'\bG?B[123]00\b|\bGB\d{3}\b|RTX PRO \d+ Blackwell|RTX 50[5-9]0\b|\bB40\b', re.I), BLACKWELL),
    (re.compile(r'\bGH200\b|\bH(?:100|200|800|20)\b', re.I), HOPPER),
    (re.compile(r'\bL4\b|\bL40S?\b|\bL20\b|RTX 40[5-9]0\b|\bRTX \d{4} Ada\b|Ada Generation', re.I), ADA),
    (re.compile(r'\bA(?:100|800|30|40|10G?|16|2)\b|\bRTX A\d{3,4}\b|RTX 30[5-9]0\b', re.I), AMPERE),
    (re.compile(r'\bT4\b|RTX 20[6-8]0\b|TITAN RTX|Quadro RTX|GTX 16[5-6]0\b|\bT(?:400|600|1000)\b', re.I), TURING),
    (re.compile(r'V100|TITAN V\b|GV100', re.I), VOLTA),
    (re.compile(r'P100|\bP40\b|\bP4\b|\bP6000\b|GTX 10[5-8]0\b|\bGT 10[13]0\b|TITAN Xp\b|TITAN X \(Pascal\)|Quadro P\d+', re.I), PASCAL),
    (re.compile(r'\bM(?:4|6|10|40|60)\b|GTX 9[5-8]0\b|GTX 750\b|GTX TITAN X\b|Quadro M\d+', re.I), MAXWELL),
    (re.compile(r'\bK(?:10|20X?m?c?|40m?c?|80|520)\b|GTX 6[5-9]0\b|GTX 7[6-8]0\b|GTX TITAN(?! X)', re.I), KEPLER),
)


# Source: the chip code names in the PCI ID Repository's NVIDIA names ("GK210GL [Tesla K80]",
# "GP108 [GeForce GT 1030]", "TU116 [GeForce GTX 1660 Ti]", "GH100 [H100 SXM5 80GB]"), and NVIDIA's
# architecture whitepapers (GK = Kepler, GM = Maxwell, GP = Pascal, GV = Volta, TU = Turing,
# GA = Ampere, AD = Ada Lovelace, GH = Hopper, GB = Blackwell).
CHIP_PREFIXES = (
    ('GK', KEPLER), ('GM', MAXWELL), ('GP', PASCAL), ('GV', VOLTA), ('TU', TURING), ('GA', AMPERE),
    ('AD', ADA), ('GH', HOPPER), ('GB', BLACKWELL),
)
_CHIP_RE = re.compile(r'^\s*(?P<chip>(?P<prefix>%s)\d{3}[A-Z]*)(?![0-9A-Za-z])'
                      % '|'.join(p for p, _a in CHIP_PREFIXES))


def chip_architecture(name):
    """Architecture of a chip code name at the start of ``name`` (``'GP108 [GeForce GT 1030]'``), or None."""
    if not isinstance(name, str):
        return None
    m = _CHIP_RE.match(name)
    if not m:
        return None
    return dict(CHIP_PREFIXES)[m.group('prefix')]


def product_architecture(name):
    """Architecture of a product name as nvidia-smi prints it (``'NVIDIA H100 80GB HBM3'``), or None."""
    if not isinstance(name, str) or not name.strip():
        return None
    for pattern, arch in PRODUCT_PATTERNS:
        if pattern.search(name):
            return arch
    return None


def gpu_architecture(pci_id_or_name):
    """Architecture from a PCI id (``10de:2330``), a chip code name (``GP108``) or a product name; None when unknown."""
    info = pci_id_info(pci_id_or_name)
    if info is not None:
        return info['architecture']
    if normalize_pci_id(pci_id_or_name) is not None:
        return None
    return chip_architecture(pci_id_or_name) or product_architecture(pci_id_or_name)


# ---------------------------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------------------------

# Source: https://pytorch.org/get-started/previous-versions/ and the wheel indexes
# https://download.pytorch.org/whl/<variant>/torch/ : the CUDA variants published per release.
TORCH_CUDA_VARIANTS = {
    (1, 10): ('cu102', 'cu111', 'cu113'),
    (1, 11): ('cu102', 'cu113', 'cu115'),
    (1, 12): ('cu102', 'cu113', 'cu116'),
    (1, 13): ('cu116', 'cu117'),
    (2, 0): ('cu117', 'cu118'),
    (2, 1): ('cu118', 'cu121'),
    (2, 2): ('cu118', 'cu121'),
    (2, 3): ('cu118', 'cu121'),
    (2, 4): ('cu118', 'cu121', 'cu124'),
    (2, 5): ('cu118', 'cu121', 'cu124'),
    (2, 6): ('cu118', 'cu124', 'cu126'),
    (2, 7): ('cu118', 'cu126', 'cu128'),
    (2, 8): ('cu126', 'cu128', 'cu129'),
    (2, 9): ('cu126', 'cu128', 'cu130'),
}

# Source: pytorch/pytorch issue #157517 "[release 2.8-2.9] Delete support for Maxwell, Pascal, and
# Volta architectures for CUDA 12.8 and 12.9 builds": from torch 2.8 the cu128/cu129 (and later)
# wheels are built for sm_75 and newer only; cu126 keeps sm_50..sm_90. Kepler (sm_37) left the
# wheels with the CUDA 11.7 builds (torch 1.13 release notes).
TORCH_DROPS = (
    # (first torch, first cuda variant, architectures without kernels)
    ((2, 8), (12, 8), (KEPLER, MAXWELL, PASCAL, VOLTA)),
    ((1, 13), (11, 7), (KEPLER,)),
)


def parse_torch(torch):
    """``'1.13.1+cu118'`` -> ((1, 13, 1), 'cu118'); ``'2.4'`` -> ((2, 4), None). ValueError for any other form."""
    text = version_text(torch, 'torch version', TORCH_FORM)
    m = _TORCH_RE.match(text)
    if not m:
        raise ValueError('torch version: expected %s, got %r' % (TORCH_FORM, text))
    version = tuple(int(p) for p in m.groups()[:3] if p is not None)
    return version, m.group(4)


def torch_cuda_variants(torch):
    """CUDA wheel tags published for a torch release. Raises ValueError for an unknown release."""
    version, _local = parse_torch(torch)
    key = version[:2] if len(version) > 1 else (version[0], 0)
    if key not in TORCH_CUDA_VARIANTS:
        raise ValueError('torch %s is not in the table of PyTorch releases (known: %s)'
                         % (version_str(version), ', '.join('%d.%d' % k for k in sorted(TORCH_CUDA_VARIANTS))))
    return list(TORCH_CUDA_VARIANTS[key])


def cuda_tag(cuda):
    major, minor = cuda_major_minor(cuda)
    return 'cu%d%d' % (major, minor)


def tag_cuda(tag):
    """``'cu118'`` -> ``'11.8'``, ``'cu130'`` -> ``'13.0'``."""
    m = re.match(r'^cu(\d{2,3})$', tag or '')
    if not m:
        raise ValueError('expected a CUDA wheel tag such as "cu121", got %r' % (tag,))
    digits = m.group(1)
    return '%s.%s' % (digits[:2], digits[2:]) if len(digits) == 3 else '%s.%s' % (digits[0], digits[1])


def torch_missing_architectures(torch, variant):
    version, _local = parse_torch(torch)
    cuda = cuda_major_minor(tag_cuda(variant))
    missing = []
    for first_torch, first_cuda, archs in TORCH_DROPS:
        if tuple(version[:2]) >= first_torch and cuda >= first_cuda:
            missing.extend(a for a in archs if a not in missing)
    return missing


# ---------------------------------------------------------------------------------------------
# The question a preflight asks
# ---------------------------------------------------------------------------------------------

def _problem(variable, message, fix):
    return {'variable': variable, 'message': message, 'fix': fix}


def suggest_branch(cuda=None, architectures=None, kernel_module=None, allow_minor=True):
    """A driver branch that satisfies all constraints, long-term-support branches first, or None.

    A branch that runs ``cuda`` fully is preferred; when the architectures rule that out (Kepler and
    CUDA 11.8: R470 is Kepler's last branch) and ``allow_minor`` is true, a branch that runs it through
    minor version compatibility is suggested instead.
    """
    floors = []
    if cuda is not None:
        major = parse_cuda(cuda)[0]
        try:
            floors.append(driver_branch(cuda_min_driver(cuda, 'toolkit')))
        except ValueError:
            pass
        if major in CUDA_MINOR_COMPAT_MIN_DRIVER and (allow_minor or not floors):
            floors.append(driver_branch(CUDA_MINOR_COMPAT_MIN_DRIVER[major]))
    low, high = 0, 10 ** 6
    for arch in architectures or ():
        info = architecture_info(arch)
        low = max(low, RECOMMENDED_MIN_BRANCH.get(info['name'], info['min_branch'] or 0))
        if info['last_branch'] is not None:
            high = min(high, info['last_branch'])
    if kernel_module == 'open':
        low = max(low, OPEN_KERNEL_MODULE_MIN_BRANCH)
    for floor in floors or [0]:
        for pool in (LTS_BRANCHES, KNOWN_BRANCHES):
            fitting = [b for b in pool if max(low, floor) <= b <= high]
            if fitting:
                return str(max(fitting))
    return None


def check(cuda=None, driver=None, branch=None, architectures=None, kernel_module=None, torch=None,
          allow_minor=True):
    """Answer "does this combination work?" with reasons and fixes.

    cuda: wanted CUDA toolkit (``'12.4'``); driver: an installed/pinned driver version
    (``'535.104.05'``); branch: a wanted driver branch (``'535'``), used when ``driver`` is not given;
    architectures: GPU architectures on the host; kernel_module: ``'open'`` or ``'proprietary'``;
    torch: a torch release, optionally with its local tag (``'2.4.1'``, ``'1.13.1+cu118'``).

    Returns ``{'ok', 'mode', 'problems': [{'variable', 'message', 'fix'}], 'notes',
    'suggested_driver_branch'}``. ``mode`` is how the driver runs the CUDA version: ``full``,
    ``minor`` (minor version compatibility, see notes for its limits) or ``none``; None when there
    is no CUDA/driver pair to judge.
    """
    # Malformed versions are errors, not problems: say what form is expected (ValueError).
    if cuda is not None:
        cuda = version_text(cuda, 'CUDA version', CUDA_FORM)
        parse_cuda(cuda)
    if driver is not None:
        driver = version_text(driver, 'driver version', DRIVER_FORM)
        parse_driver_version(driver)
    if branch is not None:
        branch = version_text(branch, 'driver branch', BRANCH_FORM)
        driver_branch(branch)
    if torch is not None:
        torch = version_text(torch, 'torch version', TORCH_FORM)
        parse_torch(torch)
    problems = []
    notes = []
    archs = []
    for arch in architectures or ():
        canon = canonical_architecture(arch)
        if canon is None:
            problems.append(_problem(VAR_ARCH, 'unknown GPU architecture %r' % (arch,),
                                     'use one of: %s' % ', '.join(ARCHITECTURE_ORDER)))
        elif canon not in archs:
            archs.append(canon)
    if kernel_module not in (None, 'open', 'proprietary'):
        problems.append(_problem(VAR_KERNEL_MODULE, 'kernel module flavour %r is neither open nor proprietary'
                                 % (kernel_module,), "set %s to 'open' or 'proprietary'" % VAR_KERNEL_MODULE))
        kernel_module = None

    # The driver side: an exact version when known, else the wanted branch.
    drv_branch = None
    drv_var = VAR_BRANCH
    if driver is not None:
        drv_branch = driver_branch(driver)
        drv_var = VAR_DRIVER if branch is None else VAR_BRANCH
    elif branch is not None:
        drv_branch = driver_branch(branch)
    suggestion = suggest_branch(cuda, archs, kernel_module, allow_minor)
    fix_branch = ("set %s to '%s'" % (VAR_BRANCH, suggestion)) if suggestion else \
        'no single driver branch satisfies every constraint: split the hosts or change the CUDA version'

    mode = None
    if cuda is not None:
        cuda_known = True
        try:
            toolkit_min = cuda_min_driver(cuda, 'toolkit')
        except ValueError as e:
            cuda_known = False
            toolkit_min = None
            problems.append(_problem(VAR_CUDA, str(e), 'use one of the known CUDA versions'))
        major = parse_cuda(cuda)[0]
        minor_min = CUDA_MINOR_COMPAT_MIN_DRIVER.get(major)
        if cuda_known and drv_branch is not None:
            if driver is not None:
                mode = cuda_driver_mode(driver, cuda)
                have = 'driver %s' % driver
            else:
                # A branch's releases all share its major number: judge by branch.
                if drv_branch >= driver_branch(toolkit_min):
                    mode = 'full'
                    if drv_branch == driver_branch(toolkit_min):
                        notes.append('CUDA %s needs at least driver %s: install a release of branch %d that is '
                                     'not older' % (cuda, toolkit_min, drv_branch))
                elif minor_min is not None and drv_branch >= driver_branch(minor_min):
                    mode = 'minor'
                else:
                    mode = 'none'
                have = 'driver branch %d' % drv_branch
            if mode == 'minor':
                notes.append('%s runs CUDA %s only through minor version compatibility (needs >= %s, full '
                             'support needs >= %s)' % (have, cuda, minor_min, toolkit_min))
                notes.extend(MINOR_COMPAT_LIMITS)
                if not allow_minor:
                    problems.append(_problem(drv_var, '%s supports CUDA %s only through minor version '
                                             'compatibility; full support needs driver >= %s'
                                             % (have, cuda, toolkit_min), fix_branch))
            elif mode == 'none':
                need = toolkit_min
                if minor_min is not None and minor_min != toolkit_min:
                    need = '%s (or >= %s with minor version compatibility)' % (toolkit_min, minor_min)
                problems.append(_problem(drv_var, '%s is too old for CUDA %s: it needs driver >= %s'
                                         % (have, cuda, need), fix_branch))
        for arch in archs:
            info = ARCHITECTURES[arch]
            if info['last_cuda'] is not None and compare_versions(cuda_major_minor(cuda), info['last_cuda']) > 0:
                problems.append(_problem(VAR_CUDA, 'CUDA %s does not support %s GPUs: the last CUDA that does is %s'
                                         % (cuda, arch, info['last_cuda']),
                                         "set %s to '%s' or older" % (VAR_CUDA, info['last_cuda'])))
            if compare_versions(cuda_major_minor(cuda), info['first_cuda']) < 0:
                problems.append(_problem(VAR_CUDA, 'CUDA %s predates %s GPUs: they need CUDA %s or newer'
                                         % (cuda, arch, info['first_cuda']),
                                         "set %s to '%s' or newer" % (VAR_CUDA, info['first_cuda'])))

    if drv_branch is not None:
        for arch in archs:
            for reason in branch_architecture_problems(drv_branch, arch):
                problems.append(_problem(drv_var, reason, fix_branch))
            rec = RECOMMENDED_MIN_BRANCH.get(arch)
            if rec and drv_branch < rec and not branch_architecture_problems(drv_branch, arch):
                notes.append('%s GPUs are supported from branch %d, NVIDIA recommends %d or newer'
                             % (arch, ARCHITECTURES[arch]['min_branch'], rec))
        if kernel_module == 'open' and drv_branch < OPEN_KERNEL_MODULE_MIN_BRANCH:
            problems.append(_problem(VAR_KERNEL_MODULE, 'driver branch %d has no open kernel modules (they start '
                                     'with branch %d)' % (drv_branch, OPEN_KERNEL_MODULE_MIN_BRANCH),
                                     "set %s to 'proprietary' or %s to '%d' or newer"
                                     % (VAR_KERNEL_MODULE, VAR_BRANCH, OPEN_KERNEL_MODULE_MIN_BRANCH)))

    if kernel_module is not None:
        for arch in archs:
            need = ARCHITECTURES[arch]['open_kernel_module']
            if kernel_module == 'open' and need == 'unsupported':
                problems.append(_problem(VAR_KERNEL_MODULE, 'the open kernel modules do not support %s GPUs '
                                         '(Turing or newer only)' % arch,
                                         "set %s to 'proprietary'" % VAR_KERNEL_MODULE))
            if kernel_module == 'proprietary' and need == 'required':
                problems.append(_problem(VAR_KERNEL_MODULE, '%s GPUs are supported only by the open kernel '
                                         'modules' % arch, "set %s to 'open'" % VAR_KERNEL_MODULE))

    if torch is not None:
        problems.extend(_check_torch(torch, cuda, driver, drv_branch, archs, notes))

    if suggestion is None and drv_branch is None and (cuda is not None or archs) and not problems:
        problems.append(_problem(VAR_BRANCH, 'no known driver branch satisfies CUDA %s with %s GPUs'
                                 % (cuda or 'any', ', '.join(archs) or 'these'), fix_branch))
    return {
        'ok': not problems,
        'mode': mode,
        'problems': problems,
        'notes': notes,
        'suggested_driver_branch': suggestion,
    }


def _check_torch(torch, cuda, driver, drv_branch, archs, notes):
    problems = []
    try:
        variants = torch_cuda_variants(torch)
    except ValueError as e:
        return [_problem(VAR_TORCH, str(e), 'use a PyTorch release from the table or check its wheel index')]
    version, local = parse_torch(torch)
    if local is not None and local.startswith('cu'):
        wanted = local
        if wanted not in variants:
            return [_problem(VAR_TORCH, 'torch %s+%s was never published: torch %s has CUDA wheels %s'
                             % (version_str(version), local, version_str(version), ', '.join(variants)),
                             "use one of: %s" % ', '.join('%s+%s' % (version_str(version), v) for v in variants))]
    elif cuda is not None:
        wanted = cuda_tag(cuda)
        if wanted not in variants:
            # A wheel of the same CUDA major runs on this toolkit's driver through minor version
            # compatibility, since wheels bundle their own CUDA runtime.
            same_major = [v for v in variants if tag_cuda(v).split('.')[0] == str(cuda_major_minor(cuda)[0])]
            if same_major:
                wanted = max(same_major, key=lambda v: cuda_major_minor(tag_cuda(v)))
                notes.append('torch %s has no %s wheel; %s wheels bundle their own CUDA runtime and run on this '
                             'driver' % (version_str(version), cuda_tag(cuda), wanted))
            else:
                return [_problem(VAR_TORCH, 'torch %s has no wheel for CUDA %d.x (published: %s)'
                                 % (version_str(version), cuda_major_minor(cuda)[0], ', '.join(variants)),
                                 "pick a torch release with a %s wheel, or set %s to the CUDA of one of: %s"
                                 % (cuda_tag(cuda), VAR_CUDA, ', '.join(variants)))]
    else:
        wanted = variants[-1]
    for arch in torch_missing_architectures(torch, wanted):
        if arch in archs:
            problems.append(_problem(VAR_TORCH, 'torch %s %s wheels have no kernels for %s GPUs'
                                     % (version_str(version), wanted, arch),
                                     'use an older CUDA variant (e.g. cu126) or an older torch release'))
    wheel_cuda = tag_cuda(wanted)
    major = parse_version(wheel_cuda)[0]
    minor_min = CUDA_MINOR_COMPAT_MIN_DRIVER.get(major)
    if driver is not None:
        ok = version_ge(driver, minor_min) if minor_min else version_ge(driver, cuda_min_driver(wheel_cuda))
        have = 'driver %s' % driver
    elif drv_branch is not None:
        need = minor_min or cuda_min_driver(wheel_cuda)
        ok = drv_branch >= driver_branch(need)
        have = 'driver branch %d' % drv_branch
    else:
        ok = True
        have = None
    if not ok:
        problems.append(_problem(VAR_TORCH, 'torch %s %s wheels need driver >= %s, %s is older'
                                 % (version_str(version), wanted, minor_min or cuda_min_driver(wheel_cuda), have),
                                 "use a torch wheel for an older CUDA, or raise %s" % VAR_BRANCH))
    return problems
