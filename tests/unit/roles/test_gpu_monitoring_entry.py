# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_monitoring entry keeps 1.0.0's inventories working after the split into gpu_monitoring_node and
gpu_monitoring_server: each of its options reaches those roles under their name, with the same default and the same
spec, and no option of theirs is left without a source in the entry."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

import yaml

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

SIDES = ('node', 'server')
# The options the entry itself reads to pick the parts of a host, and passes on to neither role.
DISPATCH = {'gpu_monitoring_node_enabled', 'gpu_monitoring_server_enabled'}
ENTRY_VALUE = re.compile(r'^\{\{ (gpu_monitoring_\w+) \}\}$')


def load(role, name):
    with open(os.path.join(ROOT, 'roles', role, name)) as handle:
        return yaml.safe_load(handle) or {}


def options(role):
    return load(role, 'meta/argument_specs.yml')['argument_specs']['main']['options']


def mapping():
    """{role option: entry option} from the entry's vars/main.yml, plus the options with the same name in both."""
    entry_vars = load('gpu_monitoring', 'vars/main.yml')
    entry_defaults = load('gpu_monitoring', 'defaults/main.yml')
    out = {}
    for side in SIDES:
        for name in options('gpu_monitoring_' + side):
            if name in entry_vars:
                m = ENTRY_VALUE.match(entry_vars[name])
                assert m, (name, entry_vars[name])
                out[(side, name)] = m.group(1)
            else:
                assert name in entry_defaults, '%s (gpu_monitoring_%s) has no source in the entry' % (name, side)
                out[(side, name)] = name
    return out


def test_the_entry_keeps_its_69_options():
    assert len(load('gpu_monitoring', 'defaults/main.yml')) == 69
    assert set(options('gpu_monitoring')) == set(load('gpu_monitoring', 'defaults/main.yml'))


def test_every_entry_option_reaches_a_role_or_picks_the_parts():
    reached = set(mapping().values())
    assert set(load('gpu_monitoring', 'defaults/main.yml')) - reached == DISPATCH


def in_entry_names(value, side, pairs):
    """VALUE with the role's option names that a default templates (an URL from a version) put back to the entry's."""
    if not isinstance(value, str):
        return value
    for (other_side, name), source in sorted(pairs.items(), key=lambda item: -len(item[0][1])):
        if other_side == side:
            value = re.sub(r'\b%s\b' % name, source, value)
    return value


def test_each_role_option_has_the_entry_options_default_and_spec():
    entry_defaults = load('gpu_monitoring', 'defaults/main.yml')
    entry_spec = options('gpu_monitoring')
    pairs = mapping()
    for (side, name), source in pairs.items():
        role = 'gpu_monitoring_' + side
        default = in_entry_names(load(role, 'defaults/main.yml')[name], side, pairs)
        assert default == entry_defaults[source], (role, name, source)
        mine, theirs = dict(options(role)[name]), dict(entry_spec[source])
        if 'default' in mine:
            mine['default'] = in_entry_names(mine['default'], side, pairs)
        for spec in (mine, theirs):
            spec.pop('version_added')
            spec.pop('description')
        assert mine == theirs, (role, name, source)


def test_the_entry_passes_on_only_role_options():
    """Every line of the entry's mapping names an option of one of the roles (no stale or misspelt name)."""
    role_options = set(options('gpu_monitoring_node')) | set(options('gpu_monitoring_server'))
    entry_vars = load('gpu_monitoring', 'vars/main.yml')
    passed = set(n for n in entry_vars if not n.startswith('_'))
    assert passed and passed <= role_options, passed - role_options


def test_negative_control_a_dropped_mapping_line_is_caught():
    """Without its line in the entry's vars/main.yml, gpu_monitoring_dcgm_port would reach no role (the node role's
    gpu_monitoring_node_dcgm_port would keep its default whatever the inventory says): the test above must fail."""
    real = load

    def without_dcgm_port(role, name):
        data = real(role, name)
        if (role, name) == ('gpu_monitoring', 'vars/main.yml'):
            data = {k: v for k, v in data.items() if k != 'gpu_monitoring_node_dcgm_port'}
        return data

    globals()['load'] = without_dcgm_port
    try:
        try:
            mapping()
        except AssertionError as e:
            assert 'gpu_monitoring_node_dcgm_port (gpu_monitoring_node) has no source' in str(e)
        else:
            raise AssertionError('a dropped mapping line went unnoticed')
    finally:
        globals()['load'] = real


def test_the_server_reads_the_web_files_where_the_node_roles_tasks_write_them():
    """gpu_monitoring_server includes gpu_monitoring_node's web-auth and web-endpoint tasks, which write the web
    configuration files and the password hash under the node role's paths; the server passes its own paths to
    Prometheus and Alertmanager (--web.config.file, password_file, ca_file): they must be the same."""
    node, server = load('gpu_monitoring_node', 'vars/main.yml'), load('gpu_monitoring_server', 'vars/main.yml')
    for suffix in ('web_dir', 'web_group', 'pki_dir', 'ca_file', 'web_password_path'):
        mine = server['_gpu_monitoring_server_' + suffix].replace('_gpu_monitoring_server_', '_gpu_monitoring_node_')
        assert mine == node['_gpu_monitoring_node_' + suffix], suffix
    for endpoint, path in server['_gpu_monitoring_server_web_config_files'].items():
        assert path.replace('_gpu_monitoring_server_', '_gpu_monitoring_node_') == \
            node['_gpu_monitoring_node_web_config_files'][endpoint], endpoint
    assert set(server['_gpu_monitoring_server_web_config_files']) == {'prometheus', 'alertmanager'}
