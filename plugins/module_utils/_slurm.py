# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The slurm role's knowledge of Slurm's files and commands, and its node health decision.

- ``parse_node_config``: the hardware line that ``slurmd -C`` prints (Slurm's own reading of the node).
- ``gres_type``: a GPU's product name as a GRES type (``NVIDIA H200`` -> ``h200``).
- ``gres`` / ``node_line`` / ``gres_lines``: a node's GRES, its ``NodeName=`` line of slurm.conf and its gres.conf
  lines.
- ``parse_node_state`` / ``health_action``: what the health check (roles/slurm/files/gpuops-slurm-health.py, Slurm's
  HealthCheckProgram) reads from ``scontrol show node -o`` and what it does: drain a node whose GPUs fail
  gpu_health, with the reason, and resume one that it drained itself once they pass again; never touch a node that
  someone else drained.
- ``cloud_node_problems`` / ``cloud_config``: the CLOUD nodes of Slurm's power saving (the slurm role's
  slurm_cloud_nodes) as slurm.conf's NodeName and PartitionName lines and the controller's gres.conf;
  ``gres_gpu_count``: the GPUs ``scontrol show node`` says a node has (a CLOUD node's first-boot check).

Slurm's formats are from its man pages (slurm.conf(5), gres.conf(5), slurmd(8) ``-C``, scontrol(1)), Slurm 22.05 to
25.05. Used by the slurm filters (plugins/filter/slurm.py) on the control node and by the health check on the nodes.
Standard library only.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

# slurmd -C: "NodeName=n1 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=23999"
# then "UpTime=..." (slurmd(8)). These keys describe the hardware and go into the node's slurm.conf line as they are.
HARDWARE_KEYS = ('CPUs', 'Boards', 'SocketsPerBoard', 'CoresPerSocket', 'ThreadsPerCore', 'RealMemory')
# The reason the health check gives its drains: a node drained with another reason is someone else's to resume.
REASON_PREFIX = 'gpuops gpu_health'
# The reason of a CLOUD node that failed its first-boot check (gpuops-slurm-health --first-boot): drained and released.
FIRST_BOOT_PREFIX = 'gpuops first boot'
# scontrol's reason field is free text, but it is passed on one command line: keep it short and printable.
REASON_MAX = 200
_TYPE_BAD = re.compile(r'[^a-z0-9_.-]+')


def parse_node_config(text):
    """{key: int} of the hardware keys of ``slurmd -C``'s output TEXT; ValueError where a key is missing."""
    fields = {}
    for line in (text or '').splitlines():
        for token in line.split():
            key, sep, value = token.partition('=')
            if sep and key in HARDWARE_KEYS:
                fields[key] = value
    missing = [k for k in HARDWARE_KEYS if k not in fields]
    if missing:
        raise ValueError('slurmd -C printed no %s (got %r)' % (', '.join(missing), (text or '').strip()[:200]))
    try:
        return dict((k, int(v)) for k, v in fields.items())
    except ValueError:
        raise ValueError('slurmd -C printed a value that is not a number: %r' % (text or '').strip()[:200])


def gres_type(name):
    """A GPU product NAME as a GRES type: lower case, without the vendor, spaces as '_' ('NVIDIA H200' -> 'h200',
    'NVIDIA A100-SXM4-80GB' -> 'a100-sxm4-80gb'); 'gpu' where nothing is left."""
    text = (name or '').strip().lower()
    for vendor in ('nvidia ', 'tesla '):
        if text.startswith(vendor):
            text = text[len(vendor):]
    text = _TYPE_BAD.sub('_', text.replace(' ', '_')).strip('_')
    return text or 'gpu'


def _gpu_counts(gpus):
    """[(type, count)] of GPUS (gpu_facts' entries), in the order each type first appears."""
    counts = []
    for gpu in gpus or []:
        kind = gres_type(gpu.get('name'))
        for entry in counts:
            if entry[0] == kind:
                entry[1] += 1
                break
        else:
            counts.append([kind, 1])
    return [tuple(entry) for entry in counts]


def gres(gpus):
    """A node's GRES as slurm.conf and sinfo write it: ``gpu:<type>:<count>`` per GPU type among GPUS, joined by
    commas ('gpu:h200:8'); '' for none."""
    return ','.join('gpu:%s:%d' % (kind, count) for kind, count in _gpu_counts(gpus))


def node_line(name, address, hardware, gpus, features=()):
    """slurm.conf's NodeName= line of a node: its NAME and ADDRESS, the HARDWARE of ``parse_node_config`` and one
    ``gpu:<type>:<count>`` GRES per GPU type among GPUS (gpu_facts' entries); FEATURES as Features=."""
    if not name:
        raise ValueError('a Slurm node needs a name')
    parts = ['NodeName=%s' % name]
    if address:
        parts.append('NodeAddr=%s' % address)
    parts.extend('%s=%s' % (k, hardware[k]) for k in HARDWARE_KEYS)
    if gres(gpus):
        parts.append('Gres=%s' % gres(gpus))
    if features:
        parts.append('Features=%s' % ','.join(features))
    parts.append('State=UNKNOWN')
    return ' '.join(parts)


def gres_lines(gpus, device_dir='/dev'):
    """gres.conf's lines for a node's GPUS (gpu_facts' entries): one per GPU, its device file by minor number (the
    nvidia-smi index where the minor number is unknown), in minor-number order."""
    lines = []
    ordered = sorted(gpus or [], key=lambda g: g.get('minor_number') if g.get('minor_number') is not None else g.get('index', 0))
    for position, gpu in enumerate(ordered):
        minor = gpu.get('minor_number')
        if minor is None:
            minor = gpu.get('index', position)
        lines.append('Name=gpu Type=%s File=%s/nvidia%d' % (gres_type(gpu.get('name')), device_dir.rstrip('/'), int(minor)))
    return lines


def parse_node_state(text):
    """{'state': [flags], 'reason': str} from ``scontrol show node NAME -o`` TEXT (State=IDLE+DRAIN ... Reason=x [u@t])."""
    state = re.search(r'(?:^|\s)State=(\S+)', text or '')
    reason = re.search(r'(?:^|\s)Reason=(.*?)(?:\s\[[^\]]*\])?(?:\s+\w+=|$)', text or '')
    flags = [f for f in re.split(r'[+*~#!%$@^-]+', state.group(1)) if f] if state else []
    return {'state': [f.upper() for f in flags], 'reason': reason.group(1).strip() if reason else ''}


def failure_reason(result, prefix=REASON_PREFIX):
    """scontrol's Reason= for RESULT (gpu_health's evaluate): PREFIX and the failing checks' messages, printable and at
    most REASON_MAX characters."""
    messages = [c.get('message', '') for c in result.get('failing', []) if c.get('status') == 'fail']
    reason = '%s: %s' % (prefix, '; '.join(m for m in messages if m) or 'failed')
    reason = re.sub(r'[^\x20-\x7e]+', ' ', reason)
    return reason if len(reason) <= REASON_MAX else reason[:REASON_MAX - 3] + '...'


def _drained(node):
    return any(f in ('DRAIN', 'DRAINED', 'DRAINING') for f in node['state'])


def health_action(result, node):
    """What the health check does: ('drain', reason) where RESULT (gpu_health's evaluate: status and failing checks)
    fails and the node is not drained yet; ('resume', '') where it passes and the node was drained by this check;
    (None, why) otherwise. NODE is ``parse_node_state``'s answer."""
    failed = result.get('status') == 'fail'
    ours = node.get('reason', '').startswith(REASON_PREFIX)
    if failed:
        if _drained(node):
            return (None, 'already drained: %s' % (node.get('reason') or 'no reason'))
        return ('drain', failure_reason(result))
    if _drained(node) and ours:
        return ('resume', '')
    return (None, 'healthy' if not _drained(node) else 'drained by someone else: %s' % node.get('reason'))


# Slurm power saving's CLOUD nodes (slurm.conf(5) NodeName State=CLOUD; "Slurm Power Saving Guide", "Slurm Elastic
# Computing"): nodes that exist only while jobs need them. Each entry of the slurm role's slurm_cloud_nodes names a
# hostlist of nodes of one shape; Slurm cannot read their hardware before they exist, so the entry gives it.
CLOUD_NAMES = re.compile(r'^[a-z][a-z0-9-]*(\[\d+(-\d+)?(,\d+(-\d+)?)*\])?[a-z0-9-]*$')
_PARTITION = re.compile(r'^[A-Za-z0-9_.-]+$')


def _positive_int(value, minimum):
    try:
        return int(value) >= minimum and not isinstance(value, bool)
    except (TypeError, ValueError):
        return False


def cloud_node_problems(entries):
    """What is wrong with ENTRIES (slurm_cloud_nodes), one sentence each; [] when nothing is."""
    problems = []
    if not isinstance(entries, list):
        return ['slurm_cloud_nodes must be a list of node groups, got %r' % (entries,)]
    seen = set()
    for i, entry in enumerate(entries):
        where = 'slurm_cloud_nodes[%d]' % i
        if not isinstance(entry, dict):
            problems.append('%s must be a dict (names, cpus, real_memory, ...), got %r' % (where, entry))
            continue
        names = entry.get('names')
        if not isinstance(names, str) or not CLOUD_NAMES.match(names):
            problems.append('%s.names must be a node name or a hostlist such as gpu-cloud[1-4] (lower case), got %r'
                            % (where, names))
        elif names in seen:
            problems.append('%s.names %s is given twice' % (where, names))
        else:
            seen.add(names)
        for key in ('cpus', 'real_memory'):
            if not _positive_int(entry.get(key), 1):
                problems.append('%s.%s must be a whole number of at least 1 (slurmd -C on an instance of the template '
                                'prints it), got %r' % (where, key, entry.get(key)))
        gpus = entry.get('gpus', 0)
        if not _positive_int(gpus, 0):
            problems.append('%s.gpus must be a whole number, got %r' % (where, gpus))
        elif int(gpus) > 0 and (not isinstance(entry.get('gpu_type'), str)
                                or gres_type(entry.get('gpu_type')) != entry.get('gpu_type')):
            problems.append('%s.gpu_type must be the GPUs\' GRES type in lower case (h200, a100), as the static '
                            'nodes\' gres.conf names it, got %r' % (where, entry.get('gpu_type')))
        partition = entry.get('partition')
        if partition is not None and (not isinstance(partition, str) or not _PARTITION.match(partition)):
            problems.append('%s.partition must be a plain partition name, got %r' % (where, partition))
    return problems


def cloud_node_line(entry):
    """slurm.conf's NodeName= line of ENTRY (one slurm_cloud_nodes group): its shape, GRES, features, State=CLOUD."""
    parts = ['NodeName=%s' % entry['names'], 'CPUs=%d' % int(entry['cpus']),
             'RealMemory=%d' % int(entry['real_memory'])]
    if int(entry.get('gpus', 0)):
        parts.append('Gres=gpu:%s:%d' % (entry['gpu_type'], int(entry['gpus'])))
    if entry.get('features'):
        parts.append('Features=%s' % ','.join(entry['features']))
    parts.append('State=CLOUD')
    return ' '.join(parts)


def cloud_gres_line(entry, device_dir='/dev'):
    """gres.conf's line for ENTRY's GPUs (the controller's gres.conf, which configless slurmd fetches): the device
    files nvidia0 to nvidia<gpus-1>; None for a group without GPUs."""
    count = int(entry.get('gpus', 0))
    if not count:
        return None
    files = 'nvidia0' if count == 1 else 'nvidia[0-%d]' % (count - 1)
    return 'NodeName=%s Name=gpu Type=%s File=%s/%s' % (entry['names'], entry['gpu_type'], device_dir.rstrip('/'), files)


def cloud_config(entries, default_partition):
    """{'nodes': [NodeName lines], 'gres': [gres.conf lines], 'partitions': [(partition, 'hostlist,hostlist')],
    'names': 'hostlist,...'} of ENTRIES (slurm_cloud_nodes), each group in its partition or DEFAULT_PARTITION."""
    problems = cloud_node_problems(entries)
    if problems:
        raise ValueError('; '.join(problems))
    partitions = []
    for entry in entries:
        name = entry.get('partition') or default_partition
        for held in partitions:
            if held[0] == name:
                held[1].append(entry['names'])
                break
        else:
            partitions.append((name, [entry['names']]))
    return {'nodes': [cloud_node_line(e) for e in entries],
            'gres': [line for line in (cloud_gres_line(e) for e in entries) if line],
            'partitions': [(name, ','.join(names)) for name, names in partitions],
            'names': ','.join(e['names'] for e in entries)}


def gres_gpu_count(text):
    """The number of GPUs in the Gres= field of ``scontrol show node NAME -o`` TEXT ('gpu:h200:8(S:0-1)' -> 8); 0
    where it has none ('(null)')."""
    field = re.search(r'(?:^|\s)Gres=(\S+)', text or '')
    total = 0
    for item in (field.group(1).split(',') if field else []):
        parts = re.sub(r'\(.*$', '', item).split(':')
        if parts[0] == 'gpu':
            # gpu, gpu:<type> (one each) or gpu[:<type>]:<count>
            total += int(parts[-1]) if len(parts) >= 2 and parts[-1].isdigit() else 1
    return total
