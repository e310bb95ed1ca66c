# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""common's tasks_from=platform_vars, the one platform-vars loader (the first_found chain over a role's vars/):

- run by Ansible: the chain picks the most specific file (base's Debian-11.yml on Debian 11, Debian.yml on 12, Ubuntu.yml
  on Ubuntu), and a file that sets a variable other than the role's internal ones (_<role>_*), which would outrank the
  inventory, fails before it is loaded (dev-sec's rule);
- held in place: no other role task holds a first_found chain, every roles/*/vars/<platform>.yml sets internal
  variables only, and each role that has such files loads them through common."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import json
import os

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT, common_entry_play
from ansible_collections.gpuops.gpu_server.tests.support.tasks import role_task_files, walk
from ansible_collections.gpuops.gpu_server.tests.unit.roles.conftest import PLATFORM_FACTS

# common is internal: the play imports the entry point through the test-only wrapper role (tests/support/roles).
PLAYBOOK = common_entry_play('platform_vars') + '''      vars:
        common_role_name: "{{ role }}"
    - name: Write what it loaded
      ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ {'components': _base_gpu_components | default(None),
                      'mdadm': _storage_mdadm_conf | default(None),
                      'public': base_marker | default(None)} | to_json }}"
        mode: "0644"
'''


@pytest.mark.parametrize('role, platform, key, expected', [
    ('base', 'ubuntu2204', 'components', ['restricted', 'multiverse']),
    ('storage', 'debian12', 'mdadm', '/etc/mdadm/mdadm.conf'),
])
def test_the_chain_loads_the_roles_file_for_the_platform(ansible_play, role, platform, key, expected):
    with open(os.path.join(ROOT, 'roles', role, 'vars', 'Ubuntu.yml' if platform.startswith('ubuntu') else 'Debian.yml')) as f:
        assert yaml.safe_load(f)  # the file the chain should pick exists
    proc, got = ansible_play(PLAYBOOK, dict(role=role, ansible_facts=PLATFORM_FACTS[platform]))
    assert proc.returncode == 0, proc.stdout
    assert got[key] == expected


def test_the_most_specific_file_wins(ansible_play):
    """Debian 11 has base's Debian-11.yml (no non-free-firmware there); Debian 12 falls back to Debian.yml."""
    eleven = dict(PLATFORM_FACTS['debian12'], distribution_version='11.11', distribution_major_version='11')
    proc, got = ansible_play(PLAYBOOK, dict(role='base', ansible_facts=eleven))
    assert proc.returncode == 0, proc.stdout
    assert got['components'] == ['contrib', 'non-free']
    proc, got = ansible_play(PLAYBOOK, dict(role='base', ansible_facts=PLATFORM_FACTS['debian12']))
    assert got['components'] == ['contrib', 'non-free', 'non-free-firmware']


def test_a_file_that_would_outrank_the_inventory_is_refused(ansible_play):
    # Negative control: a vars dir (given as an extra variable, which outranks common's own) whose Debian file sets a
    # public variable of base beside an internal one.
    fake = ansible_play.dir / 'vars'
    fake.mkdir()
    (fake / 'Debian.yml').write_text('---\n_base_gpu_components: [main]\nbase_marker: from the OS file\n')
    proc, got = ansible_play(PLAYBOOK, dict(role='base', ansible_facts=PLATFORM_FACTS['debian12'],
                                            _common_platform_vars_dir=str(fake)))
    assert proc.returncode != 0 and got is None
    assert 'sets base_marker: a platform' in proc.stdout and 'only the role\'s internal variables (_base_*)' in proc.stdout
    # The same file without the public variable is loaded.
    (fake / 'Debian.yml').write_text('---\n_base_gpu_components: [main]\n')
    proc, got = ansible_play(PLAYBOOK, dict(role='base', ansible_facts=PLATFORM_FACTS['debian12'],
                                            _common_platform_vars_dir=str(fake)))
    assert proc.returncode == 0, proc.stdout
    assert got['components'] == ['main'] and got['public'] is None


def platform_files():
    """{role: [vars/<platform>.yml files]} of every role."""
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, 'roles', '*', 'vars', '*.yml'))):
        if os.path.basename(path) != 'main.yml':
            found.setdefault(path.split(os.sep)[-3], []).append(path)
    return found


def hand_loaders(files):
    """(path, task name) of every task outside common that holds a first_found lookup."""
    return {(path, task.get('name')) for path, data in files.items() if not path.startswith('roles/common/')
            for task in walk(data)
            if 'first_found' in json.dumps({k: v for k, v in task.items() if k not in ('block', 'rescue', 'always')})}


def test_only_common_holds_the_chain():
    assert hand_loaders(role_task_files(ROOT)) == set()


def test_a_hand_written_chain_is_found():
    task = {'name': 'Load the platform\'s names', 'ansible.builtin.include_vars':
            "{{ lookup('ansible.builtin.first_found', __x_vars_candidates) }}"}
    assert hand_loaders({'roles/x/tasks/preflight.yml': [{'block': [task]}]}) == {
        ('roles/x/tasks/preflight.yml', "Load the platform's names")}


def test_every_platform_file_sets_internal_variables_only_and_goes_through_common():
    files = role_task_files(ROOT)
    roles = platform_files()
    assert set(roles) >= {'base', 'cuda_toolkit', 'hardening', 'nvidia_driver', 'storage'}
    for role, paths in roles.items():
        for path in paths:
            with open(path) as f:
                public = [name for name in (yaml.safe_load(f) or {}) if not name.startswith('_%s_' % role)]
            assert not public, '%s sets %s' % (path, public)
        calls = [task for data in (files.get('roles/%s/tasks/%s' % (role, name))
                                   for name in ('preflight.yml', 'main.yml')) if data
                 for task in walk(data)
                 if (task.get('ansible.builtin.import_role') or {}).get('tasks_from') == 'platform_vars']
        assert len(calls) == 1 and calls[0]['vars'] == {'common_role_name': role}, (role, calls)
