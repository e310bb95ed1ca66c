# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filters slurm_node_lines, slurm_gres_lines, slurm_gres, slurm_cloud_problems and slurm_cloud_config (documented in their .yml files): thin wrappers of
plugins/module_utils/_slurm.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _slurm


def _list(name, value, what):
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise AnsibleFilterError('%s: expected a list of %s, got %r' % (name, what, value))
    return list(value)


def slurm_node_lines(nodes):
    """slurm.conf's NodeName= lines of NODES: dicts of name, address, hardware (``slurmd -C``'s output), gpus
    (gpu_facts' entries) and features."""
    out = []
    for node in _list('slurm_node_lines', nodes, 'nodes'):
        if not isinstance(node, Mapping):
            raise AnsibleFilterError('slurm_node_lines: expected a dict per node, got %r' % (node,))
        try:
            hardware = _slurm.parse_node_config(node.get('hardware', ''))
            out.append(_slurm.node_line(node.get('name'), node.get('address', ''), hardware,
                                        _list('slurm_node_lines', node.get('gpus'), 'GPUs'),
                                        _list('slurm_node_lines', node.get('features'), 'features')))
        except ValueError as e:
            raise AnsibleFilterError('slurm_node_lines: node %s: %s' % (node.get('name'), e))
    return out


def slurm_gres_lines(gpus, device_dir='/dev'):
    """gres.conf's lines of a node's GPUS (gpu_facts' entries)."""
    gpus = _list('slurm_gres_lines', gpus, 'GPUs')
    if any(not isinstance(g, Mapping) for g in gpus):
        raise AnsibleFilterError('slurm_gres_lines: expected gpu_facts GPU entries (dicts), got %r' % (gpus,))
    return _slurm.gres_lines(gpus, device_dir)


def slurm_gres(gpus):
    """A node's GRES (gpu:<type>:<count>, comma-separated) from its GPUS (gpu_facts' entries); '' for none."""
    gpus = _list('slurm_gres', gpus, 'GPUs')
    if any(not isinstance(g, Mapping) for g in gpus):
        raise AnsibleFilterError('slurm_gres: expected gpu_facts GPU entries (dicts), got %r' % (gpus,))
    return _slurm.gres(gpus)


def slurm_cloud_problems(entries):
    """What is wrong with ENTRIES (the slurm role's slurm_cloud_nodes), a sentence each; [] when nothing is."""
    return _slurm.cloud_node_problems(entries)


def slurm_cloud_config(entries, default_partition):
    """The CLOUD nodes of ENTRIES as slurm.conf and gres.conf lines: {nodes, gres, partitions, names}."""
    try:
        config = _slurm.cloud_config(entries, default_partition)
    except ValueError as e:
        raise AnsibleFilterError('slurm_cloud_config: %s' % e)
    config['partitions'] = [list(p) for p in config['partitions']]
    return config


class FilterModule(object):
    def filters(self):
        return {'slurm_node_lines': slurm_node_lines, 'slurm_gres_lines': slurm_gres_lines, 'slurm_gres': slurm_gres,
                'slurm_cloud_problems': slurm_cloud_problems, 'slurm_cloud_config': slurm_cloud_config}
