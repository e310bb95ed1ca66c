# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The acceptance test's judgements on what the GPUs did (pure functions, no Ansible objects): the nvcc target
arguments for the GPUs' compute capabilities, and each GPU's measured copy bandwidth against its model's nominal
device-memory bandwidth (_data_gpu.MEMORY_BANDWIDTH_GBPS). The topology and NVLink checks are in _topology.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import math
import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_lookup

_CC = re.compile(r'^([0-9]+)\.([0-9]+)$')
_ARCH = re.compile(r'^(?:sm|compute)_[0-9]+[a-z]?$')
_MEASURED = re.compile(r'^bandwidth_gbps=([0-9]+(?:\.[0-9]+)?)\s*$', re.M)


def nvcc_arch_args(compute_caps, fallback_arch):
    """nvcc's target arguments for the compute capabilities that ``nvidia-smi --query-gpu=compute_cap`` printed
    (one per GPU: ``9.0`` -> ``-gencode=arch=compute_90,code=sm_90``, each once, in the order first seen), or
    ``-arch=<fallback_arch>`` when it printed none (drivers before R510 do not know the field)."""
    if not isinstance(fallback_arch, str) or not _ARCH.match(fallback_arch):
        raise ValueError('the fallback architecture must be an nvcc architecture such as "sm_70", got %r' % (fallback_arch,))
    if compute_caps is None:
        compute_caps = []
    if isinstance(compute_caps, str) or not isinstance(compute_caps, (list, tuple)):
        raise ValueError('expected the lines nvidia-smi printed (a list), got %s' % type(compute_caps).__name__)
    caps = []
    for line in compute_caps:
        match = _CC.match(str(line).strip())
        if match and match.group(1) + match.group(2) not in caps:
            caps.append(match.group(1) + match.group(2))
    if not caps:
        return ['-arch=%s' % fallback_arch]
    return ['-gencode=arch=compute_%s,code=sm_%s' % (cc, cc) for cc in caps]


def check_nominal_table(extra):
    """The user's extra [regular expression, GB/s] pairs, checked: a list of (compiled pattern, float, text)."""
    if extra is None:
        return []
    if not isinstance(extra, (list, tuple)):
        raise ValueError('gpu_acceptance_nominal_bandwidth_gbps must be a list of [regular expression of the nvidia-smi name, '
                         'GB/s] pairs, got %s' % type(extra).__name__)
    rows = []
    for number, pair in enumerate(extra):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[0], str) \
                or isinstance(pair[1], bool) or not isinstance(pair[1], (int, float, str)):
            raise ValueError('gpu_acceptance_nominal_bandwidth_gbps entry %d must be a pair [regular expression of the nvidia-smi name, GB/s] such as '
                             '["H100 PCIe", 2000], got %r' % (number, pair))
        try:
            pattern = re.compile(pair[0])
        except re.error as e:
            raise ValueError('gpu_acceptance_nominal_bandwidth_gbps entry %d: %r is not a regular expression: %s' % (number, pair[0], e))
        try:
            gbps = float(pair[1])
        except ValueError:
            raise ValueError('gpu_acceptance_nominal_bandwidth_gbps entry %d: %r is not a number of GB/s' % (number, pair[1]))
        if not math.isfinite(gbps) or gbps <= 0:
            raise ValueError('gpu_acceptance_nominal_bandwidth_gbps entry %d: the nominal bandwidth of %r must be a number of GB/s more than 0, '
                             'got %r' % (number, pair[0], pair[1]))
        rows.append((pattern, gbps, pair[0]))
    return rows


def nominal_bandwidth(name, extra=None):
    """(GB/s, source) of a GPU's nvidia-smi name: the user's extra pairs first, then the datasheet table; (None, None)
    when nothing matches. source is ``'gpu_acceptance_nominal_bandwidth_gbps'`` or ``'datasheet'``."""
    for pattern, gbps, _text in check_nominal_table(extra):
        if pattern.search(name):
            return gbps, 'gpu_acceptance_nominal_bandwidth_gbps'
    gbps = _gpu_lookup.memory_bandwidth_gbps(name)
    return (float(gbps), 'datasheet') if gbps is not None else (None, None)


def measured_bandwidth(stdout):
    """The GB/s of the sample's ``bandwidth_gbps=<n>`` line, or None."""
    match = _MEASURED.search(stdout or '')
    return float(match.group(1)) if match else None


def bandwidth_verdict(gpu, stdout, min_ratio, extra=None, unknown_model='fail'):
    """One GPU's copy bandwidth judged: ``{'index', 'name', 'pci_bus_id', 'measured_gbps', 'nominal_gbps',
    'minimum_gbps', 'ok', 'message'}``.

    gpu is the GPU as gpu_facts reports it (index, name, pci_bus_id); stdout is what ``sample bandwidth`` printed on it.
    A GPU passes when it measured at least min_ratio x its model's nominal figure; a model with no nominal figure
    passes only when unknown_model is ``warn``; a run without a ``bandwidth_gbps=`` line fails."""
    if not isinstance(gpu, dict) or not isinstance(gpu.get('name'), str):
        raise ValueError('expected a GPU as gpuops.gpu_server.gpu_facts reports it (index, name, pci_bus_id), got %r' % (gpu,))
    try:
        ratio = float(min_ratio)
    except (TypeError, ValueError):
        raise ValueError('the minimum ratio (gpu_acceptance_bandwidth_min_ratio) must be a number between 0 and 1, such as 0.85, '
                         'got %r' % (min_ratio,))
    if not 0 < ratio <= 1:
        raise ValueError('the minimum ratio (gpu_acceptance_bandwidth_min_ratio) must be more than 0 and at most 1, such as 0.85, '
                         'got %r' % (min_ratio,))
    if unknown_model not in ('fail', 'warn'):
        raise ValueError("unknown_model (gpu_acceptance_unknown_model) must be 'fail' or 'warn', got %r" % (unknown_model,))
    label = 'GPU %s (%s, %s)' % (gpu.get('index'), gpu['name'], gpu.get('pci_bus_id'))
    nominal, source = nominal_bandwidth(gpu['name'], extra)
    measured = measured_bandwidth(stdout)
    verdict = {'index': gpu.get('index'), 'name': gpu['name'], 'pci_bus_id': gpu.get('pci_bus_id'),
               'measured_gbps': measured, 'nominal_gbps': nominal, 'nominal_source': source,
               'minimum_gbps': nominal * ratio if nominal else None}
    if measured is None:
        return dict(verdict, ok=False, message='%s: the sample printed no bandwidth_gbps= line: %s'
                    % (label, ' / '.join((stdout or '').splitlines()) or 'no output'))
    if nominal is None:
        return dict(verdict, ok=unknown_model == 'warn',
                    message='%s: measured %.0f GB/s, but no nominal figure is known for this model: add [name regex, GB/s] '
                            'to gpu_acceptance_nominal_bandwidth_gbps%s'
                            % (label, measured, ' (not compared)' if unknown_model == 'warn' else ''))
    if measured >= nominal * ratio:
        return dict(verdict, ok=True, message='%s: %.0f GB/s (nominal %.0f GB/s, minimum %.0f)'
                    % (label, measured, nominal, nominal * ratio))
    return dict(verdict, ok=False, message='%s: copy bandwidth %.0f GB/s is below %.0f GB/s (%.2f x the nominal %.0f GB/s%s)'
                % (label, measured, nominal * ratio, ratio, nominal,
                   ', from gpu_acceptance_nominal_bandwidth_gbps' if source != 'datasheet' else ''))
