# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""One picture of a host's AMD GPUs: amd-smi, else rocm-smi, else the kernel's sysfs with no ROCm at all.

The sysfs files read (kernel Documentation/gpu/amdgpu/driver-misc.rst and thermal.rst; drivers/gpu/drm/amd/amdgpu/
amdgpu_ras.c "DOC: AMDGPU RAS sysfs Error Count Interface" and "gpu_vram_bad_pages Interface"), under
``<sysfs_root>/class/drm/card<N>/device``:

- ``vendor`` 0x1002, ``device``, ``class`` (0x03xxxx display or 0x12xxxx processing accelerator): an AMD GPU;
- ``mem_info_vram_total``: the VRAM in bytes; ``gpu_busy_percent``: how busy the GPU is, in percent;
- ``hwmon/hwmon*/temp<N>_input`` (millidegrees Celsius) with ``temp<N>_label`` (edge, junction, mem),
  ``temp<N>_crit`` (critical) and ``temp<N>_emergency`` (emergency, the ASIC shuts down);
  ``power1_average`` or ``power1_input`` (microwatts) and ``power1_cap`` (microwatts);
- ``ras/<block>_err_count``: lines ``ue: <n>`` and ``ce: <n>`` (uncorrected, corrected) per IP block;
- ``ras/gpu_vram_bad_pages``: one line per bad page, ``<pfn> : <size> : <flag>``, flag R (reserved: retired),
  P (pending) or F (could not be reserved).

Every file is read with a bound, never through a link at its last component, and only when it is a regular file:
an unreadable, linked or odd file is an unknown value, never an error.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re
import stat

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_smi
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command

AMD_SMI_STATIC = ('static', '--json')
AMD_SMI_METRIC = ('metric', '--json')
AMD_SMI_TOPOLOGY = ('topology', '--json')
ROCM_SMI_ARGS = ('-a', '--json')

# Where AMD's packages install the tools besides PATH.
BIN_DIRS = ['/opt/rocm/bin', '/usr/bin', '/usr/sbin', '/usr/local/bin']

# The options amd_gpu_facts and amd_gpu_health share.
ARGUMENT_SPEC = dict(
    amd_smi_path=dict(type='path'),
    rocm_smi_path=dict(type='path'),
    sysfs_root=dict(type='path', default='/sys'),
    timeout=dict(type='int', default=30),
)

# sysfs attribute files are at most a page; bad page tables a few pages. Read no more.
MAX_FILE_BYTES = 64 * 1024
MAX_CARDS = 256
_GPU_CLASS_BASES = (0x03, 0x12)        # display controller, processing accelerator (PCI Code and ID Assignment)
_CARD_RE = re.compile(r'card([0-9]{1,4})\Z', re.ASCII)
_TEMP_RE = re.compile(r'temp([0-9]{1,2})_input\Z', re.ASCII)
_ERR_COUNT_RE = re.compile(r'([a-z0-9_]{1,32})_err_count\Z', re.ASCII)
_LINE_RE = re.compile(r'(ue|ce): ([0-9]{1,20})\Z', re.ASCII)
_BAD_PAGE_RE = re.compile(r'0x[0-9a-f]{1,16} : 0x[0-9a-f]{1,16} : ([RPF])\Z', re.ASCII | re.I)
_HWMON_LABELS = {'edge': 'edge', 'junction': 'junction', 'mem': 'mem'}


def read_file(path, max_bytes=MAX_FILE_BYTES):
    """The text of a regular file, at most ``max_bytes``; None when missing, unreadable, a link, not a regular file,
    longer than the bound or not ASCII text."""
    flags = os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_NONBLOCK', 0)
    try:
        fd = os.open(path, flags)
    except (IOError, OSError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, max_bytes + 1)
    except (IOError, OSError):
        return None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        return None
    try:
        return data.decode('ascii')
    except UnicodeDecodeError:
        return None


