# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Judge a host's AMD GPU facts (_amd_facts.py): checks with _health.py's result shape, each ok, warn or fail.

Checks: the driver; the GPU count; uncorrectable and corrected ECC (the amdgpu RAS counts); RAS bad pages (pending,
unreservable, at the device's threshold); each temperature against the device's own critical and emergency limits;
throttling; XGMI links down, an XGMI error status, and fully connected models joined to fewer peers than the host
has.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils._health import FAIL, OK, WARN, worst

DEFAULT_THRESHOLDS = {
    'ecc_correctable_max': 1000,      # corrected ECC errors since the driver loaded (the NVIDIA check's default)
    'temperature_margin_c': 5,        # warn this close to a sensor's critical temperature
    'bad_pages_max': None,            # fail at this many retired pages; None: the device's own threshold only
}

# Models whose GPUs on one baseboard are all joined to each other by XGMI: "seven ... AMD Infinity Fabric links ... to
# form a fully connected 8-GPU system" (ROCm/ROCm docs/conceptual/gpu-arch/mi300.md for the MI300X; the MI325X
# platform is the same baseboard, AMD's MI325X platform text: "Seven Infinity Fabric links ensuring full connectivity
# between eight GPUs"). Cards joined by optional bridges (MI100, MI210) and the dual-GCD MI250 are not expected to be.
FULLY_CONNECTED = ('MI300X', 'MI325X')


def _check(name, gpu, status, value, message):
    return {'check': name, 'gpu': gpu, 'status': status, 'value': value, 'message': message}


def _label(gpu):
    return 'GPU %s (%s)' % (gpu.get('index'), gpu.get('pci_bus_id') or gpu.get('name') or 'unknown bus id')


def _temperature_checks(gpu, t, label):
    out = []
    idx = gpu.get('index')
    temps = gpu.get('temperatures_c') or {}
    limits = gpu.get('temperature_limits_c') or {}
    judged = False
    for sensor in ('edge', 'junction', 'mem'):
        temp = temps.get(sensor)
        limit = limits.get(sensor) or {}
        crit, emerg = limit.get('critical'), limit.get('emergency')
        if temp is None or (crit is None and emerg is None):
            continue
        judged = True
        if emerg is not None and temp >= emerg:
            status, why = FAIL, 'at or above its emergency (shutdown) temperature %s C' % emerg
        elif crit is not None and temp >= crit:
            status, why = FAIL, 'at or above its critical temperature %s C' % crit
        elif crit is not None and crit - temp <= t['temperature_margin_c']:
            status, why = WARN, 'within %s C of its critical temperature %s C' % (t['temperature_margin_c'], crit)
        else:
            status, why = OK, 'below its limits (critical %s C, emergency %s C)' % (crit, emerg)
        out.append(_check('temperature', idx, status, temp, '%s: %s temperature %s C, %s' % (label, sensor, temp, why)))
    if not judged and gpu.get('temperature_c') is not None:
        out.append(_check('temperature', idx, OK, gpu['temperature_c'],
                          '%s: %s C; the GPU reports no temperature limit, not judged' % (label, gpu['temperature_c'])))
    return out


def _bad_page_checks(gpu, t, label):
    pages = gpu.get('bad_pages')
    if not pages:
        return []
    idx = gpu.get('index')
    retired = pages.get('retired') or 0
    limit = gpu.get('bad_page_threshold')
    if t['bad_pages_max'] is not None:
        limit = t['bad_pages_max'] if limit is None else min(limit, t['bad_pages_max'])
    if pages.get('unreservable'):
        return [_check('bad_pages', idx, FAIL, pages, '%s: %d bad VRAM pages could not be retired (flag F): the GPU '
                       'needs service' % (label, pages['unreservable']))]
    if limit is not None and retired >= limit:
        return [_check('bad_pages', idx, FAIL, pages, '%s: %d VRAM pages retired, at the limit of %d: replace the GPU'
                       % (label, retired, limit))]
    if pages.get('pending'):
        return [_check('bad_pages', idx, WARN, pages, '%s: %d bad VRAM pages pending retirement (flag P)'
                       % (label, pages['pending']))]
    if retired:
        return [_check('bad_pages', idx, WARN, pages, '%s: %d VRAM pages retired%s' % (
            label, retired, ' (limit %d)' % limit if limit is not None else ''))]
    return [_check('bad_pages', idx, OK, pages, '%s: no bad VRAM pages' % label)]


def _xgmi_checks(gpu, peers_expected, label):
    out = []
    idx = gpu.get('index')
    links = gpu.get('xgmi_links')
    if links is not None:
        down = [link for link in links if link.get('status') != 'ENABLED']
        up = len(links) - len(down)
        if down:
            out.append(_check('xgmi_links', idx, FAIL, up, '%s: XGMI link to %s not enabled (%s)' % (
                label, ', '.join('GPU %s (%s)' % (link.get('peer'), link.get('peer_bus_id')) for link in down),
                ', '.join(str(link.get('status')) for link in down))))
        elif peers_expected and up < peers_expected:
            out.append(_check('xgmi_links', idx, FAIL, up, '%s: a %s joined by XGMI to %d of its %d peers (the '
                              'baseboard joins every pair)' % (label, gpu.get('model'), up, peers_expected)))
        elif links:
            out.append(_check('xgmi_links', idx, OK, up, '%s: %d XGMI links enabled' % (label, up)))
    status = gpu.get('xgmi_error')
    if status is not None:
        bad = 'NO_ERRORS' not in status.upper()
        out.append(_check('xgmi_error', idx, WARN if bad else OK, status, '%s: XGMI error status %s' % (label, status)))
    return out


def _gpu_checks(gpu, t, peers_expected):
    label = _label(gpu)
    idx = gpu.get('index')
    out = []
    volatile = (gpu.get('ecc_errors') or {}).get('volatile') or {}
    unc, corr = volatile.get('uncorrected'), volatile.get('corrected')
    if unc:
        out.append(_check('ecc_uncorrectable', idx, FAIL, unc,
                          '%s: %d uncorrectable ECC errors since the driver loaded' % (label, unc)))
    elif unc is not None:
        out.append(_check('ecc_uncorrectable', idx, OK, 0, '%s: no uncorrectable ECC errors' % label))
    if corr is not None:
        bad = corr > t['ecc_correctable_max']
        out.append(_check('ecc_correctable', idx, WARN if bad else OK, corr,
                          '%s: %d corrected ECC errors since the driver loaded%s'
                          % (label, corr, ' (over %d)' % t['ecc_correctable_max'] if bad else '')))
    out.extend(_bad_page_checks(gpu, t, label))
    out.extend(_temperature_checks(gpu, t, label))
    if gpu.get('throttled') is not None:
        reasons = gpu.get('throttle_reasons') or []
        out.append(_check('throttling', idx, WARN if gpu['throttled'] else OK, reasons,
                          '%s: %s' % (label, ('throttled: ' + (', '.join(reasons) or 'reason not reported'))
                                      if gpu['throttled'] else 'not throttled')))
    out.extend(_xgmi_checks(gpu, peers_expected, label))
    return out


def evaluate(facts, expected_gpu_count=None, thresholds=None):
    """Checks for a host's ``ansible_facts.amd``. Returns ``{'status', 'checks', 'failing'}``."""
    t = dict(DEFAULT_THRESHOLDS)
    t.update(dict((k, v) for k, v in (thresholds or {}).items() if v is not None))
    checks = []
    pci = facts.get('pci_devices') or []
    if facts.get('driver_loaded'):
        checks.append(_check('driver_loaded', None, OK, facts.get('source'),
                             'amdgpu loaded (GPUs read from %s)' % facts.get('source')))
    else:
        checks.append(_check('driver_loaded', None, FAIL, False, 'AMD GPUs not usable: %s (%d AMD GPUs on the PCI '
                             'bus)' % (facts.get('reason'), len(pci))))
    gpus = facts.get('gpus') or []
    count = len(gpus)
    if expected_gpu_count is not None:
        checks.append(_check('gpu_count', None, OK if count == expected_gpu_count else FAIL, count,
                             '%d AMD GPUs described, expected %d' % (count, expected_gpu_count)))
    elif facts.get('driver_loaded'):
        if len(pci) > count:
            checks.append(_check('gpu_count', None, FAIL, count, '%d AMD GPUs on the PCI bus but %s describes %d'
                                 % (len(pci), facts.get('source'), count)))
        else:
            checks.append(_check('gpu_count', None, OK, count, '%d AMD GPUs described' % count))
    for gpu in gpus:
        model = _amd_gpu.model_info(gpu.get('model'))
        peers = None
        if model and gpu.get('model') in FULLY_CONNECTED and model['xgmi_links']:
            same = sum(1 for g in gpus if g.get('model') == gpu.get('model'))
            peers = min(same - 1, model['xgmi_links'])
        checks.extend(_gpu_checks(gpu, t, peers))
    status = worst(c['status'] for c in checks)
    return {'status': status, 'checks': checks, 'failing': [c for c in checks if c['status'] != OK]}
