# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Which driver a CUDA toolkit needs: the minimum Linux x86_64 driver of each CUDA release (full compatibility)
and of each major version (minor version compatibility), read from the table in _data_cuda.py (each row with its
source), and the CUDA version a driver runs.

No input makes a public function raise anything but CompatError (a ValueError, in _compat_versions.py) with a
message that names what is wrong and the form expected.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._compat_versions import (
    CompatError, parse_cuda, parse_driver_version, short_repr, version_ge, version_str)
from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_cuda import (
    CUDA_MINOR_COMPAT_MIN_DRIVER, CUDA_RELEASES)


_RELEASE_RE = re.compile(r'(?:GA|RC|Update ([0-9]+))\Z')


def _release_key(cuda, release):
    """``('12.2', 'Update 2')`` -> (12, 2, 2); ``('12.2', 'GA')`` -> (12, 2, 0)."""
    m = _RELEASE_RE.match(release)
    if not m:
        raise CompatError('CUDA release %r of %s is neither GA, RC nor "Update N"' % (release, cuda))
    major, minor = (int(p) for p in cuda.split('.'))
    return (major, minor, int(m.group(1) or 0))


# (major, minor, update) -> minimum driver; update 0 is the GA (or RC) row.
CUDA_TOOLKIT_MIN_DRIVER = dict((_release_key(c, r), d) for c, r, d in CUDA_RELEASES)


def known_cuda_versions():
    """Every CUDA major.minor in the table, oldest first, as strings."""
    return ['%d.%d' % mm for mm in sorted(set(k[:2] for k in CUDA_TOOLKIT_MIN_DRIVER))]


def cuda_min_driver(cuda, mode='toolkit'):
    """Minimum Linux driver for CUDA ``cuda`` (``'11.8'``, ``'12.2.2'``).

    mode ``toolkit``: the driver that the release notes list for that toolkit (full compatibility).
    mode ``minor``: the minimum under CUDA minor version compatibility (CUDA 11 and later).
    Raises CompatError for a version the tables do not know.
    """
    if mode not in ('toolkit', 'minor'):
        raise CompatError("mode must be 'toolkit' or 'minor', got %s" % short_repr(mode))
    major, minor, update = parse_cuda(cuda)
    v = (major, minor, update) if update else (major, minor)
    if mode == 'minor':
        if major not in CUDA_MINOR_COMPAT_MIN_DRIVER:
            raise CompatError('CUDA %s has no minor version compatibility (it exists for CUDA %s)'
                              % (version_str(v), ', '.join('%d.x' % m for m in sorted(CUDA_MINOR_COMPAT_MIN_DRIVER))))
        return CUDA_MINOR_COMPAT_MIN_DRIVER[major]
    rows = sorted(k for k in CUDA_TOOLKIT_MIN_DRIVER if k[:2] == (major, minor) and k[2] <= update)
    if not rows:
        raise CompatError('CUDA %s is not in the table of CUDA releases (known: %s)'
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
