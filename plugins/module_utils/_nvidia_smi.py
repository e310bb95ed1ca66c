# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Tolerant reader of ``nvidia-smi -q -x`` output, from the 3xx drivers to today.

The XML schema (nvsmi_device_v4 ... v12 DTDs) renamed elements over time; this reader accepts
every spelling it knows and returns plain dicts: numbers as int/float, ``None`` for anything the
GPU does not report (``N/A``, ``[N/A]``, ``Not Supported``, ``[Unknown Error]`` ...).

Renames handled (old -> new):
- ``power_readings`` -> ``gpu_power_readings`` (R535); ``power_limit`` -> ``current_power_limit``;
  ``power_draw`` -> ``instant_power_draw`` / ``average_power_draw`` (R550).
- ``clocks_throttle_reasons``/``clocks_throttle_reason_*`` -> ``clocks_event_reasons``/``clocks_event_reason_*`` (R535).
- ``retired_pages/pending_blacklist`` -> ``retired_pages/pending_retirement`` (R418).
- ECC counters ``single_bit``/``double_bit`` blocks -> ``sram_*``/``dram_*`` counters (R535+).
New blocks read when present: ``remapped_rows`` (Ampere+, R450), ``gpu_recovery_action`` and
``gpu_reset_status`` (R550+), ``product_architecture`` (R450), ``cuda_version`` (R410), temperature
thresholds relative to T.Limit (``gpu_temp_tlimit``, ``gpu_temp_*_tlimit_threshold``, R570/R580 on
datacenter GPUs, which then print no absolute ``gpu_temp_slow_threshold``).

The DOCTYPE (external or with an inline internal subset) is removed before parsing and the text is
parsed with ``xml.etree.ElementTree`` without any entity resolution: a report that declares entities or a
second DOCTYPE is refused.

No input makes :func:`parse` raise anything but :class:`NvidiaSmiParseError`. A field whose text is not a
number nvidia-smi could print is unreadable and comes back as ``None``, like ``N/A``: digits other than ASCII
(Arabic-Indic, fullwidth), numbers of more than 20 digits (NVML counters are 64-bit; Python refuses to convert integers of
more than 4300 digits) and numbers outside +-2**64 (a float that would overflow to infinity).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re
import xml.etree.ElementTree as ET

_DOCTYPE_START_RE = re.compile(r'<!DOCTYPE', re.IGNORECASE)
_ENTITY_RE = re.compile(r'<!ENTITY\b', re.IGNORECASE)
# ASCII digits only: str.isdigit(), int() and a plain \d also take Arabic-Indic or fullwidth digits.
_NUMBER_RE = re.compile(r'([-+]?)([0-9]+)((?:\.[0-9]+)?)\s*([A-Za-z%/]*)', re.ASCII)

# NVML reports no value wider than 64 bits; a longer figure is not a reading.
NUMBER_MAX_DIGITS = 20
NUMBER_MAX = 2 ** 64

# What nvidia-smi prints when it has no value (with or without brackets, any case).
_UNREPORTED = frozenset([
    'n/a', 'not supported', 'not available', 'unknown error', 'unknown', 'insufficient permissions',
    'requested functionality has been deprecated', 'gpu requires reset', 'not found', 'none available',
    '',
])


class NvidiaSmiParseError(ValueError):
    """The text is not an nvidia-smi XML report."""


def strip_doctype(text):
    """Remove the first DOCTYPE declaration (and any inline internal subset) from ``text``.

    ``<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">`` or with an internal subset ``[ ... ]>``.
    One forward scan, linear in the length of ``text`` (a regular expression that retries at every
    ``<!DOCTYPE`` grows super-linearly on hostile output). A declaration that does not end is left in
    place, for the XML parser to refuse.
    """
    m = _DOCTYPE_START_RE.search(text)
    if m is None:
        return text
    start, pos = m.start(), m.end()
    if pos < len(text) and (text[pos].isalnum() or text[pos] == '_'):
        return text
    gt = text.find('>', pos)
    bracket = text.find('[', pos)
    if bracket < 0 or (0 <= gt < bracket):
        return text if gt < 0 else text[:start] + text[gt + 1:]
    close = bracket
    while True:
        close = text.find(']', close + 1)
        if close < 0:
            return text
        end = close + 1
        while end < len(text) and text[end].isspace():
            end += 1
        if end < len(text) and text[end] == '>':
            return text[:start] + text[end + 1:]


