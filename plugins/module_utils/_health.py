# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Judge a host's GPU facts and kernel Xid events: a list of checks, each ok, warn or fail."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pci

OK, WARN, FAIL = 'ok', 'warn', 'fail'
SEVERITY = {OK: 0, WARN: 1, FAIL: 2}

DEFAULT_THRESHOLDS = {
    'ecc_correctable_max': 1000,      # volatile corrected ECC errors since the driver loaded
    'retired_pages_max': 60,          # NVIDIA retires at most 64 pages per GPU (dynamic page retirement)
    'temperature_margin_c': 5,        # warn this close to the slowdown temperature
    'require_persistence_mode': True,
}

# Warn at this temperature when the GPU reports no slowdown threshold at all (consumer boards); the same
# figure as the gpu_monitoring alert's gpu_monitoring_temperature_fallback_celsius default.
TEMPERATURE_FALLBACK_C = 83

# Clock event reasons that mean the hardware is slowing itself down (not idle, not app clocks).
SLOWDOWN_REASONS = ('hw_slowdown', 'hw_thermal_slowdown', 'hw_power_brake_slowdown', 'sw_thermal_slowdown')


def worst(statuses):
    result = OK
    for s in statuses:
        if SEVERITY[s] > SEVERITY[result]:
            result = s
    return result


def _check(name, gpu, status, value, message):
    return {'check': name, 'gpu': gpu, 'status': status, 'value': value, 'message': message}


def _label(gpu):
    return 'GPU %s (%s)' % (gpu.get('index'), gpu.get('pci_bus_id') or gpu.get('uuid') or 'unknown bus id')


def _temperature_check(gpu, t, label):
    """Distance to slowdown: from the T.Limit thresholds where the driver reports them (R570/R580 on),
    else from the absolute slowdown threshold; without either, the fixed fallback temperature."""
    idx = gpu.get('index')
    temp, slow = gpu.get('temperature_c'), gpu.get('temperature_slowdown_c')
    margin = gpu.get('temperature_slowdown_margin_c')
    source = gpu.get('temperature_threshold_source')
    if margin is None and temp is not None and slow is not None:
        margin, source = slow - temp, 'absolute'         # facts from before T.Limit support
    if margin is not None:
        if margin <= 0:
            status = FAIL
        elif margin <= t['temperature_margin_c']:
            status = WARN
        else:
            status = OK
        now = ('%d C, ' % temp) if temp is not None else ''
        if source == 'tlimit':
            message = '%s: %s%d C below its slowdown temperature (T.Limit headroom %s C, slowdown at %s C of it)' % (
                label, now, margin, gpu.get('temperature_tlimit_c'), gpu.get('temperature_slowdown_tlimit_c'))
        else:
            message = '%s: %sslowdown at %d C' % (label, now, slow) if slow is not None else \
                '%s: %s%d C below its slowdown temperature' % (label, now, margin)
        return [_check('temperature', idx, status, temp if temp is not None else margin, message)]
    if temp is None:
        return []
    fallback = t.get('temperature_fallback_c', TEMPERATURE_FALLBACK_C)
    status = WARN if temp >= fallback else OK
    return [_check('temperature', idx, status, temp,
                   '%s: %d C; the GPU reports no slowdown threshold, judged against %d C' % (label, temp, fallback))]


