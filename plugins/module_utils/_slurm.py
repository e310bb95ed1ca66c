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
- ``parse_cloud_nodes`` / ``cloud_node_problems`` / ``cloud_config``: the CLOUD nodes of Slurm's power saving (the
  slurm role's slurm_cloud_nodes), parsed strictly (hostlists, whole numbers, feature names; no node in two groups or
  among the static nodes), as slurm.conf's NodeName and PartitionName lines and the controller's gres.conf;
  ``parse_features`` / ``feature_problems``: a list of Slurm feature names (Features=);
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
# A static node's NodeName: its short host name (a label of letters, digits, '_' and '-'; ASCII, no line break).
STATIC_NODE_NAME = re.compile(r'[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})', re.ASCII)
# NodeAddr= is an IP address that plugins/module_utils/_cluster.py parsed; here only its characters are held (no space or
# line break can reach slurm.conf).
_ADDRESS_TEXT = re.compile(r'[0-9A-Fa-f.:]{2,45}', re.ASCII)


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
    if not isinstance(name, str) or not STATIC_NODE_NAME.fullmatch(name):
        raise ValueError('the node name %r is no host name (letters, digits, \'_\' and \'-\')' % (name,))
    if address and (not isinstance(address, str) or not _ADDRESS_TEXT.fullmatch(address)):
        raise ValueError('the node address %r is no IP address' % (address,))
    features = parse_features(list(features or ()), 'slurm_node_features')
    parts = ['NodeName=%s' % name]
    if address:
        parts.append('NodeAddr=%s' % address)
    parts.extend('%s=%d' % (k, int(hardware[k])) for k in HARDWARE_KEYS)
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
# hostlist of nodes of one shape; Slurm cannot read their hardware before they exist, so the entry gives it. Every
# field is parsed here into a typed value (parse_cloud_nodes) and slurm.conf's lines are written only from those.
CLOUD_KEYS = ('names', 'cpus', 'real_memory', 'gpus', 'gpu_type', 'features', 'partition')
# A hostlist of one bracket: prefix, [ranges], suffix (gpu-cloud[1-4], gpu[01-16]-a, cpu1). ASCII only.
_HOSTLIST = re.compile(r'([a-z][a-z0-9-]*)(?:\[([0-9,-]+)\]([a-z0-9-]*))?', re.ASCII)
_RANGE = re.compile(r'([0-9]+)(?:-([0-9]+))?', re.ASCII)
# Each node's name is also its host name (the instance's): one DNS label (RFC 1123: letters, digits, '-', neither
# first nor last '-', at most 63 characters; Slurm's hostlist.c keeps names in MAXHOSTNAMELEN 64 with the NUL).
_NODE_NAME = re.compile(r'[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?', re.ASCII)
# Slurm's hostlist parser takes at most 64K hosts in one range, "anything larger will be assumed to be an error"
# (src/common/hostlist.c, MAX_RANGE (64*1024)): a group, and all groups together, stay within it.
CLOUD_MAX_NODES = 64 * 1024
# CPUs= is a uint16 in Slurm's node record and 0xfffe (NO_VAL16, slurm.h) means unset: at most 65533. RealMemory= (MiB)
# is a uint64 with NO_VAL64 0xfffffffffffffffe.
CLOUD_MAX_CPUS = 0xfffe - 1
CLOUD_MAX_MEMORY = 0xfffffffffffffffe - 1
# A group's GPUs are the device files nvidia0 to nvidia<gpus-1>; the NVIDIA driver keeps minor 254 for
# /dev/nvidia-modeset and 255 for /dev/nvidiactl (NV_CONTROL_DEVICE_MINOR, open-gpu-kernel-modules
# kernel-open/common/inc/nv-linux.h): at most 254 GPU device files, nvidia0 to nvidia253.
CLOUD_MAX_GPUS = 254
# A Slurm feature (Features=, matched by --constraint): a name without Slurm's separators and operators (',', '&',
# '|', '*', '[', ']', '(', ')', ':', '='), spaces or line breaks; at most 64 characters (our bound: Slurm sets none).
FEATURE_NAME = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}', re.ASCII)
_PARTITION_NAME = re.compile(r'[A-Za-z0-9_.-]{1,64}', re.ASCII)
_DIGITS = re.compile(r'[0-9]+', re.ASCII)


