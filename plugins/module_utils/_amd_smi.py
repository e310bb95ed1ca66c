# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Read amd-smi's and rocm-smi's JSON into the GPU records of ansible_facts.amd.

amd-smi prints its per-GPU records as a bare list (ROCm 6.x) or as ``{"gpu_data": [...]}`` (ROCm 7.x). The shape is
told from the JSON itself, never from a version string: a host may run any amd-smi, and a version string says
nothing about the document in hand.

amd-smi prints memory sizes with the unit "MB" and means MiB: the library computes ``vram_size = total / (1024 *
1024)`` (ROCm/amdsmi src/amd_smi/amd_smi.cc, amdsmi_get_gpu_vram_info) and the CLI prints ``total_vram // (1024*1024)``
as "MB" (amdsmi_cli/amdsmi_commands.py, metric --mem-usage), at commit 0ceca28f4139dced5e9b5739a3f393780d7add48.
An MI210 (64 GiB, 65536 MiB) prints 65520 "MB"; read as 10^6 bytes that would be 62484 MiB.

Every figure is None when the tool says "N/A", prints something that is no reading (a bool, a non-ASCII digit, more
than 20 digits, beyond +-2**64, NaN or Infinity) or a unit that is not the expected one. Never raises on a value; a
document that is not amd-smi's or rocm-smi's JSON raises AmdSmiParseError with the reason.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _json_text
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi

# Nesting deeper than this is no amd-smi document (its deepest, static's numa.cpu_affinity, is 5 levels).
MAX_DEPTH = 32
# More GPU records than this is no host's (the largest Instinct platforms hold 8 OAMs; an MI300X in CPX mode shows
# 8 partitions each: 64).
MAX_GPUS = 1024

# amd-smi's memory units are binary (amdsmi_cli/amdsmi_helpers.py convert_bytes divides by 1024 per step; see the
# module docstring for "MB"): unit -> MiB per unit.
_MIB_PER_UNIT = {'B': 1.0 / (1024 * 1024), 'KB': 1.0 / 1024, 'MB': 1, 'GB': 1024, 'TB': 1024 * 1024}
# amd-smi's temperature sensors (metric: edge, hotspot, mem; static limits: edge, hotspot, vram) under the names the
# kernel's hwmon labels give them (Documentation/gpu/amdgpu/thermal.rst: temp1 edge, temp2 junction, temp3 mem).
SENSORS = ('edge', 'junction', 'mem')
_SMI_SENSOR = {'edge': 'edge', 'hotspot': 'junction', 'junction': 'junction', 'mem': 'mem', 'vram': 'mem'}

_BDF_RE = re.compile(r'([0-9a-f]{4,8}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])\Z', re.ASCII)
_HEX16_RE = re.compile(r'0x([0-9a-f]{1,4})\Z', re.ASCII)
_CARD_RE = re.compile(r'card([0-9]{1,4})\Z', re.ASCII)


class AmdSmiParseError(ValueError):
    """The text is not the JSON document the tool prints."""


def _reject_constant(name):
    raise ValueError('%s is not a JSON number' % name)


def load(text, what):
    """The JSON document in ``text`` (a tool's standard output); AmdSmiParseError naming ``what`` otherwise."""
    if not isinstance(text, str):
        raise AmdSmiParseError('%s printed no text' % what)
    if not text.strip():
        raise AmdSmiParseError('%s printed nothing' % what)
    deep = _json_text.too_deep(text, MAX_DEPTH)
    if deep is not None:
        raise AmdSmiParseError('%s printed JSON nested deeper than %d levels (at offset %d)' % (what, MAX_DEPTH, deep))
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as e:
        raise AmdSmiParseError('%s printed no valid JSON: %s' % (what, e))


def records(data, what):
    """amd-smi's per-GPU records and the shape they came in: ``(list, 'list')`` for a bare list (ROCm 6.x),
    ``(list, 'gpu_data')`` for ``{"gpu_data": [...]}`` (ROCm 7.x). Told from the document, never a version."""
    if isinstance(data, list):
        shape, items = 'list', data
    elif isinstance(data, dict) and 'gpu_data' in data:
        shape, items = 'gpu_data', data['gpu_data']
        if not isinstance(items, list):
            raise AmdSmiParseError('%s: "gpu_data" is a %s, not a list of GPUs' % (what, type(items).__name__))
    else:
        raise AmdSmiParseError('%s printed neither a list of GPUs nor an object with "gpu_data" (got %s)'
                               % (what, 'an object with keys %s' % ', '.join(sorted(str(k) for k in data)[:5])
                                  if isinstance(data, dict) else 'a %s' % type(data).__name__))
    if len(items) > MAX_GPUS:
        raise AmdSmiParseError('%s describes %d GPUs, more than any host holds (%d)' % (what, len(items), MAX_GPUS))
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise AmdSmiParseError('%s: GPU entry %d is a %s, not an object' % (what, i, type(item).__name__))
    return items, shape


