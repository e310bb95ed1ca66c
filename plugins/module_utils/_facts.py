# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""One picture of a host's NVIDIA GPUs: one ``nvidia-smi -q -x`` read plus the PCI bus.

Shared by gpu_facts, gpu_health and cuda_compat so that they describe a host the same way.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pci

NVIDIA_SMI_ARGS = ('-q', '-x')

# Exit codes documented in nvidia-smi(1), "RETURN VALUE".
_NVIDIA_SMI_EXIT = {
    2: 'a supplied argument or flag is invalid',
    3: 'the requested operation is not available on the target device',
    4: 'the current user does not have permission to access this device',
    6: 'a query to find an object was unsuccessful',
    8: "a device's external power cables are not properly attached",
    9: 'the NVIDIA driver is not loaded',
    10: 'the NVIDIA kernel detected an interrupt issue with a GPU',
    12: 'the NVML shared library could not be found or loaded',
    13: 'the local version of NVML does not implement this function',
    14: 'the infoROM is corrupted',
    15: 'the GPU has fallen off the bus or has otherwise become inaccessible',
}


def nvidia_smi_failure_reason(argv, rc, stdout, stderr):
    """Why nvidia-smi could not describe the GPUs, in words, followed by the command's own message."""
    text = '%s\n%s' % (stdout or '', stderr or '')
    low = text.lower()
    if "couldn't communicate with the nvidia driver" in low:
        why = 'nvidia-smi could not communicate with the NVIDIA driver (the kernel module is not loaded or does ' \
              'not match the installed libraries)'
    elif 'failed to initialize nvml' in low:
        why = 'NVML could not start (no GPU visible, driver not loaded, or a driver/library version mismatch)'
    elif rc in _NVIDIA_SMI_EXIT:
        why = 'nvidia-smi: %s' % _NVIDIA_SMI_EXIT[rc]
    else:
        why = 'nvidia-smi failed'
    return '%s. %s' % (why, _command.failure_message(argv, rc, stderr, stdout))


def _pci_devices(sysfs_root, lspci_path, runner, timeout, pci_ids=None):
    devices = _pci.from_sysfs(sysfs_root, pci_ids=pci_ids)
    if devices is None and lspci_path:
        rc, out, _err = runner([lspci_path, '-Dnn', '-k'], timeout=timeout)
        devices = _pci.parse_lspci(out, pci_ids=pci_ids) if rc == 0 else None
    return devices


def resolve_architecture(gpu, pci_by_bus=None, pci_ids=None):
    """Architecture of a GPU and where it came from: as nvidia-smi printed it (``nvidia-smi``), else the
    chip code name of its PCI id in the host's pci.ids (``pci.ids``), else the embedded PCI id table
    (``pci_device_id``), else its product name (``product_name``). ``pci_ids``: :func:`_pci.load_pci_ids`
    names; None reads the host's database."""
    if _compat_gpu.canonical_architecture(gpu.get('architecture')):
        return _compat_gpu.canonical_architecture(gpu['architecture']), 'nvidia-smi'
    pci_id = gpu.get('pci_device_id')
    if not pci_id and pci_by_bus and gpu.get('pci_bus_id') in pci_by_bus:
        pci_id = pci_by_bus[gpu['pci_bus_id']]['pci_device_id']
    if pci_ids is None:
        pci_ids = _pci.load_pci_ids()[0]
    return _pci.architecture_of(pci_id, pci_ids, gpu.get('name'))


def from_report(report, pci_devices, pci_ids=None):
    """Facts from a parsed nvidia-smi report and the PCI device list."""
    if not report.get('driver_version'):
        # nvidia-smi exited 0 but its report names no driver (an empty <nvidia_smi_log/>): nothing shows a
        # loaded driver, so the facts must not claim one.
        return without_driver('nvidia-smi -q -x exited 0 but its report names no driver version (%d GPUs '
                              'described): the driver state is unknown' % len(report.get('gpus') or ()), pci_devices)
    pci_by_bus = dict((d['pci_bus_id'], d) for d in pci_devices or ())
    if pci_ids is None:
        pci_ids = _pci.load_pci_ids()[0]
    gpus = []
    for gpu in report['gpus']:
        gpu = dict(gpu)
        gpu['architecture'], gpu['architecture_source'] = resolve_architecture(gpu, pci_by_bus, pci_ids)
        gpus.append(gpu)
    cuda = report.get('cuda_version')
    if cuda is None and report.get('driver_version'):
        try:
            cuda = _compat_cuda.driver_cuda_version(report['driver_version'])
        except ValueError:
            cuda = None
    return {
        'driver_loaded': True,
        'driver_version': report.get('driver_version'),
        'cuda_version': cuda,
        'attached_gpus': report.get('attached_gpus'),
        'gpu_count': len(gpus),
        'gpus': gpus,
        'pci_devices': pci_devices or [],
        'reason': None,
    }


def without_driver(reason, pci_devices):
    return {
        'driver_loaded': False,
        'driver_version': None,
        'cuda_version': None,
        'attached_gpus': None,
        'gpu_count': 0,
        'gpus': [],
        'pci_devices': pci_devices or [],
        'reason': reason,
    }


def gather(nvidia_smi_path, timeout=30, sysfs_root='/sys', lspci_path=None, runner=None):
    """Read the host. ``nvidia_smi_path`` None means nvidia-smi is not installed.

    Raises _command.CommandTimeout when nvidia-smi hangs (a sick GPU: the caller should fail), and
    _nvidia_smi.NvidiaSmiParseError when nvidia-smi succeeded but printed something unreadable.
    """
    runner = runner or _command.run
    pci_ids = _pci.load_pci_ids()[0]
    pci_devices = _pci_devices(sysfs_root, lspci_path, runner, timeout, pci_ids)
    if not nvidia_smi_path:
        return without_driver('nvidia-smi was not found on PATH (the NVIDIA driver utilities are not installed)',
                              pci_devices)
    argv = [nvidia_smi_path] + list(NVIDIA_SMI_ARGS)
    try:
        rc, out, err = runner(argv, timeout=timeout)
    except _command.CommandNotFound as e:
        return without_driver(str(e), pci_devices)
    if rc != 0:
        return without_driver(nvidia_smi_failure_reason(argv, rc, out, err), pci_devices)
    return from_report(_nvidia_smi.parse(out), pci_devices, pci_ids)
