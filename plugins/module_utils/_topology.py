# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""How a host's GPUs are joined: ``nvidia-smi topo -m``, ``nvidia-smi nvlink -s`` and the acceptance sample's ``p2p``
lines, read into plain data, and the problems they show together (pure functions, no Ansible objects).

``nvidia-smi topo -m`` prints a matrix, tab separated (aligned with spaces where a user pasted it)::

    \tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
    GPU0\t X \tNV18\tPIX\t0-47,96-143\t0\t\tN/A
    GPU1\tNV18\t X \tSYS\t0-47,96-143\t0\t\tN/A
    NIC0\tPIX\tSYS\t X

    Legend: ...

``nvidia-smi nvlink -s`` prints each GPU and the state of its links::

    GPU 0: NVIDIA H200 (UUID: GPU-...)
    \t Link 0: 26.562 GB/s
    \t Link 1: <inactive>

The acceptance sample (roles/gpu_acceptance/templates/gpu_acceptance_sample.cu.j2) prints one line per ordered pair of
GPUs: ``p2p 0 1 access=yes copy=ok``, ``access=no copy=skipped`` or ``copy=WRONG``.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_gpu

# The affinity columns that follow the devices in topo -m's header (their names hold spaces).
_TOPO_TRAILERS = ('CPU Affinity', 'NUMA Affinity', 'GPU NUMA ID')
_NV = re.compile(r'^NV(\d+)$')
_GPU = re.compile(r'^GPU(\d+)$')
_NVLINK_GPU = re.compile(r'^GPU (\d+): (.*?)(?: \(UUID: ([^)]*)\))?\s*$')
_NVLINK_LINK = re.compile(r'^\s*Link (\d+): (.*?)\s*$')
_SPEED = re.compile(r'^([0-9]+(?:\.[0-9]+)?) GB/s$')
_P2P = re.compile(r'^p2p (\d+) (\d+) access=(yes|no) copy=(\S+)\s*$')


def _text(value, what):
    if value is None:
        return ''
    if not isinstance(value, str):
        raise ValueError('%s: expected the text nvidia-smi printed (a string), got %s' % (what, type(value).__name__))
    return value


def parse_topo_matrix(text):
    """``nvidia-smi topo -m`` -> ``{'devices': [...], 'gpus': [{'index', 'links': {peer index: kind}, 'nvlinks':
    {peer index: bonded link count}, 'cpu_affinity', 'numa_affinity', 'gpu_numa_id'}]}``.

    Links are the matrix cells between GPUs (``X`` for the GPU itself is left out): ``NV18`` (18 bonded NVLinks),
    ``PIX``, ``PXB``, ``PHB``, ``NODE``, ``SYS``. Raises ValueError when the text holds no matrix or a GPU row does not
    have a cell for every device of the header."""
    lines = _text(text, 'nvidia-smi topo -m').splitlines()
    header = None
    for number, line in enumerate(lines):
        cells = line.split()
        if cells and all(_GPU.match(c) for c in cells[:1]) and line[:1] in ('\t', ' '):
            header = number
            break
    if header is None:
        raise ValueError('nvidia-smi topo -m: no matrix header (a line starting with a tab, then GPU0 ...) in %r'
                         % (text[:200] if text else text))
    head = lines[header]
    for trailer in _TOPO_TRAILERS:
        head = head.replace(trailer, '')
    devices = head.split()
    trailers = [t for t in _TOPO_TRAILERS if t in lines[header]]
    gpus = []
    for line in lines[header + 1:]:
        cells = line.split('\t') if '\t' in line else line.split()
        cells = [c.strip() for c in cells]
        if not cells or not _GPU.match(cells[0]):
            if cells and cells[0] in devices:
                continue                                     # a NIC's row
            if line.strip():
                break                                        # the legend
            continue
        index = int(_GPU.match(cells[0]).group(1))
        row = cells[1:]
        if '\t' not in line:
            # Aligned with spaces: the affinity cells cannot hold spaces themselves.
            row = line.split()[1:]
        if len(row) < len(devices):
            raise ValueError('nvidia-smi topo -m: the row of GPU%d has %d cells for %d devices (%s): %r'
                             % (index, len(row), len(devices), ' '.join(devices), line))
        links, nvlinks = {}, {}
        for device, cell in zip(devices, row):
            peer = _GPU.match(device)
            if peer is None or cell == 'X':
                continue
            links[int(peer.group(1))] = cell
            nv = _NV.match(cell)
            if nv:
                nvlinks[int(peer.group(1))] = int(nv.group(1))
        rest = [c for c in row[len(devices):] if c != ''] if '\t' in line else row[len(devices):]
        affinity = dict(zip(('cpu_affinity', 'numa_affinity', 'gpu_numa_id'), (None, None, None)))
        for name, value in zip([t.lower().replace(' ', '_') for t in trailers], rest):
            affinity[name] = value
        gpus.append(dict(affinity, index=index, links=links, nvlinks=nvlinks))
    if not gpus:
        raise ValueError('nvidia-smi topo -m: the matrix has no GPU rows: %r' % text[:200])
    return {'devices': devices, 'gpus': gpus}


