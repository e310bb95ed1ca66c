# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""PyTorch wheels: the CUDA variants published for a torch release, wheel tags (``cu121``) and CUDA versions, and
the architectures a wheel no longer builds for; from the tables in _data_torch.py.

No input makes a public function raise anything but CompatError (a ValueError, in _compat_versions.py) with a
message that names what is wrong and the form expected.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._compat_versions import (
    CompatError, cuda_major_minor, parse_torch, short_repr, version_str)
from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_torch import TORCH_CUDA_VARIANTS, TORCH_DROPS


def torch_cuda_variants(torch):
    """CUDA wheel tags published for a torch release. Raises CompatError for an unknown release."""
    version, _local = parse_torch(torch)
    key = version[:2] if len(version) > 1 else (version[0], 0)
    if key not in TORCH_CUDA_VARIANTS:
        raise CompatError('torch %s is not in the table of PyTorch releases (known: %s)'
                          % (version_str(version), ', '.join('%d.%d' % k for k in sorted(TORCH_CUDA_VARIANTS))))
    return list(TORCH_CUDA_VARIANTS[key])


def cuda_tag(cuda):
    major, minor = cuda_major_minor(cuda)
    return 'cu%d%d' % (major, minor)


_WHEEL_TAG_RE = re.compile(r'cu([0-9]{2,3})\Z')


def tag_cuda(tag):
    """``'cu118'`` -> ``'11.8'``, ``'cu130'`` -> ``'13.0'``."""
    m = _WHEEL_TAG_RE.match(tag) if isinstance(tag, str) else None
    if not m:
        raise CompatError('expected a CUDA wheel tag such as "cu121", got %s' % short_repr(tag))
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
