# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A directory that several roles create by default (node_exporter's textfile directory: gpu_monitoring_node, backup
and spot write their metrics there) must not get different owners from them: each run would change it back and forth,
and site.yml's re-run would never report 0 changed (seen in make test-server, where all three run on one host)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import collections
import glob
import os
import re

import yaml

from ansible_collections.gpuops.gpu_server.tests.unit.conftest import role_path

ROLES = os.path.dirname(role_path('base'))
FILE_MODULES = ('ansible.builtin.file', 'file')


def _defaults():
    """{variable: literal path} from every role's defaults/main.yml."""
    paths = {}
    for path in glob.glob(os.path.join(ROLES, '*', 'defaults', 'main.yml')):
        with open(path) as handle:
            for name, value in (yaml.safe_load(handle) or {}).items():
                if isinstance(value, str) and value.startswith('/') and '{{' not in value:
                    paths[name] = value
    return paths


def _tasks(items):
    for task in items or []:
        if not isinstance(task, dict):
            continue
        yield task
        for key in ('block', 'rescue', 'always'):
            yield from _tasks(task.get(key))


def directory_owners():
    """{literal path: {(owner, group): [role/task file]}} for the file tasks that create a directory whose path is one
    variable with a literal default."""
    defaults = _defaults()
    owners = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in sorted(glob.glob(os.path.join(ROLES, '*', 'tasks', '*.yml'))):
        with open(path) as handle:
            tasks = yaml.safe_load(handle)
        for task in _tasks(tasks):
            args = next((task[module] for module in FILE_MODULES if isinstance(task.get(module), dict)), None)
            if not args or args.get('state') != 'directory':
                continue
            match = re.fullmatch(r'\{\{\s*(\w+)\s*\}\}', str(args.get('path', '')))
            if not match or match.group(1) not in defaults:
                continue
            where = os.path.relpath(path, ROLES)
            owners[defaults[match.group(1)]][(args.get('owner'), args.get('group'))].append(where)
    return owners


def test_the_textfile_directory_is_created_by_three_roles():
    # The scan finds what this test is about (else the next test would pass on nothing).
    found = directory_owners()['/var/lib/prometheus/node-exporter']
    roles = sorted(where.split(os.sep)[0] for wheres in found.values() for where in wheres)
    assert roles == ['backup', 'gpu_monitoring_node', 'spot'], found


def test_shared_directories_get_one_owner():
    for path, found in directory_owners().items():
        claimed = {owner: wheres for owner, wheres in found.items() if owner != (None, None)}
        assert len(claimed) <= 1, '%s gets different owners: %s' % (path, dict(claimed))