def value(text):
    """Normalise one printed value: stripped string, or None when nvidia-smi did not report it."""
    if text is None:
        return None
    text = ' '.join(text.split())
    bare = text[1:-1].strip() if text.startswith('[') and text.endswith(']') else text
    if bare.lower() in _UNREPORTED:
        return None
    return text


def number(text):
    """``"81559 MiB"`` -> 81559, ``"70.00 W"`` -> 70.0, ``"16x"`` -> 16, ``"35 C"`` -> 35; None otherwise.

    None as well for a figure that is no reading: non-ASCII digits, more than NUMBER_MAX_DIGITS digits before
    the point, or beyond +-NUMBER_MAX (never inf or nan).
    """
    text = value(text)
    if text is None:
        return None
    m = _NUMBER_RE.fullmatch(text)
    if not m:
        return None
    sign, whole, fraction = m.group(1), m.group(2).lstrip('0') or '0', m.group(3)
    if len(whole) > NUMBER_MAX_DIGITS:
        # Unreadable, not an error: int() refuses more than 4300 digits, float() overflows to infinity.
        return None
    result = float(sign + whole + fraction) if fraction else int(sign + whole)
    if not -NUMBER_MAX <= result <= NUMBER_MAX:
        return None
    return result


def flag(text, true_words=('enabled', 'yes', 'active', 'on'), false_words=('disabled', 'no', 'not active', 'off')):
    """Enabled/Yes/Active -> True, Disabled/No/Not Active -> False, anything else -> None."""
    text = value(text)
    if text is None:
        return None
    low = text.lower()
    if low in true_words:
        return True
    if low in false_words:
        return False
    return None


def _find(el, *paths):
    """First element found for any of ``paths`` (old and new spellings), or None."""
    if el is None:
        return None
    for path in paths:
        found = el.find(path)
        if found is not None:
            return found
    return None


def _text(el, *paths):
    found = _find(el, *paths)
    return value(found.text) if found is not None else None


def _num(el, *paths):
    """The first of ``paths`` that holds a number (an element may exist but say N/A)."""
    if el is None:
        return None
    for path in paths:
        found = el.find(path)
        if found is not None:
            n = number(found.text)
            if n is not None:
                return n
    return None


def _flag(el, *paths):
    found = _find(el, *paths)
    return flag(found.text) if found is not None else None


# PCI domains are 16 bits (nvidia-smi prints them with 8 digits); a longer "domain" is no bus id.
_BUS_ID_RE = re.compile(r'([0-9a-f]{1,8}):([0-9a-f]{2}):([0-9a-f]{2})(?:\.([0-7]))?')
_PCI_DEVICE_ID_RE = re.compile(r'(?:0x)?([0-9a-fA-F]{8})')


def normalize_bus_id(bus_id):
    """``00000000:07:00.0`` -> ``0000:07:00.0`` (the form sysfs and lspci -D use), lower case."""
    bus_id = value(bus_id)
    if bus_id is None:
        return None
    bus_id = bus_id.lower()
    m = _BUS_ID_RE.fullmatch(bus_id)
    if not m:
        return bus_id
    domain = int(m.group(1), 16)
    return '%04x:%s:%s.%s' % (domain, m.group(2), m.group(3), m.group(4) or '0')


def pci_device_id(raw):
    """nvidia-smi prints ``0x233010DE`` (device id high word, vendor low word) -> ``10de:2330``."""
    raw = value(raw)
    if raw is None:
        return None
    m = _PCI_DEVICE_ID_RE.fullmatch(raw)
    if not m:
        return None
    word = m.group(1).lower()
    return '%s:%s' % (word[4:], word[:4])


def _sum(values):
    known = [v for v in values if v is not None]
    if not known:
        return None
    return sum(known)


def _ecc_counts(block):
    """Corrected / uncorrected totals of one ``volatile`` or ``aggregate`` block, any schema."""
    if block is None:
        return {'corrected': None, 'uncorrected': None}
    # Old schema (up to R530): single_bit/total and double_bit/total.
    corrected = _num(block, 'single_bit/total')
    uncorrected = _num(block, 'double_bit/total')
    if corrected is None and block.find('single_bit') is None:
        # New schema (R535+): SRAM and DRAM counters.
        corrected = _sum([_num(block, 'sram_correctable'), _num(block, 'dram_correctable')])
    if uncorrected is None and block.find('double_bit') is None:
        sram_unc = _num(block, 'sram_uncorrectable')
        if sram_unc is None:
            # R550+ aggregate splits SRAM uncorrectable by detection mechanism.
            sram_unc = _sum([_num(block, 'sram_uncorrectable_parity'), _num(block, 'sram_uncorrectable_secded')])
        uncorrected = _sum([sram_unc, _num(block, 'dram_uncorrectable')])
    return {'corrected': corrected, 'uncorrected': uncorrected}