def _int_file(path, base=10):
    raw = read_file(path, 64)
    if raw is None:
        return None
    raw = raw.strip()
    try:
        if base == 16:
            if not re.match(r'0x[0-9a-f]{1,16}\Z', raw, re.ASCII | re.I):
                return None
            return int(raw, 16)
        if not re.match(r'-?[0-9]{1,20}\Z', raw, re.ASCII):
            return None
        return int(raw)
    except ValueError:
        return None


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError):
        return []


def _ras_counts(ras_dir):
    """``{'corrected', 'uncorrected'}`` summed over ``ras/*_err_count``; None when no file could be read."""
    ce = ue = 0
    read_any = False
    for name in _listdir(ras_dir):
        if not _ERR_COUNT_RE.match(name):
            continue
        raw = read_file(os.path.join(ras_dir, name), 4096)
        if raw is None:
            continue
        counts = {}
        for line in raw.splitlines():
            m = _LINE_RE.match(line.strip())
            if m:
                counts[m.group(1)] = int(m.group(2))
        if 'ue' in counts and 'ce' in counts:
            read_any = True
            ue += counts['ue']
            ce += counts['ce']
    return {'corrected': ce, 'uncorrected': ue} if read_any else None


def _bad_pages(ras_dir):
    """``{'retired', 'pending', 'unreservable'}`` from ``ras/gpu_vram_bad_pages``; None when not readable."""
    raw = read_file(os.path.join(ras_dir, 'gpu_vram_bad_pages'))
    if raw is None:
        return None
    result = {'retired': 0, 'pending': 0, 'unreservable': 0}
    key = {'R': 'retired', 'P': 'pending', 'F': 'unreservable'}
    for line in raw.splitlines():
        line = line.strip()
        if not line:
            continue
        m = _BAD_PAGE_RE.match(line)
        if not m:
            return None                                # not the table the kernel prints: unknown, not zero
        result[key[m.group(1).upper()]] += 1
    return result


def _hwmon(device_dir, gpu):
    base = os.path.join(device_dir, 'hwmon')
    for hw in _listdir(base):
        hw_dir = os.path.join(base, hw)
        for name in _listdir(hw_dir):
            m = _TEMP_RE.match(name)
            if not m:
                continue
            n = m.group(1)
            label = (read_file(os.path.join(hw_dir, 'temp%s_label' % n), 64) or '').strip()
            sensor = _HWMON_LABELS.get(label)
            if sensor is None:
                continue
            for key, attr in (('input', 'temp%s_input'), ('critical', 'temp%s_crit'),
                              ('emergency', 'temp%s_emergency')):
                milli = _int_file(os.path.join(hw_dir, attr % n))
                value = milli / 1000.0 if milli is not None and -300000 <= milli <= 300000 else None
                if key == 'input':
                    gpu['temperatures_c'][sensor] = value
                else:
                    gpu['temperature_limits_c'][sensor][key] = value
        power = _int_file(os.path.join(hw_dir, 'power1_average'))
        if power is None:
            power = _int_file(os.path.join(hw_dir, 'power1_input'))
        cap = _int_file(os.path.join(hw_dir, 'power1_cap'))
        if power is not None and 0 <= power <= 10 ** 10:
            gpu['power_draw_w'] = power / 1e6
        if cap is not None and 0 < cap <= 10 ** 10:
            gpu['power_limit_w'] = cap / 1e6


