# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filters slurm_node_lines, slurm_gres_lines, slurm_gres, slurm_cloud_problems, slurm_cloud_config and
slurm_feature_problems (documented in their .yml files): thin wrappers of
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


def _static(name, static_nodes):
    nodes = _list(name, static_nodes, 'static node names')
    if any(not isinstance(n, str) for n in nodes):
        raise AnsibleFilterError('%s: expected a list of static node names, got %r' % (name, static_nodes))
    return nodes


def slurm_cloud_problems(entries, static_nodes=None):
    """What is wrong with ENTRIES (the slurm role's slurm_cloud_nodes), a sentence each; [] when nothing is. A CLOUD
    node among STATIC_NODES (the static nodes' names) is one."""
    return _slurm.cloud_node_problems(entries, _static('slurm_cloud_problems', static_nodes))


def slurm_cloud_config(entries, default_partition, static_nodes=None):
    """The CLOUD nodes of ENTRIES as slurm.conf and gres.conf lines: {nodes, gres, partitions, names}."""
    try:
        config = _slurm.cloud_config(entries, default_partition, _static('slurm_cloud_config', static_nodes))
    except ValueError as e:
        raise AnsibleFilterError('slurm_cloud_config: %s' % e)
    config['partitions'] = [list(p) for p in config['partitions']]
    return config


def slurm_feature_problems(features, variable='slurm_node_features'):
    """What is wrong with FEATURES (a list of Slurm feature names, VARIABLE's value): [] or one sentence."""
    return _slurm.feature_problems(features, '%s' % (variable,))


class FilterModule(object):
    def filters(self):
        return {'slurm_node_lines': slurm_node_lines, 'slurm_gres_lines': slurm_gres_lines, 'slurm_gres': slurm_gres,
                'slurm_cloud_problems': slurm_cloud_problems, 'slurm_cloud_config': slurm_cloud_config,
                'slurm_feature_problems': slurm_feature_problems}