def number(raw):
    """A reading: an int or float from JSON (never a bool), or a string such as ``"32.0"``; None otherwise."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, int):
        return raw if -_nvidia_smi.NUMBER_MAX <= raw <= _nvidia_smi.NUMBER_MAX else None
    if isinstance(raw, float):
        return raw if -_nvidia_smi.NUMBER_MAX <= raw <= _nvidia_smi.NUMBER_MAX else None   # nan compares False
    if isinstance(raw, str):
        return _nvidia_smi.number(raw)
    return None


def reading(raw, unit=None):
    """``{"value": 35, "unit": "C"}`` (amd-smi since units were added) or a bare value (older amd-smi) -> number.

    With ``unit``, a value whose printed unit differs is None (never a figure in the wrong unit)."""
    if isinstance(raw, dict):
        if unit is not None and raw.get('unit') != unit:
            return None
        raw = raw.get('value')
    return number(raw)


def mib(raw):
    """A memory size as amd-smi prints it (``{"value": 65520, "unit": "MB"}``) -> MiB, as the tool means its units;
    a bare number is amd-smi's MB as well. None for another unit or no reading."""
    if isinstance(raw, dict):
        per = _MIB_PER_UNIT.get(raw.get('unit'))
        value = number(raw.get('value'))
        if per is None or value is None:
            return None
    else:
        per, value = 1, number(raw)
        if value is None:
            return None
    result = value * per
    if result < 0:
        return None
    return int(result) if result == int(result) else result


def count(raw):
    """A non-negative whole count, or None."""
    n = number(raw)
    return n if isinstance(n, int) and n >= 0 else None


def text(raw):
    """A printed string with its whitespace (line breaks included) collapsed; None for N/A, empty or not a string."""
    if not isinstance(raw, str):
        return None
    raw = ' '.join(''.join(ch if ch.isprintable() else ' ' for ch in raw).split())
    return None if not raw or raw.upper() == 'N/A' else raw


def bus_id(raw):
    """``'0000:2F:00.0'`` -> ``'0000:2f:00.0'``; None when not a PCI address."""
    raw = text(raw)
    if raw is None:
        return None
    m = _BDF_RE.match(raw.lower())
    if not m:
        return None
    return '%04x:%s:%s.%s' % (int(m.group(1), 16), m.group(2), m.group(3), m.group(4))


def pci_device_id(vendor, device):
    """``('0x1002', '0x740f')`` -> ``'1002:740f'``; None unless both are 16-bit hex ids."""
    ids = []
    for raw in (vendor, device):
        raw = text(raw)
        m = _HEX16_RE.match(raw.lower()) if raw else None
        if not m:
            return None
        ids.append('%04x' % int(m.group(1), 16))
    return '%s:%s' % tuple(ids)


def _get(record, *path):
    for key in path:
        if not isinstance(record, dict):
            return None
        record = record.get(key)
    return record


def empty_gpu(index):
    """A GPU record with every key, each unknown."""
    return {
        'index': index, 'name': None, 'pci_bus_id': None, 'pci_device_id': None, 'model': None, 'gfx_target': None,
        'memory_total_mib': None, 'temperature_c': None,
        'temperatures_c': dict((s, None) for s in SENSORS),
        'temperature_limits_c': dict((s, {'critical': None, 'emergency': None}) for s in SENSORS),
        'power_draw_w': None, 'power_limit_w': None, 'gpu_busy_percent': None,
        'ecc_errors': {'volatile': {'corrected': None, 'uncorrected': None},
                       'aggregate': {'corrected': None, 'uncorrected': None}},
        'bad_pages': None, 'bad_page_threshold': None, 'throttled': None, 'throttle_reasons': None,
        'xgmi_links': None, 'xgmi_error': None, 'source': None,
    }


def finish(gpu):
    """Fill what follows from the others: the model and gfx target of a known PCI id, the GPU temperature."""
    info = _amd_gpu.pci_id_info(gpu['pci_device_id'])
    named = _amd_gpu.name_info(gpu['name'])
    if info is None or (named and len(info['models']) > 1 and set(named['models']) < set(info['models'])):
        info = named or info                           # 740c (MI250X/MI250) with the name "... MI250 ...": MI250
    if info:
        gpu['model'] = gpu['model'] or info['model']
        gpu['gfx_target'] = gpu['gfx_target'] or info['gfx_target']
    temps = gpu['temperatures_c']
    # The junction (hotspot) sensor is the die's hottest point; amd-smi prints edge as N/A where the edge limit is 0
    # (MI300: amdsmi_commands.py metric --temperature), so the junction reading is the GPU temperature, then edge.
    gpu['temperature_c'] = temps['junction'] if temps['junction'] is not None else temps['edge']
    return gpu


