# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filters of the GPU acceptance test (documented in the adjacent <filter>.yml files): nvcc's target arguments for the
GPUs, each GPU's copy bandwidth against its datasheet, and how the GPUs are joined (topo -m, nvlink -s, peer copies)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from collections.abc import Mapping, Sequence

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _acceptance
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _topology


def nvcc_arch_args(compute_caps, fallback_arch='sm_70'):
    """nvcc's -gencode arguments for the compute capabilities nvidia-smi printed, or -arch=<fallback_arch>."""
    try:
        return _acceptance.nvcc_arch_args(compute_caps, fallback_arch)
    except ValueError as e:
        raise AnsibleFilterError('nvcc_arch_args: %s' % e)


def gpu_bandwidth_verdicts(results, min_ratio=0.85, nominal=None, unknown_model='fail'):
    """One verdict per GPU from the results of a loop that ran ``sample bandwidth`` over gpu_facts' GPUs."""
    if isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise AnsibleFilterError('gpu_bandwidth_verdicts: expected the results of a loop over the GPUs (a list of '
                                 'items with item and stdout), got %s' % type(results).__name__)
    try:
        # The arguments are checked even when there is no result, so that a preflight can call it on [].
        _acceptance.check_nominal_table(nominal)
        _acceptance.bandwidth_verdict({'name': ''}, 'bandwidth_gbps=1', min_ratio, None, unknown_model)
        verdicts = []
        for number, result in enumerate(results):
            if not isinstance(result, Mapping) or not isinstance(result.get('item'), Mapping):
                raise ValueError('result %d is not a loop result over a GPU (item and stdout): %r' % (number, result))
            verdicts.append(_acceptance.bandwidth_verdict(dict(result['item']), result.get('stdout', ''),
                                                          min_ratio, nominal, unknown_model))
        return verdicts
    except ValueError as e:
        raise AnsibleFilterError('gpu_bandwidth_verdicts: %s' % e)


def gpu_link_check(topo, nvlink='', p2p='', gpus=None):
    """Problems with how the GPUs are joined, from the text of topo -m, nvlink -s and the sample's p2p mode, and the
    GPUs gpu_facts reported (their models' NVLink counts)."""
    try:
        return _topology.link_problems(topo, nvlink, p2p, gpus)
    except ValueError as e:
        raise AnsibleFilterError('gpu_link_check: %s' % e)


class FilterModule(object):
    def filters(self):
        return {
            'nvcc_arch_args': nvcc_arch_args,
            'gpu_bandwidth_verdicts': gpu_bandwidth_verdicts,
            'gpu_link_check': gpu_link_check,
        }