def parse_nvlink_status(text):
    """``nvidia-smi nvlink -s`` -> ``[{'index', 'name', 'uuid', 'links': [{'link', 'state', 'gbps', 'text'}]}]``.

    A link is ``up`` when nvidia-smi prints its speed (``26.562 GB/s``), ``inactive`` when it prints ``<inactive>``,
    and ``unknown`` otherwise (its ``text`` is kept). Text without any ``GPU n:`` line (a driver that says no GPU has
    NVLink, or nothing at all) gives an empty list."""
    gpus = []
    for line in _text(text, 'nvidia-smi nvlink -s').splitlines():
        gpu = _NVLINK_GPU.match(line)
        if gpu:
            gpus.append({'index': int(gpu.group(1)), 'name': gpu.group(2), 'uuid': gpu.group(3), 'links': []})
            continue
        link = _NVLINK_LINK.match(line)
        if link and gpus:
            value = link.group(2)
            speed = _SPEED.match(value)
            if speed:
                state, gbps = 'up', float(speed.group(1))
            elif 'inactive' in value.lower():
                state, gbps = 'inactive', None
            else:
                state, gbps = 'unknown', None
            gpus[-1]['links'].append({'link': int(link.group(1)), 'state': state, 'gbps': gbps, 'text': value})
    return gpus


def _p2p_rank(seen):
    """How bad one p2p result is: a copy that arrived wrong (3), another failed copy (2), no peer access (1), a right
    copy (0)."""
    if seen['copy'] == 'WRONG':
        return 3
    if seen['access'] and seen['copy'] == 'ok':
        return 0
    return 2 if seen['access'] else 1


def parse_p2p(text):
    """The sample's ``p2p A B access=yes copy=ok`` lines -> ``{(a, b): {'access': bool, 'copy': str}}``; other lines
    (CUDA errors) are left for the caller to show. A pair printed more than once keeps its worst result (a later
    ``copy=ok`` never hides an earlier ``copy=WRONG``)."""
    pairs = {}
    for line in _text(text, 'the sample p2p output').splitlines():
        match = _P2P.match(line.strip())
        if match:
            pair = (int(match.group(1)), int(match.group(2)))
            seen = {'access': match.group(3) == 'yes', 'copy': match.group(4)}
            if pair not in pairs or _p2p_rank(seen) > _p2p_rank(pairs[pair]):
                pairs[pair] = seen
    return pairs


def nvlink_count(name):
    """The number of NVLinks a GPU of this nvidia-smi name has (_data_gpu.NVLINKS_PER_GPU), or None when the data does
    not know the model (then its links are not counted)."""
    if not isinstance(name, str):
        return None
    for pattern, count, _example in _data_gpu.NVLINKS_PER_GPU:
        if re.search(pattern, name):
            return count
    return None