def _static_fields(gpu, rec):
    asic = rec.get('asic') if isinstance(rec.get('asic'), dict) else {}
    gpu['name'] = text(asic.get('market_name'))
    gpu['pci_device_id'] = pci_device_id(asic.get('vendor_id'), asic.get('device_id'))
    target = text(asic.get('target_graphics_version'))
    gpu['gfx_target'] = target if target and re.match(r'gfx[0-9a-f]{3,5}\Z', target, re.ASCII) else None
    gpu['pci_bus_id'] = bus_id(_get(rec, 'bus', 'bdf'))
    gpu['memory_total_mib'] = mib(_get(rec, 'vram', 'size'))
    # The device's bad page threshold as amd-smi static --ras prints it (ras.bad_page_threshold, 655 in the MI210
    # capture; the driver's amdgpu.bad_page_threshold): the health check's limit for retired pages.
    threshold = count(_get(rec, 'ras', 'bad_page_threshold'))
    gpu['bad_page_threshold'] = threshold if threshold else None
    limit = rec.get('limit') if isinstance(rec.get('limit'), dict) else {}
    gpu['power_limit_w'] = reading(limit.get('socket_power'), 'W')
    for smi, sensor in (('edge', 'edge'), ('hotspot', 'junction'), ('vram', 'mem')):
        # slowdown is the CRITICAL temperature metric, shutdown the EMERGENCY one (amdsmi_commands.py static --limit).
        gpu['temperature_limits_c'][sensor] = {
            'critical': reading(limit.get('slowdown_%s_temperature' % smi), 'C'),
            'emergency': reading(limit.get('shutdown_%s_temperature' % smi), 'C')}


def _metric_fields(gpu, rec):
    temps = rec.get('temperature') if isinstance(rec.get('temperature'), dict) else {}
    for key, raw in temps.items():
        sensor = _SMI_SENSOR.get(key)
        if sensor:
            gpu['temperatures_c'][sensor] = reading(raw, 'C')
    power = rec.get('power') if isinstance(rec.get('power'), dict) else {}
    gpu['power_draw_w'] = reading(power.get('socket_power'), 'W')
    status = text(power.get('throttle_status'))
    gpu['throttled'] = {'THROTTLED': True, 'UNTHROTTLED': False}.get(status)
    # amd-smi metric --throttle: <reason>_violation_status, 1/true while the reason holds (amdsmi_commands.py, from
    # amdsmi_get_violation_status' active_* fields); "N/A" where the GPU does not report it.
    suffix = '_violation_status'
    known = {}
    throttle = rec.get('throttle') if isinstance(rec.get('throttle'), dict) else {}
    for key, value in throttle.items():
        if not isinstance(key, str) or not key.endswith(suffix):
            continue
        if value is True or value is False or (isinstance(value, int) and value in (0, 1)):
            known[key[:-len(suffix)]] = bool(value)
    if known:
        gpu['throttle_reasons'] = sorted(name for name, active in known.items() if active)
        gpu['throttled'] = bool(gpu['throttle_reasons']) or gpu['throttled'] is True
    elif gpu['throttled'] is not None:
        gpu['throttle_reasons'] = ['throttle_status'] if gpu['throttled'] else []
    ecc = rec.get('ecc') if isinstance(rec.get('ecc'), dict) else {}
    # The amdgpu RAS counts, which the driver keeps in memory (amdgpu_ras.c): counts since the driver loaded.
    gpu['ecc_errors']['volatile'] = {'corrected': count(ecc.get('total_correctable_count')),
                                     'uncorrected': count(ecc.get('total_uncorrectable_count'))}
    usage = rec.get('mem_usage') if isinstance(rec.get('mem_usage'), dict) else {}
    total = mib(usage.get('total_vram'))
    if total is not None:
        gpu['memory_total_mib'] = total
    busy = reading(_get(rec, 'usage', 'gfx_activity'), '%')
    gpu['gpu_busy_percent'] = busy if busy is not None and 0 <= busy <= 100 else None
    xgmi = text(rec.get('xgmi_err'))
    gpu['xgmi_error'] = xgmi


def _index(rec, position):
    idx = rec.get('gpu')
    return idx if isinstance(idx, int) and not isinstance(idx, bool) and 0 <= idx < MAX_GPUS else position