def expand_hostlist(text):
    """The node names of a hostlist TEXT of one bracket (gpu[1-3,7] -> gpu1, gpu2, gpu3, gpu7; gpu[01-03] keeps the
    width: gpu01, gpu02, gpu03), in order; ValueError saying what is wrong: not such a hostlist, a reversed range
    (x[4-1]), a range whose bounds differ in width with a leading zero (x[01-100]), a name given twice (x[1-3,2]), more
    than CLOUD_MAX_NODES names, a name that is no host name (longer than 63 characters)."""
    if not isinstance(text, str):
        raise ValueError('must be a node name or a hostlist such as gpu-cloud[1-4], got %r' % (text,))
    match = _HOSTLIST.fullmatch(text)
    if not match:
        raise ValueError('must be a node name or a hostlist such as gpu-cloud[1-4] (lower-case letters, digits and '
                         "'-', one bracket of ranges), got %r" % (text,))
    prefix, ranges, suffix = match.group(1), match.group(2), match.group(3) or ''
    spans = []  # (first, last, width) of each range; none for a single name
    if ranges is not None:
        total = 0
        for part in ranges.split(','):
            bounds = _RANGE.fullmatch(part)
            if not bounds:
                raise ValueError('has a range %r in %r that is not N or N-M' % (part, text))
            low, high = bounds.group(1), bounds.group(2) or bounds.group(1)
            if (low[0] == '0' and len(low) > 1 or high[0] == '0' and len(high) > 1) and len(low) != len(high):
                raise ValueError('has a range %s whose bounds differ in width with a leading zero: write both with '
                                 'the same number of digits (gpu[01-16])' % part)
            if int(low) > int(high):
                raise ValueError('has a reversed range %s: write it from low to high (%s-%s)' % (part, high, low))
            total += int(high) - int(low) + 1
            if total > CLOUD_MAX_NODES:
                raise ValueError('names more than %d nodes (Slurm takes at most %d hosts in one range): split the '
                                 'group or make it smaller' % (CLOUD_MAX_NODES, CLOUD_MAX_NODES))
            spans.append((int(low), int(high), len(low) if low[0] == '0' else 0))
    candidates = [prefix] if ranges is None else [
        '%s%0*d%s' % (prefix, width, n, suffix) for first, last, width in spans for n in range(first, last + 1)]
    names, seen = [], set()
    for name in candidates:
        if not _NODE_NAME.fullmatch(name):
            raise ValueError('gives the node name %r, which is no host name (at most 63 characters, not ending '
                             "in '-')" % (name,))
        if name in seen:
            raise ValueError('names %s twice' % name)
        seen.add(name)
        names.append(name)
    return names


