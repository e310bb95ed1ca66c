# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A task tagged ``always`` (the includes of docs/development.md whose files carry their own tags) runs under any
--tags, also where a tag filter skipped the task that sets a fact or register its ``when`` reads: such a name needs a
``default``. Names the role's defaults/main.yml or vars/main.yml define are always there (the OS vars are not: the
preflight that loads them is tagged). storage's include read ``_storage_devices`` (set by discover.yml, tagged
storage_discover) without one, and site.yml under ``--tags hardening_install`` failed on it. With a negative control.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

from ansible_collections.gpuops.gpu_server.tests.support.tasks import names_without_default, role_task_files, walk, when_texts
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import role_path, role_yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_NAME = re.compile(r'(?<![\w.\'"])(_[a-z0-9_]+)')


def _role_names(role):
    names = set()
    for part in ('defaults', 'vars'):
        if os.path.exists(role_path(role, part, 'main.yml')):
            names.update(role_yaml(role, part, 'main.yml').keys())
    return names


def unguarded(files, known):
    """(path, task name, variable) for each role-internal name an always-tagged task's when reads without a default;
    ``known(role)`` gives the names that are always defined."""
    found = set()
    for path, data in files.items():
        role = path.split('/')[1]
        for task in walk(data):
            tags = task.get('tags') or []
            if 'always' not in (tags if isinstance(tags, list) else [tags]):
                continue
            # The task's own loop variable is defined wherever its when is read.
            loop_var = (task.get('loop_control') or {}).get('loop_var')
            for text in when_texts(task):
                for name in names_without_default(text, _NAME):
                    if name not in known(role) and name != loop_var:
                        found.add((path, task.get('name'), name))
    return found


def test_always_tagged_tasks_read_no_fact_without_a_default():
    assert unguarded(role_task_files(ROOT), _role_names) == set()


def test_an_unguarded_fact_is_found():
    task = {'name': 'The disks', 'ansible.builtin.include_tasks': 'disks.yml', 'tags': ['always'],
            'when': '_storage_devices | length > 0'}
    files = {'roles/storage/tasks/main.yml': [task]}
    assert unguarded(files, lambda role: set()) == {('roles/storage/tasks/main.yml', 'The disks', '_storage_devices')}
    task['when'] = '_storage_devices | default([]) | length > 0'
    assert unguarded(files, lambda role: set()) == set()
    # A loop variable is defined, but only for the task that loops with it.
    task['when'] = '_storage_disk.size > 0'
    assert unguarded(files, lambda role: set()) == {('roles/storage/tasks/main.yml', 'The disks', '_storage_disk')}
    task['loop_control'] = {'loop_var': '_storage_disk'}
    assert unguarded(files, lambda role: set()) == set()