def gpu_names(gpus):
    """``{index: name}`` of the GPUs as gpuops.gpu_server.gpu_facts reports them (a list of dicts with ``index`` and
    ``name``); ``{}`` for None. Raises ValueError naming the entry that is not such a GPU."""
    if gpus is None:
        return {}
    if isinstance(gpus, (str, bytes, dict)) or not isinstance(gpus, (list, tuple)):
        raise ValueError('gpus: expected the GPUs as gpuops.gpu_server.gpu_facts reports them (a list), got %s'
                         % type(gpus).__name__)
    names = {}
    for number, gpu in enumerate(gpus):
        index = gpu.get('index') if isinstance(gpu, dict) else None
        if isinstance(index, str) and index.isascii() and index.isdigit() and len(index) < 6:
            index = int(index)
        if not isinstance(gpu, dict) or isinstance(index, bool) or not isinstance(index, int) or index < 0 \
                or not isinstance(gpu.get('name'), str):
            raise ValueError('gpus entry %d: expected a GPU as gpu_facts reports it, with an index (a number) and a '
                             'name, got %.200r' % (number, gpu))
        names[index] = gpu['name']
    return names


def nvlink_problems(nvlink):
    """Problems in parsed ``nvlink -s``: a GPU with some links up and others not has lost NVLink bandwidth.

    A GPU with no link up is not judged here: PCIe cards without a bridge print their links inactive too.
    link_problems judges it with topo -m (a GPU joined there by NVLink must have links up) and with its model's
    NVLink count."""
    problems = []
    for gpu in nvlink:
        up = [link for link in gpu['links'] if link['state'] == 'up']
        down = [link for link in gpu['links'] if link['state'] != 'up']
        if up and down:
            problems.append('GPU %d (%s): NVLink %s %s while %d links are up'
                            % (gpu['index'], gpu['name'], ', '.join('Link %d' % link['link'] for link in down),
                               'inactive' if all(link['state'] == 'inactive' for link in down)
                               else 'not up (%s)' % ', '.join(sorted(set(link['text'] for link in down))), len(up)))
    return problems


def _label(index, names):
    return 'GPU %d (%s)' % (index, names[index]) if names.get(index) else 'GPU %d' % index