def parse_amd_smi(static_text, metric_text, topology_text=None):
    """GPU records from ``amd-smi static --json`` and ``amd-smi metric --json`` (and ``amd-smi topology --json`` for
    the XGMI links, when given). Returns ``(gpus, shapes)``; shapes names each document's shape."""
    static, s_shape = records(load(static_text, 'amd-smi static --json'), 'amd-smi static --json')
    metric, m_shape = records(load(metric_text, 'amd-smi metric --json'), 'amd-smi metric --json')
    shapes = {'static': s_shape, 'metric': m_shape}
    gpus = {}
    for what, items, fill in (('amd-smi static --json', static, _static_fields),
                              ('amd-smi metric --json', metric, _metric_fields)):
        seen = set()
        for pos, rec in enumerate(items):
            idx = _index(rec, pos)
            if idx in seen:
                raise AmdSmiParseError('%s describes GPU %d twice' % (what, idx))
            seen.add(idx)
            fill(gpus.setdefault(idx, empty_gpu(idx)), rec)
    if topology_text is not None:
        topo, shapes['topology'] = records(load(topology_text, 'amd-smi topology --json'), 'amd-smi topology --json')
        for pos, rec in enumerate(topo):
            gpu = gpus.get(_index(rec, pos))
            if gpu is not None:
                gpu['xgmi_links'] = xgmi_links(rec)
    result = []
    for idx in sorted(gpus):
        gpu = finish(gpus[idx])
        gpu['source'] = 'amd-smi'
        result.append(gpu)
    return result, shapes


def xgmi_links(rec):
    """The XGMI links of one GPU in ``amd-smi topology --json``: ``[{'peer', 'peer_bus_id', 'status'}]`` for each
    link whose ``link_type`` is XGMI, status as amd-smi prints ``link_status`` (ENABLED, DISABLED); None when the
    record lists no links."""
    links = rec.get('links')
    if not isinstance(links, list):
        return None
    out = []
    for link in links:
        if not isinstance(link, dict) or text(link.get('link_type')) != 'XGMI':
            continue
        peer = link.get('gpu')
        out.append({'peer': peer if isinstance(peer, int) and not isinstance(peer, bool) else None,
                    'peer_bus_id': bus_id(link.get('bdf')),
                    'status': text(link.get('link_status'))})
    return out


# rocm-smi ---------------------------------------------------------------------------------------------------------

# ``rocm-smi -a --json``: {"card0": {"Temperature (Sensor junction) (C)": "35.0", ...}, "system": {...}}.
_ROCM_TEMPS = (('edge', 'Temperature (Sensor edge) (C)'), ('junction', 'Temperature (Sensor junction) (C)'),
               ('mem', 'Temperature (Sensor memory) (C)'))


def parse_rocm_smi(text_out):
    """GPU records from ``rocm-smi -a --json``. rocm-smi prints every value as a string."""
    data = load(text_out, 'rocm-smi -a --json')
    if not isinstance(data, dict):
        raise AmdSmiParseError('rocm-smi -a --json printed a %s, not an object of cards' % type(data).__name__)
    cards = []
    for key, rec in data.items():
        m = _CARD_RE.match(key) if isinstance(key, str) else None
        if not m:
            continue                                   # "system" and anything else that is no card
        if not isinstance(rec, dict):
            raise AmdSmiParseError('rocm-smi -a --json: %s is a %s, not an object' % (key, type(rec).__name__))
        cards.append((int(m.group(1)), rec))
    if len(cards) > MAX_GPUS:
        raise AmdSmiParseError('rocm-smi -a --json describes %d cards, more than any host holds' % len(cards))
    gpus = []
    for idx, rec in sorted(cards, key=lambda c: c[0]):
        gpu = empty_gpu(idx)
        gpu['name'] = text(rec.get('Card series')) or text(rec.get('Card Series'))
        gpu['pci_bus_id'] = bus_id(rec.get('PCI Bus'))
        gpu['pci_device_id'] = pci_device_id('0x1002', rec.get('GPU ID'))
        for sensor, key in _ROCM_TEMPS:
            gpu['temperatures_c'][sensor] = number(rec.get(key))
        gpu['power_draw_w'] = number(rec.get('Average Graphics Package Power (W)'))
        if gpu['power_draw_w'] is None:
            gpu['power_draw_w'] = number(rec.get('Current Socket Graphics Package Power (W)'))
        gpu['power_limit_w'] = number(rec.get('Max Graphics Package Power (W)'))
        vram = count(rec.get('VRAM Total Memory (B)'))
        gpu['memory_total_mib'] = vram // (1024 * 1024) if vram is not None else None
        busy = number(rec.get('GPU use (%)'))
        gpu['gpu_busy_percent'] = busy if busy is not None and 0 <= busy <= 100 else None
        gpu['source'] = 'rocm-smi'
        gpus.append(finish(gpu))
    return gpus
