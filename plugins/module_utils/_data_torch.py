# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Data: the CUDA wheels PyTorch published per release. Literals only, one row per line.

The logic that reads these tables lives in _compat_torch.py; tests/unit/plugins/module_utils/test_data.py checks every row.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# Source: https://pytorch.org/get-started/previous-versions/ and the wheel indexes
# https://download.pytorch.org/whl/<variant>/torch/ : (torch major, minor) -> the CUDA variants published.
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
# (first torch, first CUDA of the variant, architectures without kernels)
TORCH_DROPS = (
    ((2, 8), (12, 8), ('Kepler', 'Maxwell', 'Pascal', 'Volta')),
    ((1, 13), (11, 7), ('Kepler',)),
)