def link_problems(topo_text, nvlink_text, p2p_text, gpus=None):
    """Everything wrong with how the GPUs are joined, as messages (an empty list when nothing is):

    - two GPUs that topo -m shows joined by NVLink (``NV#``) must copy peer to peer (``access=yes copy=ok``, both
      ways; a pair's worst result counts);
    - no peer copy may arrive wrong (``copy=WRONG``);
    - a GPU that topo -m joins to another by NVLink must have NVLinks up in ``nvlink -s`` (with all of them inactive,
      or none listed, PCIe carries the copies and they still arrive right);
    - NVLink state (nvlink_problems): no GPU with some links up and others not;
    - per model, where _data_gpu.NVLINKS_PER_GPU knows its count (SXM modules: H200 and H100 18, A100 12, V100 6 ...)
      and the host has several GPUs: the GPU must be joined to another by NVLink in topo -m, and have that many
      NVLinks up. Fewer is a failure, not a warning: such a board wires every link, so a missing one is lost
      bandwidth, as a partly inactive GPU is.

    gpus: the GPUs as gpu_facts reports them (index, name), so that a model is known even when nvlink -s printed
    nothing for it; without them the names nvlink -s printed are used.

    Returns them with what was seen, for the report: ``{'problems': [...], 'gpus': n, 'nvlink_pairs': n (pairs of GPUs
    joined by NVLink), 'p2p_ok': n (ordered pairs that copied right), 'nvlinks_up': {index: n}, 'nvlinks_expected':
    {index: n} (the GPUs whose model's count is known)}``."""
    topo = parse_topo_matrix(topo_text)
    nvlink = parse_nvlink_status(nvlink_text)
    p2p = parse_p2p(p2p_text)
    names = dict((gpu['index'], gpu['name']) for gpu in nvlink)
    names.update(gpu_names(gpus))
    up = dict((gpu['index'], sum(1 for link in gpu['links'] if link['state'] == 'up')) for gpu in nvlink)
    listed = dict((gpu['index'], gpu) for gpu in nvlink)
    problems, named = [], set()
    nvlink_pairs = set()
    for gpu in topo['gpus']:
        for peer in sorted(gpu['nvlinks']):
            nvlink_pairs.add((min(gpu['index'], peer), max(gpu['index'], peer)))
            seen = p2p.get((gpu['index'], peer))
            if seen is None or not seen['access'] or seen['copy'] != 'ok':
                problems.append('GPU %d and GPU %d are joined by NVLink (%s) but cannot copy peer to peer (%s)'
                                % (gpu['index'], peer, gpu['links'][peer],
                                   'no result' if seen is None else 'access=%s copy=%s'
                                   % ('yes' if seen['access'] else 'no', seen['copy'])))
    for (a, b), seen in sorted(p2p.items()):
        if seen['copy'] == 'WRONG':
            problems.append('p2p %d %d access=yes copy=WRONG: the data GPU %d copied to GPU %d arrived wrong' % (a, b, a, b))
    for gpu in topo['gpus']:
        index = gpu['index']
        if gpu['nvlinks'] and not up.get(index):
            joined = ', '.join('GPU %d (%s)' % (peer, gpu['links'][peer]) for peer in sorted(gpu['nvlinks']))
            state = ('all its %d NVLinks are inactive' % len(listed[index]['links'])
                     if index in listed and listed[index]['links'] and all(
                         link['state'] == 'inactive' for link in listed[index]['links'])
                     else 'no NVLink of it is up' if index in listed and listed[index]['links']
                     else 'nvidia-smi nvlink -s shows no link of it')
            problems.append('%s: topo -m joins it by NVLink to %s, but %s: peer copies go over PCIe'
                            % (_label(index, names), joined, state))
            named.add(index)
    partial = nvlink_problems(nvlink)
    problems.extend(partial)
    named.update(gpu['index'] for gpu in nvlink
                 if any(link['state'] == 'up' for link in gpu['links'])
                 and any(link['state'] != 'up' for link in gpu['links']))
    expected = {}
    for gpu in topo['gpus']:
        index = gpu['index']
        count = nvlink_count(names.get(index))
        if count is None:
            continue
        expected[index] = count
        if len(topo['gpus']) < 2 or index in named:
            continue
        if not gpu['nvlinks']:
            problems.append('%s has %d NVLinks (an SXM module, _data_gpu.NVLINKS_PER_GPU) but topo -m joins it to no '
                            'other GPU by NVLink (%s): check the NVLink fabric (nvidia-fabricmanager on NVSwitch '
                            'boards) and the board' % (_label(index, names), count,
                                                       ', '.join('GPU%d %s' % (peer, kind) for peer, kind
                                                                 in sorted(gpu['links'].items())) or 'no peer'))
        elif up.get(index, 0) < count:
            problems.append('%s: %d of its %d NVLinks up (nvidia-smi nvlink -s lists %d): lost NVLink bandwidth'
                            % (_label(index, names), up.get(index, 0), count,
                               len(listed[index]['links']) if index in listed else 0))
    return {
        'problems': problems,
        'gpus': len(topo['gpus']),
        'nvlink_pairs': len(nvlink_pairs),
        'p2p_ok': sum(1 for seen in p2p.values() if seen['access'] and seen['copy'] == 'ok'),
        'nvlinks_up': up,
        'nvlinks_expected': expected,
    }
