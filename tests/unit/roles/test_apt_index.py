# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The apt index refresh has one home, common's tasks_from=apt_index (roles/common/README.md), held in place.

- No role's apt task refreshes the index itself (``update_cache``), but for upgrade_driver's kernel simulation, which
  wants the archive as it is now.
- The ``when`` and ``vars`` of every import of apt_index, or of the packages step that imports it, read no role-private register (``__name``) without a
  ``default``: Ansible runs the import's argument validation under any --tags and evaluates them there, where a task
  that a tag filter skipped left its register undefined (the hardening scenario's tagged re-run failed on it).
Each checker is a function of the parsed files, with a negative control.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

from ansible_collections.gpuops.gpu_server.tests.support.tasks import names_without_default, role_task_files, walk, when_texts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# apt tasks that may refresh the index themselves, and why.
OWN_REFRESH = {
    'roles/common/tasks/apt_index_read.yml',  # the one home (included by apt_index.yml)
    'roles/upgrade_driver/tasks/before.yml',  # the kernel simulation reads the archive as it is now
}
# common's entry points that refresh the index: apt_index, and the packages step (which imports it).
INDEX_ENTRY_POINTS = ('apt_index', 'packages')
_REGISTER = re.compile(r'(?<![\w.\'"])(__[a-z0-9_]+)')


def own_refreshes(files):
    """Paths whose apt tasks set update_cache, from {path: parsed YAML}."""
    found = set()
    for path, data in files.items():
        for task in walk(data):
            args = task.get('ansible.builtin.apt')
            if isinstance(args, dict) and 'update_cache' in args:
                found.add(path)
    return found


def unguarded_registers(files):
    """(path, task name, register) for every register that an import of apt_index (or of packages, which imports it)
    reads in its when or vars without a default."""
    found = set()
    for path, data in files.items():
        for task in walk(data):
            args = task.get('ansible.builtin.import_role')
            if not isinstance(args, dict) or args.get('tasks_from') not in INDEX_ENTRY_POINTS:
                continue
            texts = when_texts(task) + [str(value) for value in (task.get('vars') or {}).values()]
            for text in texts:
                for name in names_without_default(text, _REGISTER):
                    found.add((path, task.get('name'), name))
    return found


def _files():
    return role_task_files(ROOT)


def test_only_common_refreshes_the_apt_index():
    assert own_refreshes(_files()) == OWN_REFRESH


def test_an_own_refresh_is_found():
    task = {'name': 'Install', 'ansible.builtin.apt': {'name': 'x', 'update_cache': True}}
    assert own_refreshes({'roles/x/tasks/main.yml': [{'block': [task]}]}) == {'roles/x/tasks/main.yml'}


def test_every_apt_index_import_reads_its_registers_with_a_default():
    files = _files()
    imports = sum(1 for data in files.values() for task in walk(data)
                  if (task.get('ansible.builtin.import_role') or {}).get('tasks_from') in INDEX_ENTRY_POINTS)
    assert imports >= 10, imports
    assert unguarded_registers(files) == set()


def test_an_unguarded_register_is_found():
    task = {'name': 'Refresh',
            'ansible.builtin.import_role': {'name': 'gpuops.gpu_server.common', 'tasks_from': 'apt_index'},
            'when': ['__x_list is changed', '(__y | default({})) is changed'],
            'vars': {'common_apt_index_refresh': "{{ __z.changed }}"}}
    assert unguarded_registers({'a.yml': [task]}) == {('a.yml', 'Refresh', '__x_list'), ('a.yml', 'Refresh', '__z')}


def test_an_unguarded_register_of_a_packages_import_is_found():
    task = {'name': 'Install',
            'ansible.builtin.import_role': {'name': 'gpuops.gpu_server.common', 'tasks_from': 'packages'},
            'vars': {'common_packages_index_refresh': "{{ __z is changed }}"}}
    assert unguarded_registers({'a.yml': [task]}) == {('a.yml', 'Install', '__z')}