def sysfs_cards(sysfs_root='/sys'):
    """AMD GPUs under ``<sysfs_root>/class/drm/card*/device``: ``(gpus, driver_bound)``, gpus in card order, each a
    GPU record (source ``sysfs``); driver_bound whether any is bound to amdgpu."""
    drm = os.path.join(sysfs_root, 'class', 'drm')
    cards = []
    for name in _listdir(drm):
        m = _CARD_RE.match(name)
        if m:
            cards.append((int(m.group(1)), name))
    gpus, bound, seen = [], False, set()
    for number, name in sorted(cards)[:MAX_CARDS]:
        device_dir = os.path.join(drm, name, 'device')
        if _int_file(os.path.join(device_dir, 'vendor'), 16) != 0x1002:
            continue
        device = _int_file(os.path.join(device_dir, 'device'), 16)
        pci_class = _int_file(os.path.join(device_dir, 'class'), 16)
        if device is None or device > 0xffff or pci_class is None or (pci_class >> 16) not in _GPU_CLASS_BASES:
            continue
        try:
            real = os.path.realpath(device_dir)
        except (IOError, OSError):
            real = device_dir
        bus = _amd_smi.bus_id(os.path.basename(real))
        if bus in seen and bus is not None:
            continue
        seen.add(bus)
        driver_link = os.path.join(device_dir, 'driver')
        try:
            driver = os.path.basename(os.readlink(driver_link))
        except (IOError, OSError):
            driver = None
        bound = bound or driver == 'amdgpu'
        gpu = _amd_smi.empty_gpu(len(gpus))
        gpu['pci_bus_id'] = bus
        gpu['pci_device_id'] = '1002:%04x' % device
        info = _amd_gpu.pci_id_info(gpu['pci_device_id'])
        gpu['name'] = info['product'] if info else None
        vram = _int_file(os.path.join(device_dir, 'mem_info_vram_total'))
        gpu['memory_total_mib'] = vram // (1024 * 1024) if vram is not None and vram >= 0 else None
        busy = _int_file(os.path.join(device_dir, 'gpu_busy_percent'))
        gpu['gpu_busy_percent'] = busy if busy is not None and 0 <= busy <= 100 else None
        _hwmon(device_dir, gpu)
        ras = os.path.join(device_dir, 'ras')
        counts = _ras_counts(ras)
        if counts is not None:
            gpu['ecc_errors']['volatile'] = counts
        gpu['bad_pages'] = _bad_pages(ras)
        gpu['driver'] = driver
        gpu['source'] = 'sysfs'
        gpus.append(_amd_smi.finish(gpu))
    return gpus, bound


def _fill(gpu, card):
    """Fill what a tool left unknown from the card's sysfs record (same PCI address)."""
    for key in ('pci_device_id', 'memory_total_mib', 'power_draw_w', 'power_limit_w', 'gpu_busy_percent',
                'bad_pages', 'name'):
        if gpu.get(key) is None and card.get(key) is not None:
            gpu[key] = card[key]
    for sensor, value in card['temperatures_c'].items():
        if gpu['temperatures_c'].get(sensor) is None:
            gpu['temperatures_c'][sensor] = value
    for sensor, limits in card['temperature_limits_c'].items():
        for key, value in limits.items():
            if gpu['temperature_limits_c'][sensor].get(key) is None:
                gpu['temperature_limits_c'][sensor][key] = value
    vol = gpu['ecc_errors']['volatile']
    if vol['corrected'] is None and vol['uncorrected'] is None:
        gpu['ecc_errors']['volatile'] = dict(card['ecc_errors']['volatile'])
    return _amd_smi.finish(gpu)


def _pci_devices(cards):
    return [{'pci_bus_id': c['pci_bus_id'], 'pci_device_id': c['pci_device_id'], 'model': c['model'],
             'driver': c.get('driver')} for c in cards]


def facts(gpus, cards, driver_loaded, reason, source, notes):
    pci_devices = _pci_devices(cards)
    by_bus = dict((c['pci_bus_id'], c) for c in cards if c['pci_bus_id'])
    out = []
    for gpu in gpus:
        card = by_bus.get(gpu['pci_bus_id'])
        out.append(_fill(gpu, card) if card is not None and gpu is not card else gpu)
    out = [dict((k, v) for k, v in gpu.items() if k != 'driver') for gpu in out]
    return {'driver_loaded': driver_loaded, 'reason': reason, 'source': source, 'gpu_count': len(out), 'gpus': out,
            'pci_devices': pci_devices, 'notes': notes}


def _tool(runner, argv, timeout):
    """``(stdout, None)`` or ``(None, why)``; CommandTimeout propagates (a hung tool means a sick GPU)."""
    try:
        rc, out, err = runner(list(argv), timeout=timeout)
    except _command.CommandNotFound as e:
        return None, str(e)
    except _command.CommandOutputTooLarge as e:
        return None, '%s: that is not the tool\'s JSON' % e
    if rc != 0:
        return None, _command.failure_message(list(argv), rc, err, out)
    return out, None