def _gpu_checks(gpu, t):
    label = _label(gpu)
    idx = gpu.get('index')
    out = []
    volatile = (gpu.get('ecc_errors') or {}).get('volatile') or {}
    aggregate = (gpu.get('ecc_errors') or {}).get('aggregate') or {}
    unc, agg_unc = volatile.get('uncorrected'), aggregate.get('uncorrected')
    if unc:
        out.append(_check('ecc_uncorrectable', idx, FAIL, unc,
                          '%s: %d uncorrectable ECC errors since the driver loaded' % (label, unc)))
    elif agg_unc:
        out.append(_check('ecc_uncorrectable', idx, WARN, agg_unc,
                          '%s: %d uncorrectable ECC errors over its lifetime, none since the driver loaded'
                          % (label, agg_unc)))
    elif unc is not None or agg_unc is not None:
        out.append(_check('ecc_uncorrectable', idx, OK, unc or 0, '%s: no uncorrectable ECC errors' % label))
    corr = volatile.get('corrected')
    if corr is not None:
        bad = corr > t['ecc_correctable_max']
        out.append(_check('ecc_correctable', idx, WARN if bad else OK, corr,
                          '%s: %d corrected ECC errors since the driver loaded%s'
                          % (label, corr, ' (over %d)' % t['ecc_correctable_max'] if bad else '')))
    rows = gpu.get('remapped_rows')
    if rows:
        if rows.get('failure'):
            out.append(_check('row_remapping', idx, FAIL, rows, '%s: row remapping failed: the GPU needs service'
                              % label))
        elif rows.get('pending'):
            out.append(_check('row_remapping', idx, WARN, rows, '%s: a row remap is pending: reset the GPU to apply it'
                              % label))
        else:
            out.append(_check('row_remapping', idx, OK, rows, '%s: no row remapping pending or failed' % label))
    pages = gpu.get('retired_pages')
    if pages:
        total = pages.get('total') or 0
        if total >= t['retired_pages_max']:
            out.append(_check('retired_pages', idx, FAIL, total, '%s: %d pages retired (limit %d): replace the GPU'
                              % (label, total, t['retired_pages_max'])))
        elif pages.get('pending'):
            out.append(_check('retired_pages', idx, WARN, total, '%s: page retirement pending: reset the GPU to apply it'
                              % label))
        else:
            out.append(_check('retired_pages', idx, OK, total, '%s: %d pages retired, none pending' % (label, total)))
    width, width_max = gpu.get('pcie_width_current'), gpu.get('pcie_width_max')
    if width is not None and width_max is not None:
        bad = width < width_max
        out.append(_check('pcie_link_width', idx, WARN if bad else OK, width,
                          '%s: PCIe link x%d of x%d%s' % (label, width, width_max,
                                                          ' (degraded: reseat or check the riser)' if bad else '')))
    out.extend(_temperature_check(gpu, t, label))
    persistence = gpu.get('persistence_mode')
    if persistence is not None and t['require_persistence_mode']:
        out.append(_check('persistence_mode', idx, OK if persistence else WARN, persistence,
                          '%s: persistence mode %s' % (label, 'on' if persistence else 'off (enable nvidia-persistenced)')))
    reasons = gpu.get('clock_event_reasons')
    if reasons is not None:
        active = [r for r in reasons if r in SLOWDOWN_REASONS]
        out.append(_check('clock_slowdown', idx, WARN if active else OK, active,
                          '%s: %s' % (label, ('clocks slowed down: ' + ', '.join(active)) if active
                                      else 'no hardware or thermal slowdown')))
    action = gpu.get('recovery_action')
    if action is not None or gpu.get('reset_required'):
        out.append(_check('recovery_action', idx, FAIL, action or 'reset',
                          '%s: the driver asks for a recovery action: %s' % (label, action or 'GPU reset')))
    return out