_CLOCK_REASON_PREFIXES = ('clocks_event_reason_', 'clocks_throttle_reason_')


def _clock_event_reasons(gpu):
    """Names of the active clock event (throttle) reasons, e.g. ``['hw_slowdown', 'sw_power_cap']``."""
    block = _find(gpu, 'clocks_event_reasons', 'clocks_throttle_reasons')
    if block is None:
        return None
    active = []
    seen_any = False
    for child in block:
        name = child.tag
        for prefix in _CLOCK_REASON_PREFIXES:
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        state = flag(child.text)
        if state is not None:
            seen_any = True
        if state:
            active.append(name)
    if not seen_any:
        return None
    return active


def _retired_pages(gpu):
    block = gpu.find('retired_pages')
    if block is None:
        return None
    single = _num(block, 'multiple_single_bit_retirement/retired_count')
    double = _num(block, 'double_bit_retirement/retired_count')
    pending = _flag(block, 'pending_retirement', 'pending_blacklist')
    if single is None and double is None and pending is None:
        return None
    return {
        'single_bit_ecc': single,
        'double_bit_ecc': double,
        'total': _sum([single, double]),
        'pending': pending,
    }


def _remapped_rows(gpu):
    block = gpu.find('remapped_rows')
    if block is None:
        return None
    result = {
        'correctable': _num(block, 'remapped_row_corr'),
        'uncorrectable': _num(block, 'remapped_row_unc'),
        'pending': _flag(block, 'remapped_row_pending'),
        'failure': _flag(block, 'remapped_row_failure'),
    }
    if all(v is None for v in result.values()):
        return None
    return result


def _recovery_action(gpu):
    text = _text(gpu, 'gpu_recovery_action')
    if text is None or text.lower() == 'none':
        return None
    return text


def _slowdown_margin(temp):
    """Degrees Celsius left before the GPU slows itself down, and what the figure comes from.

    Drivers from R570/R580 on report the thresholds relative to the GPU's T.Limit: ``gpu_temp_tlimit`` is
    the headroom (T.Limit minus the current temperature) and ``gpu_temp_slow_tlimit_threshold`` the
    headroom at which slowdown starts (-2 C: 2 C past T.Limit), so the margin is their difference. Older
    drivers report an absolute ``gpu_temp_slow_threshold``: the margin is that minus ``gpu_temp``.
    Returns ``(margin, 'tlimit' | 'absolute')`` or ``(None, None)`` when the GPU reports neither.
    """
    headroom = _num(temp, 'gpu_temp_tlimit')
    slow_tlimit = _num(temp, 'gpu_temp_slow_tlimit_threshold')
    if headroom is not None and slow_tlimit is not None:
        return headroom - slow_tlimit, 'tlimit'
    current, slow = _num(temp, 'gpu_temp'), _num(temp, 'gpu_temp_slow_threshold')
    if current is not None and slow is not None:
        return slow - current, 'absolute'
    return None, None


