# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The acceptance test's CUDA sample (gpu_acceptance; cuda_toolkit's verify compiles it too): no read of managed memory
after it is freed (nvcc 13.0 on an H200: rc 139)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

SAMPLE = os.path.join(ROOT, 'roles', 'gpu_acceptance', 'templates', 'gpu_acceptance_sample.cu.j2')


def test_no_use_after_free():
    with open(SAMPLE) as f:
        # without comments and string literals (they say "y[17]" and "cudaFree(y)" too)
        code = re.sub(r'//[^\n]*|"(?:[^"\\]|\\.)*"', '""', f.read())
    for buffer in ('x', 'y', 'src', 'dst'):
        for free in re.finditer(r'cudaFree\(%s\)' % buffer, code):
            # the rest of the function that freed it
            rest = code[free.end():code.find('\n}', free.end())]
            assert not re.search(r'(?<![\w.])%s\[' % buffer, rest), 'reads %s after cudaFree(%s)' % (buffer, buffer)


def test_checks_every_element_and_runs_bandwidth_and_p2p_modes():
    with open(SAMPLE) as f:
        code = f.read()
    assert 'saxpy WRONG' in code and 'bandwidth_gbps=' in code and 'cudaMemcpyPeer' in code