def evaluate(facts, xid_events=None, expected_gpu_count=None, thresholds=None, kernel_log_error=None):
    """Checks for a host. Returns ``{'status', 'checks', 'failing'}``; failing lists non-ok checks."""
    t = dict(DEFAULT_THRESHOLDS)
    t.update(dict((k, v) for k, v in (thresholds or {}).items() if v is not None))
    checks = []
    pci_gpus = _pci.gpus(facts.get('pci_devices'))
    if facts.get('driver_loaded'):
        checks.append(_check('driver_loaded', None, OK, facts.get('driver_version'),
                             'NVIDIA driver %s loaded' % facts.get('driver_version')))
    else:
        checks.append(_check('driver_loaded', None, FAIL, False,
                             'NVIDIA driver not usable: %s (%d NVIDIA GPUs on the PCI bus)'
                             % (facts.get('reason'), len(pci_gpus))))
    count = facts.get('gpu_count') or 0
    if expected_gpu_count is not None:
        ok = count == expected_gpu_count
        checks.append(_check('gpu_count', None, OK if ok else FAIL, count,
                             'nvidia-smi describes %d GPUs, expected %d' % (count, expected_gpu_count)))
    elif facts.get('driver_loaded'):
        if pci_gpus and len(pci_gpus) > count:
            checks.append(_check('gpu_count', None, FAIL, count, '%d GPUs on the PCI bus but nvidia-smi describes %d'
                                 % (len(pci_gpus), count)))
        else:
            checks.append(_check('gpu_count', None, OK, count, 'nvidia-smi describes %d GPUs' % count))
    attached = facts.get('attached_gpus')
    if facts.get('driver_loaded') and attached is not None and attached != count:
        checks.append(_check('gpu_count', None, WARN if expected_gpu_count is None else FAIL, count,
                             'the driver counts %d GPUs but nvidia-smi describes only %d' % (attached, count)))
    for gpu in facts.get('gpus') or ():
        checks.extend(_gpu_checks(gpu, t))
    if kernel_log_error:
        checks.append(_check('kernel_log', None, WARN, None, 'kernel log not read: %s' % kernel_log_error))
    for event in xid_events or ():
        gpu = None
        for g in facts.get('gpus') or ():
            if _kernel_log.matches_gpu(event['pci'], g.get('pci_bus_id')):
                gpu = g.get('index')
                break
        where = ('GPU %s (%s)' % (gpu, event['pci'])) if gpu is not None else ('PCI %s' % event['pci'])
        when = event['time'] or 'unknown time'
        code = '?' if event['code'] is None else event['code']     # None: the line's code could not be read
        checks.append(_check('xid', gpu, event['status'], event['code'],
                             '%s: Xid %s at %s: %s' % (where, code, when, event['description'])))
    status = worst(c['status'] for c in checks)
    return {'status': status, 'checks': checks, 'failing': [c for c in checks if c['status'] != OK]}


def reaches(status, fail_on):
    """Whether ``status`` reaches the ``fail_on`` level (``warn``, ``fail`` or ``never``)."""
    if fail_on == 'never':
        return False
    return SEVERITY[status] >= SEVERITY[fail_on]


def levels_reached(status):
    """``{'warn': bool, 'fail': bool, 'never': False}``: whether ``status`` reaches each ``fail_on`` level."""
    return dict((level, reaches(status, level)) for level in ('warn', 'fail', 'never'))


def _failing(checks):
    names = []
    for c in checks:
        if c['check'] not in names:
            names.append(c['check'])
    return names


def summary(result):
    """The rows of a health table for one host's evaluation (as gpu_health returns it, ``nvidia`` included).

    One row per GPU nvidia-smi describes, plus one host-wide row (``gpu`` None) when a host-wide check is not ok or
    no GPU is described. Each row: ``{'gpu', 'name', 'status', 'failing'}``, failing the names of the checks that
    are not ok. An empty result (no evaluation) gives one host-wide row with status ``error``.
    """
    result = result or {}
    checks = result.get('checks') or []
    gpus = (result.get('nvidia') or {}).get('gpus') or []
    rows = []
    wide = [c for c in checks if c.get('gpu') is None and c['status'] != OK]
    if wide or not gpus:
        rows.append({'gpu': None, 'name': None, 'status': worst(c['status'] for c in wide) if wide
                     else result.get('status', 'error'), 'failing': _failing(wide)})
    for gpu in gpus:
        bad = [c for c in checks if c.get('gpu') == gpu.get('index') and c['status'] != OK]
        rows.append({'gpu': gpu.get('index'), 'name': gpu.get('name'), 'status': worst(c['status'] for c in bad),
                     'failing': _failing(bad)})
    return rows
