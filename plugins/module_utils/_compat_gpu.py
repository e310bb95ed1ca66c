# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""GPU architectures and driver branches: which branches drive which architecture, which branches have open or
proprietary kernel modules, the newest branch the tables know, and a GPU's architecture from its PCI id, chip or
product name (the exact lookups live in _gpu_lookup.py). The knowledge is data in _data_cuda.py and _data_gpu.py.

No input makes a public function raise anything but CompatError (a ValueError, in _compat_versions.py) with a
message that names what is wrong and the form expected.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.plugins.module_utils._compat_versions import (
    CompatError, driver_branch, short_repr)
from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_cuda import (
    KNOWN_BRANCHES, OPEN_KERNEL_MODULE_MIN_BRANCH, PROPRIETARY_KERNEL_MODULE_END_BRANCH)
from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_gpu import ARCHITECTURE_ALIASES, ARCHITECTURE_ROWS
from ansible_collections.gpuops.gpu_server.plugins.module_utils._gpu_lookup import (
    chip_architecture, normalize_pci_id, pci_id_info, product_architecture)


# The newest driver branch the tables know: a newer one is refused unless allow_unknown_branch says to go on.
NEWEST_KNOWN_BRANCH = max(KNOWN_BRANCHES)
# The newest known branch that still has proprietary kernel modules.
LAST_PROPRIETARY_BRANCH = max(b for b in KNOWN_BRANCHES if b < PROPRIETARY_KERNEL_MODULE_END_BRANCH)
# Name -> {compute_capabilities, first_cuda, last_cuda, min_branch, last_branch, recommended_branch,
# open_kernel_module}, from the rows of _data_gpu.ARCHITECTURE_ROWS (oldest first).
_ARCHITECTURE_FIELDS = ('compute_capabilities', 'first_cuda', 'last_cuda', 'min_branch', 'last_branch',
                        'recommended_branch', 'open_kernel_module')
ARCHITECTURES = dict((row[0], dict(zip(_ARCHITECTURE_FIELDS, row[1:]))) for row in ARCHITECTURE_ROWS)
ARCHITECTURE_ORDER = tuple(row[0] for row in ARCHITECTURE_ROWS)
RECOMMENDED_MIN_BRANCH = dict((name, info['recommended_branch']) for name, info in ARCHITECTURES.items()
                              if info['recommended_branch'])


def canonical_architecture(name):
    """Case-insensitive lookup of an architecture name (``'ada'``, ``'Ada Lovelace'``) -> canonical, or None."""
    if not isinstance(name, str):
        return None
    low = ' '.join(name.split()).lower()
    if low in ARCHITECTURE_ALIASES:
        return ARCHITECTURE_ALIASES[low]
    for arch in ARCHITECTURE_ORDER:
        if arch.lower() == low:
            return arch
    return None


def architecture_info(arch):
    canon = canonical_architecture(arch)
    if canon is None:
        raise CompatError('unknown GPU architecture %s (known: %s)' % (short_repr(arch), ', '.join(ARCHITECTURE_ORDER)))
    info = dict(ARCHITECTURES[canon])
    info['name'] = canon
    return info


def driver_supports_architecture(driver, arch):
    """Whether a driver branch (``'535'``) or version (``'535.104.05'``) drives ``arch``."""
    return not branch_architecture_problems(driver_branch(driver), arch)


def branch_architecture_problems(branch, arch):
    """Reasons why driver branch ``branch`` (``535``, or any form :func:`driver_branch` reads) cannot drive ``arch``
    (empty list when it can)."""
    branch = driver_branch(branch)
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


def unknown_branch_problem(branch):
    """Why driver branch ``branch`` (any form :func:`driver_branch` reads) cannot be checked: it is newer than every
    branch the tables know (NEWEST_KNOWN_BRANCH). None for a branch that is not newer."""
    branch = driver_branch(branch)
    if branch <= NEWEST_KNOWN_BRANCH:
        return None
    return ('driver branch %d is newer than the newest branch known here (%d): which GPUs, kernel module flavours and '
            'CUDA versions it supports is not known, so it cannot be checked' % (branch, NEWEST_KNOWN_BRANCH))


def branch_kernel_module_problem(branch, kernel_module):
    """Why driver branch ``branch`` has no kernel modules of flavour ``kernel_module`` (``'open'`` or
    ``'proprietary'``), or None when it has them."""
    branch = driver_branch(branch)
    if kernel_module == 'open' and branch < OPEN_KERNEL_MODULE_MIN_BRANCH:
        return 'driver branch %d has no open kernel modules (they start with branch %d)' % (
            branch, OPEN_KERNEL_MODULE_MIN_BRANCH)
    if kernel_module == 'proprietary' and branch >= PROPRIETARY_KERNEL_MODULE_END_BRANCH:
        return ('driver branch %d has no proprietary kernel modules (NVIDIA removed them with branch %d; the last '
                'branch known here that has them is %d)' % (branch, PROPRIETARY_KERNEL_MODULE_END_BRANCH,
                                                            LAST_PROPRIETARY_BRANCH))
    return None


def gpu_architecture(pci_id_or_name):
    """Architecture from a PCI id (``10de:2330``), a chip code name (``GP108``) or a product name; None when unknown."""
    info = pci_id_info(pci_id_or_name)
    if info is not None:
        return info['architecture']
    if normalize_pci_id(pci_id_or_name) is not None:
        return None
    return chip_architecture(pci_id_or_name) or product_architecture(pci_id_or_name)