def parse_gpu(gpu, index=None):
    """One ``<gpu>`` element -> dict."""
    pci = gpu.find('pci')
    link = _find(pci, 'pci_gpu_link_info')
    temp = gpu.find('temperature')
    power = _find(gpu, 'gpu_power_readings', 'power_readings')
    fb = gpu.find('fb_memory_usage')
    ecc = gpu.find('ecc_errors')
    bus_id = gpu.get('id') or _text(pci, 'pci_bus_id')
    mig_devices = gpu.find('mig_devices')
    mig_mode = _flag(gpu, 'mig_mode/current_mig')
    slowdown_margin, slowdown_source = _slowdown_margin(temp)
    mig_count = None
    if mig_mode is not None:
        mig_count = len(mig_devices.findall('mig_device')) if mig_devices is not None else 0
    return {
        'index': index,
        'name': _text(gpu, 'product_name'),
        'brand': _text(gpu, 'product_brand'),
        'architecture': _text(gpu, 'product_architecture'),
        'uuid': _text(gpu, 'uuid'),
        'serial': _text(gpu, 'serial'),
        'vbios_version': _text(gpu, 'vbios_version'),
        'minor_number': _num(gpu, 'minor_number'),
        'pci_bus_id': normalize_bus_id(bus_id),
        'pci_device_id': pci_device_id(_text(pci, 'pci_device_id')),
        'pci_sub_system_id': pci_device_id(_text(pci, 'pci_sub_system_id')),
        'pcie_gen_current': _num(link, 'pcie_gen/current_link_gen', 'pcie_gen/device_current_link_gen'),
        'pcie_gen_max': _num(link, 'pcie_gen/max_link_gen', 'pcie_gen/max_device_link_gen'),
        'pcie_width_current': _num(link, 'link_widths/current_link_width'),
        'pcie_width_max': _num(link, 'link_widths/max_link_width'),
        'persistence_mode': _flag(gpu, 'persistence_mode'),
        'mig_mode': mig_mode,
        'mig_mode_pending': _flag(gpu, 'mig_mode/pending_mig'),
        'mig_device_count': mig_count,
        'ecc_mode': _flag(gpu, 'ecc_mode/current_ecc'),
        'ecc_mode_pending': _flag(gpu, 'ecc_mode/pending_ecc'),
        'memory_total_mib': _num(fb, 'total'),
        'memory_used_mib': _num(fb, 'used'),
        'utilization_gpu_pct': _num(gpu, 'utilization/gpu_util'),
        'temperature_c': _num(temp, 'gpu_temp'),
        'temperature_slowdown_c': _num(temp, 'gpu_temp_slow_threshold'),
        'temperature_shutdown_c': _num(temp, 'gpu_temp_max_threshold'),
        'temperature_tlimit_c': _num(temp, 'gpu_temp_tlimit'),
        'temperature_slowdown_tlimit_c': _num(temp, 'gpu_temp_slow_tlimit_threshold'),
        'temperature_shutdown_tlimit_c': _num(temp, 'gpu_temp_max_tlimit_threshold'),
        'temperature_slowdown_margin_c': slowdown_margin,
        'temperature_threshold_source': slowdown_source,
        'memory_temperature_c': _num(temp, 'memory_temp'),
        'power_draw_w': _num(power, 'power_draw', 'instant_power_draw', 'average_power_draw'),
        'power_limit_w': _num(power, 'current_power_limit', 'enforced_power_limit', 'power_limit'),
        'power_limit_max_w': _num(power, 'max_power_limit'),
        'ecc_errors': {
            'volatile': _ecc_counts(_find(ecc, 'volatile')),
            'aggregate': _ecc_counts(_find(ecc, 'aggregate')),
        },
        'retired_pages': _retired_pages(gpu),
        'remapped_rows': _remapped_rows(gpu),
        'clock_event_reasons': _clock_event_reasons(gpu),
        'recovery_action': _recovery_action(gpu),
        'reset_required': _flag(gpu, 'gpu_reset_status/reset_required'),
    }


def parse(text):
    """Parse the whole report. Returns a dict:

    ``timestamp``, ``driver_version``, ``cuda_version`` (the highest CUDA the driver supports, None on
    drivers older than R410), ``attached_gpus`` (what the driver counted), ``gpus`` (what the report
    describes; may be fewer when nvidia-smi lost a GPU mid-report).
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', errors='replace')
    if not isinstance(text, str):
        raise NvidiaSmiParseError('nvidia-smi output is %s, not text' % type(text).__name__)
    if not text or '<nvidia_smi_log' not in text:
        raise NvidiaSmiParseError('no <nvidia_smi_log> element in nvidia-smi output')
    body = strip_doctype(text)
    if _ENTITY_RE.search(body):
        # An entity declaration outside a DOCTYPE is not something nvidia-smi prints; refuse it.
        raise NvidiaSmiParseError('nvidia-smi output declares XML entities; refusing to parse it')
    if _DOCTYPE_START_RE.search(body):
        # nvidia-smi prints one DOCTYPE (removed above); the parser would read the internal subset of another.
        raise NvidiaSmiParseError('nvidia-smi output holds a DOCTYPE declaration that could not be removed (a second '
                                  'one, or one that does not end); refusing to parse it')
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise NvidiaSmiParseError('nvidia-smi output is not well-formed XML: %s' % e)
    except UnicodeError as e:
        # A str with lone surrogates (not from _command.run, which decodes with errors='replace').
        raise NvidiaSmiParseError('nvidia-smi output is not valid text: %s' % e)
    if root.tag != 'nvidia_smi_log':
        raise NvidiaSmiParseError('root element is <%s>, expected <nvidia_smi_log>' % root.tag)
    gpus = [parse_gpu(g, i) for i, g in enumerate(root.findall('gpu'))]
    return {
        'timestamp': _text(root, 'timestamp'),
        'driver_version': _text(root, 'driver_version'),
        'cuda_version': _text(root, 'cuda_version'),
        'attached_gpus': _num(root, 'attached_gpus'),
        'gpus': gpus,
    }