def whole_number(value, minimum, maximum):
    """VALUE as an int within MINIMUM..MAXIMUM: an int (not a bool), or a string of ASCII digits only (what a template
    gives); ValueError otherwise (a float such as 1.9, a bool, ' 8', '8\\n', '+8', '8_0', non-ASCII digits, None)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError('must be a whole number, got %r' % (value,))
    if isinstance(value, str):
        if not _DIGITS.fullmatch(value):
            raise ValueError('must be a whole number (digits only), got %r' % (value,))
        value = int(value)
    value = int(value)
    if value < minimum or value > maximum:
        raise ValueError('must be %d to %d, got %d' % (minimum, maximum, value))
    return value


def parse_features(value, where):
    """VALUE (a list of Slurm feature names; None for none) as a list of str; ValueError naming WHERE. A string is
    refused, not split: 'gpu' read as a list would be the features g, p and u."""
    if value is None:
        return []
    if isinstance(value, str):
        raise ValueError('%s must be a list of feature names such as [gpu, h200], got the string %r: write it as a '
                         'list' % (where, value))
    if not isinstance(value, (list, tuple)):
        raise ValueError('%s must be a list of feature names such as [gpu, h200], got %r' % (where, value))
    features = []
    for i, feature in enumerate(value):
        if not isinstance(feature, str) or not FEATURE_NAME.fullmatch(feature):
            raise ValueError("%s[%d] must be a feature name (letters, digits, '_', '.', '-', at most 64 characters; no "
                             "spaces, commas, '=' or line breaks), got %r" % (where, i, feature))
        if feature in features:
            raise ValueError('%s names the feature %s twice' % (where, feature))
        features.append(feature)
    return features


def feature_problems(value, where):
    """[] where VALUE is a usable list of feature names (parse_features), else the one sentence saying why."""
    try:
        parse_features(value, where)
    except ValueError as e:
        return [str(e)]
    return []


def _cloud_entry(entry, where, problems):
    """One slurm_cloud_nodes ENTRY as a typed dict, or None where it has problems (appended to PROBLEMS)."""
    if not isinstance(entry, dict):
        problems.append('%s must be a dict (names, cpus, real_memory, ...), got %r' % (where, entry))
        return None
    found = len(problems)
    unknown = sorted('%s' % k for k in entry if k not in CLOUD_KEYS)
    if unknown:
        problems.append('%s has the key(s) %s, which a group does not take (it takes %s): check the spelling'
                        % (where, ', '.join(repr(k) for k in unknown), ', '.join(CLOUD_KEYS)))
    group = {}
    try:
        group['nodes'] = expand_hostlist(entry.get('names'))
        group['names'] = entry['names']
    except ValueError as e:
        problems.append('%s.names %s' % (where, e))
    for key, maximum in (('cpus', CLOUD_MAX_CPUS), ('real_memory', CLOUD_MAX_MEMORY)):
        try:
            group[key] = whole_number(entry.get(key), 1, maximum)
        except ValueError as e:
            problems.append('%s.%s %s (slurmd -C on an instance of the template prints it)' % (where, key, e))
    try:
        group['gpus'] = whole_number(entry.get('gpus', 0), 0, CLOUD_MAX_GPUS)
    except ValueError as e:
        problems.append('%s.gpus %s' % (where, e))
    gpu_type = entry.get('gpu_type')
    if gpu_type is not None or group.get('gpus'):
        if not isinstance(gpu_type, str) or gres_type(gpu_type) != gpu_type or not _PARTITION_NAME.fullmatch(gpu_type):
            problems.append("%s.gpu_type must be the GPUs' GRES type in lower case (h200, a100), as the static nodes' "
                            'gres.conf names it, got %r' % (where, gpu_type))
    group['gpu_type'] = gpu_type
    try:
        group['features'] = parse_features(entry.get('features'), '%s.features' % where)
    except ValueError as e:
        problems.append('%s' % e)
    partition = entry.get('partition')
    if partition is not None and (not isinstance(partition, str) or not _PARTITION_NAME.fullmatch(partition)):
        problems.append("%s.partition must be a plain partition name (letters, digits, '_', '.', '-'), got %r"
                        % (where, partition))
    group['partition'] = partition
    return group if len(problems) == found else None


def parse_cloud_nodes(entries, static_nodes=()):
    """(groups, problems) of ENTRIES (slurm_cloud_nodes): each group typed (names, nodes: its node names, cpus,
    real_memory, gpus, gpu_type, features, partition) and one sentence per problem, naming the entry and the fix. A node
    named by two groups (gpu[1-4] and gpu[3-6]) or by a group and STATIC_NODES (the static nodes' NodeNames) is a
    problem: slurm.conf would define it twice."""
    if not isinstance(entries, (list, tuple)):
        return [], ['slurm_cloud_nodes must be a list of node groups, got %r' % (entries,)]
    problems, groups = [], []
    static = dict((('%s' % n).lower(), n) for n in static_nodes or ())
    owner, total = {}, 0
    for i, entry in enumerate(entries):
        where = 'slurm_cloud_nodes[%d]' % i
        group = _cloud_entry(entry, where, problems)
        if group is None:
            continue
        clash = [n for n in group['nodes'] if n in static]
        if clash:
            problems.append('%s.names %s names %s, a host of the Slurm cluster (its controller or a static compute '
                            'node): give the CLOUD nodes names of their own' % (where, group['names'], ', '.join(clash[:5])))
            continue
        twice = [n for n in group['nodes'] if n in owner]
        if twice:
            problems.append('%s.names %s names %s, which %s already names: each node belongs to one group'
                            % (where, group['names'], ', '.join(twice[:5]), owner[twice[0]]))
            continue
        total += len(group['nodes'])
        if total > CLOUD_MAX_NODES:
            problems.append('%s: slurm_cloud_nodes names more than %d nodes in all: make the groups smaller'
                            % (where, CLOUD_MAX_NODES))
            break
        for name in group['nodes']:
            owner[name] = '%s (%s)' % (where, group['names'])
        groups.append(group)
    return (groups if not problems else []), problems


def cloud_node_problems(entries, static_nodes=()):
    """What is wrong with ENTRIES (slurm_cloud_nodes), one sentence each; [] when nothing is (parse_cloud_nodes)."""
    return parse_cloud_nodes(entries, static_nodes)[1]


def cloud_node_line(group):
    """slurm.conf's NodeName= line of GROUP (parse_cloud_nodes'): its shape, GRES, features, State=CLOUD."""
    parts = ['NodeName=%s' % group['names'], 'CPUs=%d' % group['cpus'], 'RealMemory=%d' % group['real_memory']]
    if group['gpus']:
        parts.append('Gres=gpu:%s:%d' % (group['gpu_type'], group['gpus']))
    if group['features']:
        parts.append('Features=%s' % ','.join(group['features']))
    parts.append('State=CLOUD')
    return ' '.join(parts)


def cloud_gres_line(group, device_dir='/dev'):
    """gres.conf's line for GROUP's GPUs (the controller's gres.conf, which configless slurmd fetches): the device
    files nvidia0 to nvidia<gpus-1>; None for a group without GPUs."""
    count = group['gpus']
    if not count:
        return None
    files = 'nvidia0' if count == 1 else 'nvidia[0-%d]' % (count - 1)
    return 'NodeName=%s Name=gpu Type=%s File=%s/%s' % (group['names'], group['gpu_type'], device_dir.rstrip('/'), files)


def cloud_config(entries, default_partition, static_nodes=()):
    """{'nodes': [NodeName lines], 'gres': [gres.conf lines], 'partitions': [(partition, 'hostlist,hostlist')],
    'names': 'hostlist,...'} of ENTRIES (slurm_cloud_nodes), each group in its partition or DEFAULT_PARTITION;
    ValueError with every problem (parse_cloud_nodes)."""
    groups, problems = parse_cloud_nodes(entries, static_nodes)
    if problems:
        raise ValueError('; '.join(problems))
    if not isinstance(default_partition, str) or not _PARTITION_NAME.fullmatch(default_partition):
        raise ValueError('the default partition must be a plain partition name, got %r' % (default_partition,))
    partitions = []
    for group in groups:
        name = group['partition'] or default_partition
        for held in partitions:
            if held[0] == name:
                held[1].append(group['names'])
                break
        else:
            partitions.append((name, [group['names']]))
    return {'nodes': [cloud_node_line(g) for g in groups],
            'gres': [line for line in (cloud_gres_line(g) for g in groups) if line],
            'partitions': [(name, ','.join(names)) for name, names in partitions],
            'names': ','.join(g['names'] for g in groups)}


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
