# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write NVIDIA GPU metrics for node_exporter's textfile collector.

Runs ``nvidia-smi -q -x`` (and ``journalctl -k`` for Xid events), and writes Prometheus text format to
``--output`` atomically (temporary file in the same directory, fsync, rename), so node_exporter never
reads half a file.

The XML and kernel-log parsing is the collection's own (plugins/module_utils/_nvidia_smi.py and
_kernel_log.py): the gpu_monitoring role copies those files next to this script in their package layout,
so there is exactly one parser. Deployed by gpuops.gpu_server.gpu_monitoring; do not edit on the host.
Run as ``python3 gpuops-gpu-collector.py --output FILE`` (by the gpuops-gpu-collector systemd service).
"""

from __future__ import (absolute_import, division, print_function)

import argparse
import os
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi  # noqa: E402 pylint: disable=wrong-import-position

MIB = 1024 * 1024

# name -> (type, help)
METRICS = {
    'gpuops_gpu_info': ('gauge', 'GPU identity and driver; always 1.'),
    'gpuops_gpu_attached': ('gauge', 'GPUs the driver counts (attached_gpus); more than gpuops_gpu_reported means a GPU was lost.'),
    'gpuops_gpu_reported': ('gauge', 'GPUs nvidia-smi described in its report.'),
    'gpuops_gpu_utilization_percent': ('gauge', 'GPU utilisation in percent.'),
    'gpuops_gpu_temperature_celsius': ('gauge', 'GPU core temperature.'),
    'gpuops_gpu_slowdown_temperature_celsius': ('gauge', 'Temperature at which the GPU slows itself down.'),
    'gpuops_gpu_shutdown_temperature_celsius': ('gauge', 'Temperature at which the GPU shuts down.'),
    'gpuops_gpu_slowdown_margin_celsius': ('gauge', 'Degrees left before the GPU slows itself down: from the T.Limit '
                                                    'thresholds where the driver reports them, else the absolute one.'),
    'gpuops_gpu_tlimit_headroom_celsius': ('gauge', 'Degrees between the GPU temperature and its T.Limit (R570/R580 on).'),
    'gpuops_gpu_slowdown_tlimit_celsius': ('gauge', 'Slowdown threshold relative to T.Limit (-2: 2 C past T.Limit).'),
    'gpuops_gpu_memory_temperature_celsius': ('gauge', 'GPU memory (HBM) temperature.'),
    'gpuops_gpu_memory_used_bytes': ('gauge', 'Framebuffer memory used.'),
    'gpuops_gpu_memory_total_bytes': ('gauge', 'Framebuffer memory total.'),
    'gpuops_gpu_power_draw_watts': ('gauge', 'Power draw.'),
    'gpuops_gpu_power_limit_watts': ('gauge', 'Enforced power limit.'),
    'gpuops_gpu_pcie_link_width': ('gauge', 'PCIe link width (lanes); link="current" or "max".'),
    'gpuops_gpu_pcie_link_gen': ('gauge', 'PCIe link generation; link="current" or "max".'),
    'gpuops_gpu_ecc_corrected_total': ('counter', 'Corrected ECC errors; scope="volatile" (since driver load) or "aggregate" (lifetime).'),
    'gpuops_gpu_ecc_uncorrected_total': ('counter', 'Uncorrected ECC errors; scope="volatile" (since driver load) or "aggregate" (lifetime).'),
    'gpuops_gpu_retired_pages_total': ('counter', 'Retired framebuffer pages by cause (pre-Ampere GPUs).'),
    'gpuops_gpu_retired_pages_pending': ('gauge', '1 when a page retirement waits for a GPU reset.'),
    'gpuops_gpu_remapped_rows_total': ('counter', 'Remapped memory rows by type (Ampere and later).'),
    'gpuops_gpu_remapped_rows_pending': ('gauge', '1 when a row remap waits for a GPU reset.'),
    'gpuops_gpu_remapped_rows_failure': ('gauge', '1 when a row remap failed (the GPU needs service).'),
    'gpuops_gpu_clock_event_reason_active': ('gauge', '1 for each active clock event (throttle) reason.'),
    'gpuops_gpu_reset_required': ('gauge', '1 when the driver reports that the GPU needs a reset.'),
    'gpuops_gpu_xid_last': ('gauge', 'Code of the last Xid error of this boot for the GPU (0: none).'),
    'gpuops_gpu_xid_events_total': ('counter', 'Xid errors logged for the GPU in this boot.'),
    'gpuops_gpu_collector_success': ('gauge', '1 when nvidia-smi answered and its report was parsed.'),
    'gpuops_gpu_collector_xid_success': ('gauge', '1 when the kernel log could be read for Xid errors.'),
    'gpuops_gpu_collector_last_run_timestamp_seconds': ('gauge', 'When the collector last ran (Unix time).'),
    'gpuops_gpu_collector_duration_seconds': ('gauge', 'How long the collector took.'),
}


def escape(value):
    return str(value).replace('\\', '\\\\').replace('\n', '\\n').replace('"', '\\"')


class Output(object):
    def __init__(self):
        self.samples = {}

    def add(self, metric, value, labels=None, **extra):
        if value is None:
            return
        if isinstance(value, bool):
            value = int(value)
        merged = dict(labels or {})
        merged.update(extra)
        self.samples.setdefault(metric, []).append((merged, value))

    def render(self):
        lines = []
        for name, (kind, text) in METRICS.items():
            if name not in self.samples:
                continue
            lines.append('# HELP %s %s' % (name, text))
            lines.append('# TYPE %s %s' % (name, kind))
            for labels, value in self.samples[name]:
                rendered = ','.join('%s="%s"' % (k, escape(v)) for k, v in sorted(labels.items()) if v is not None)
                lines.append('%s{%s} %s' % (name, rendered, value) if rendered else '%s %s' % (name, value))
        return '\n'.join(lines) + '\n'


def gpu_metrics(out, gpu, xid_events):
    labels = {'gpu': gpu['index'], 'uuid': gpu['uuid'], 'pci_bus_id': gpu['pci_bus_id']}
    out.add('gpuops_gpu_info', 1, labels, name=gpu['name'], architecture=gpu['architecture'],
            vbios_version=gpu['vbios_version'])
    out.add('gpuops_gpu_utilization_percent', gpu['utilization_gpu_pct'], labels)
    out.add('gpuops_gpu_temperature_celsius', gpu['temperature_c'], labels)
    out.add('gpuops_gpu_slowdown_temperature_celsius', gpu['temperature_slowdown_c'], labels)
    out.add('gpuops_gpu_shutdown_temperature_celsius', gpu['temperature_shutdown_c'], labels)
    out.add('gpuops_gpu_slowdown_margin_celsius', gpu.get('temperature_slowdown_margin_c'), labels)
    out.add('gpuops_gpu_tlimit_headroom_celsius', gpu.get('temperature_tlimit_c'), labels)
    out.add('gpuops_gpu_slowdown_tlimit_celsius', gpu.get('temperature_slowdown_tlimit_c'), labels)
    out.add('gpuops_gpu_memory_temperature_celsius', gpu['memory_temperature_c'], labels)
    for name, mib in (('gpuops_gpu_memory_used_bytes', gpu['memory_used_mib']),
                      ('gpuops_gpu_memory_total_bytes', gpu['memory_total_mib'])):
        out.add(name, None if mib is None else mib * MIB, labels)
    out.add('gpuops_gpu_power_draw_watts', gpu['power_draw_w'], labels)
    out.add('gpuops_gpu_power_limit_watts', gpu['power_limit_w'], labels)
    out.add('gpuops_gpu_pcie_link_width', gpu['pcie_width_current'], labels, link='current')
    out.add('gpuops_gpu_pcie_link_width', gpu['pcie_width_max'], labels, link='max')
    out.add('gpuops_gpu_pcie_link_gen', gpu['pcie_gen_current'], labels, link='current')
    out.add('gpuops_gpu_pcie_link_gen', gpu['pcie_gen_max'], labels, link='max')
    for scope in ('volatile', 'aggregate'):
        counts = (gpu['ecc_errors'] or {}).get(scope) or {}
        out.add('gpuops_gpu_ecc_corrected_total', counts.get('corrected'), labels, scope=scope)
        out.add('gpuops_gpu_ecc_uncorrected_total', counts.get('uncorrected'), labels, scope=scope)
    retired = gpu['retired_pages']
    if retired:
        out.add('gpuops_gpu_retired_pages_total', retired['single_bit_ecc'], labels, cause='single_bit_ecc')
        out.add('gpuops_gpu_retired_pages_total', retired['double_bit_ecc'], labels, cause='double_bit_ecc')
        out.add('gpuops_gpu_retired_pages_pending', retired['pending'], labels)
    remap = gpu['remapped_rows']
    if remap:
        out.add('gpuops_gpu_remapped_rows_total', remap['correctable'], labels, type='correctable')
        out.add('gpuops_gpu_remapped_rows_total', remap['uncorrectable'], labels, type='uncorrectable')
        out.add('gpuops_gpu_remapped_rows_pending', remap['pending'], labels)
        out.add('gpuops_gpu_remapped_rows_failure', remap['failure'], labels)
    for reason in gpu['clock_event_reasons'] or []:
        out.add('gpuops_gpu_clock_event_reason_active', 1, labels, reason=reason)
    out.add('gpuops_gpu_reset_required', gpu['reset_required'], labels)
    if xid_events is not None:
        mine = [e for e in xid_events if _kernel_log.matches_gpu(e['pci'], gpu['pci_bus_id'])]
        out.add('gpuops_gpu_xid_last', mine[-1]['code'] if mine else 0, labels)
        out.add('gpuops_gpu_xid_events_total', len(mine), labels)


def read_xid_events(journalctl):
    """Xid events of this boot, or None when the kernel log cannot be read."""
    try:
        text, _source, error = _kernel_log.read(journalctl_path=journalctl, timeout=20)
    except _command.CommandTimeout as e:
        sys.stderr.write('%s\n' % e)
        return None
    if text is None:
        sys.stderr.write('kernel log not readable: %s\n' % error)
        return None
    return _kernel_log.parse(text)


def collect(nvidia_smi, journalctl, timeout):
    out = Output()
    started = time.time()
    xid_events = read_xid_events(journalctl) if journalctl else None
    if journalctl:
        out.add('gpuops_gpu_collector_xid_success', xid_events is not None)
    success = False
    try:
        rc, stdout, stderr = _command.run([nvidia_smi, '-q', '-x'], timeout=timeout)
        if rc != 0:
            sys.stderr.write(_command.failure_message([nvidia_smi, '-q', '-x'], rc, stderr, stdout) + '\n')
        else:
            report = _nvidia_smi.parse(stdout)
            out.add('gpuops_gpu_attached', report['attached_gpus'],
                    driver_version=report['driver_version'], cuda_version=report['cuda_version'])
            out.add('gpuops_gpu_reported', len(report['gpus']))
            for gpu in report['gpus']:
                gpu_metrics(out, gpu, xid_events)
            success = True
    except (_command.CommandNotFound, _command.CommandTimeout, _nvidia_smi.NvidiaSmiParseError) as e:
        sys.stderr.write('%s\n' % e)
    except Exception:  # pylint: disable=broad-except
        # A report this parser does not understand must still leave a metrics file that says so.
        traceback.print_exc()
        out = Output()
    out.add('gpuops_gpu_collector_success', success)
    out.add('gpuops_gpu_collector_last_run_timestamp_seconds', round(time.time(), 3))
    out.add('gpuops_gpu_collector_duration_seconds', round(time.time() - started, 3))
    return out.render(), success


def write_atomically(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, 'w') as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nvidia-smi', default='/usr/bin/nvidia-smi')
    parser.add_argument('--journalctl', default='/usr/bin/journalctl',
                        help='journalctl to read Xid errors with; empty to skip Xid metrics')
    parser.add_argument('--output', required=True, help='the .prom file to write (atomically)')
    parser.add_argument('--timeout', type=int, default=30)
    args = parser.parse_args(argv)
    text, _success = collect(args.nvidia_smi, args.journalctl, args.timeout)
    write_atomically(args.output, text)
    # The failure is in the metrics (gpuops_gpu_collector_success 0, alert GpuExporterDown) and in the journal;
    # the unit itself succeeds so that a host without a working driver still gets its metrics file.
    return 0


if __name__ == '__main__':
    sys.exit(main())
