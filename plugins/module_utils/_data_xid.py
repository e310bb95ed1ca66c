# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Data: the Xid codes this collection knows, with their severity. Literals only, one row per line.

_kernel_log.py classifies with it; the gpu_monitoring role ships this file with the textfile collector.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# Source: NVIDIA "XID Errors" (https://docs.nvidia.com/deploy/xid-errors/index.html), the catalog
# of Xid codes with their likely causes and recommended actions. 'fail': hardware, firmware or
# interconnect fault that needs a GPU reset, node drain or service; 'warn': usually the application
# or driver state (a job crashed), worth a look but not a broken GPU.
XID_CATALOG = {
    13: ('warn', 'Graphics Engine Exception (usually an application error, e.g. out-of-range access)'),
    31: ('warn', 'GPU memory page fault (usually an application error: illegal address)'),
    32: ('warn', 'Invalid or corrupted push buffer stream'),
    38: ('warn', 'Driver firmware error'),
    43: ('warn', 'GPU stopped processing (a channel was reset, usually after an application fault)'),
    45: ('warn', 'Preemptive cleanup, due to previous errors (processes killed or channel reset)'),
    48: ('fail', 'Double Bit ECC Error (uncorrectable memory error)'),
    56: ('warn', 'Display Engine error'),
    57: ('fail', 'Error programming video memory interface'),
    58: ('fail', 'Unstable video memory interface detected'),
    61: ('fail', 'Internal micro-controller breakpoint/warning (GPU reset recommended)'),
    62: ('fail', 'Internal micro-controller halt (GPU reset required)'),
    63: ('warn', 'ECC page retirement or row remapping recording event (takes effect after a GPU reset)'),
    64: ('fail', 'ECC page retirement or row remapper recording failure'),
    68: ('warn', 'NVDEC0 Exception (video decoder)'),
    69: ('warn', 'Graphics Engine class error'),
    74: ('fail', 'NVLink Error'),
    79: ('fail', 'GPU has fallen off the bus'),
    92: ('fail', 'High single-bit ECC error rate'),
    94: ('fail', 'Contained ECC error (affected applications killed; GPU reset needed)'),
    95: ('fail', 'Uncontained ECC error (all applications on the GPU affected; GPU reset needed)'),
    109: ('warn', 'Context Switch Timeout Error'),
    119: ('fail', 'GSP RPC timeout (GPU System Processor did not respond)'),
    120: ('fail', 'GSP error'),
    121: ('warn', 'C2C link corrected error'),
    140: ('fail', 'Unrecovered ECC error'),
    154: ('fail', 'GPU recovery action changed (the driver asks for a reset, reboot or drain)'),
}