def gather(amd_smi_path=None, rocm_smi_path=None, sysfs_root='/sys', timeout=30, runner=None):
    """Read the host: amd-smi, else rocm-smi, else sysfs. ``*_path`` None: the tool is not installed.

    Raises _command.CommandTimeout when a tool hangs. Never raises on what a tool prints: an unreadable document is
    a note, and the next source is read."""
    runner = runner or _command.run
    cards, bound = sysfs_cards(sysfs_root)
    notes = []
    if amd_smi_path:
        static, why = _tool(runner, [amd_smi_path] + list(AMD_SMI_STATIC), timeout)
        metric = None
        if why is None:
            metric, why = _tool(runner, [amd_smi_path] + list(AMD_SMI_METRIC), timeout)
        if why is None:
            topology, topo_why = _tool(runner, [amd_smi_path] + list(AMD_SMI_TOPOLOGY), timeout)
            if topo_why:
                notes.append('XGMI links not read: %s' % topo_why)
            try:
                gpus, _shapes = _amd_smi.parse_amd_smi(static, metric, topology)
            except _amd_smi.AmdSmiParseError as e:
                try:
                    gpus, _shapes = _amd_smi.parse_amd_smi(static, metric)
                    notes.append('XGMI links not read: %s' % e)
                except _amd_smi.AmdSmiParseError as e2:
                    gpus, why = None, str(e2)
            if gpus:
                return facts(gpus, cards, True, None, 'amd-smi', notes)
            if gpus is not None:
                why = 'amd-smi static --json described no GPU'
        notes.append(why)
    else:
        notes.append('amd-smi was not found on PATH')
    if rocm_smi_path:
        out, why = _tool(runner, [rocm_smi_path] + list(ROCM_SMI_ARGS), timeout)
        if why is None:
            try:
                gpus = _amd_smi.parse_rocm_smi(out)
                if gpus:
                    return facts(gpus, cards, True, None, 'rocm-smi', notes)
                why = 'rocm-smi -a --json described no card'
            except _amd_smi.AmdSmiParseError as e:
                why = str(e)
        notes.append(why)
    else:
        notes.append('rocm-smi was not found on PATH')
    if bound:
        return facts([c for c in cards if c.get('driver') == 'amdgpu'], cards, True, None, 'sysfs', notes)
    if cards:
        reason = ('%d AMD GPU(s) on the PCI bus but none is bound to the amdgpu kernel driver (not loaded, '
                  'blacklisted, or it could not initialise the GPU: see dmesg)' % len(cards))
    elif os.path.isdir(os.path.join(sysfs_root, 'class', 'drm')):
        reason = 'no AMD GPU under %s/class/drm' % sysfs_root.rstrip('/')
    else:
        reason = 'no DRM devices under %s/class/drm (no GPU driver loaded, or no sysfs)' % sysfs_root.rstrip('/')
    return facts([], cards, False, '%s; %s' % (reason, '; '.join(notes)), None, notes)


def gather_for_module(module):
    """One read of the host for a module; fails the module on a hung tool or a timeout below 1."""
    if module.params['timeout'] < 1:
        module.fail_json(msg='timeout must be a positive number, got %s' % module.params['timeout'])
    amd_smi = module.params['amd_smi_path'] or module.get_bin_path('amd-smi', opt_dirs=BIN_DIRS)
    rocm_smi = module.params['rocm_smi_path'] or module.get_bin_path('rocm-smi', opt_dirs=BIN_DIRS)
    try:
        return gather(amd_smi, rocm_smi, sysfs_root=module.params['sysfs_root'], timeout=module.params['timeout'])
    except _command.CommandTimeout as e:
        module.fail_json(msg='%s: a hung amd-smi or rocm-smi usually means a GPU or the driver is stuck; look at '
                             'the kernel log (dmesg) for amdgpu errors' % e)
