# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The check-mode idiom of docs/development.md ("Check mode"), held in place.

- No set_fact task sets a check-mode flag: flags are role variables in vars/main.yml. The two set_fact tasks that set
  a ``*_pending`` fact are named here: vendor_repo's return value and nvidia_driver's reboot state (not check mode).
- ``ansible_check_mode`` appears in tasks and handlers only in the cases that docs/development.md names.
- Every platform preflight is the common role's.
Each checker is a function of the parsed files, with a negative control.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import collections
import glob
import os

import yaml

from ansible_collections.gpuops.gpu_server.tests.support.tasks import walk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# set_fact tasks that may set a *_pending fact, and why (docs/development.md, "Check mode").
FLAG_SET_FACTS = {
    ('vendor_repo', 'Tell the caller whether the repository changed and whether check mode waits for its index'),
    ('nvidia_driver', 'Compare the loaded kernel module with the installed driver'),  # reboot state, not check mode
    ('nvidia_driver', 'Remember what the reboot loaded'),  # reboot state, not check mode
}
# Where tasks and handlers may read ansible_check_mode, and how often: the named cases of docs/development.md.
CHECK_MODE_READS = {
    # 1. verify skipped as a whole, on its import (gpu_monitoring_node, gpu_monitoring_server); log_management's journald proof
    'roles/amd_driver/tasks/main.yml': 1,
    'roles/backup/tasks/main.yml': 1, 'roles/base/tasks/main.yml': 1, 'roles/firewall/tasks/main.yml': 1,
    'roles/hardening/tasks/main.yml': 1,
    'roles/jupyter/tasks/main.yml': 1, 'roles/nvidia_container_toolkit/tasks/main.yml': 1,
    'roles/spot/tasks/main.yml': 1, 'roles/training_cluster/tasks/main.yml': 1,
    'roles/slurm/tasks/main.yml': 1, 'roles/storage/tasks/disks.yml': 1,
    'roles/gpu_monitoring_node/tasks/main.yml': 1,
    'roles/gpu_monitoring_server/tasks/main.yml': 1, 'roles/log_management/tasks/verify.yml': 1,
    'roles/rocm/tasks/main.yml': 1,
    # 2. real work only: the GPUs, the acceptance sample, the driver upgrade (and its report's words)
    'roles/gpu_acceptance/tasks/main.yml': 2, 'roles/cuda_toolkit/tasks/verify.yml': 1,
    'roles/upgrade_driver/tasks/upgrade.yml': 1, 'roles/upgrade_driver/tasks/before.yml': 1,
    'roles/upgrade_driver/tasks/preflight.yml': 1,
    # 3. no module load or reboot in check mode
    'roles/nvidia_driver/tasks/reboot.yml': 2,
    # 4. a probe only for a check-mode flag (common's packages step: does apt know the packages?)
    'roles/common/tasks/packages.yml': 1,
    # vendor_repo's return value (_vendor_repo_index_pending)
    'roles/vendor_repo/tasks/main.yml': 1,
}


def flag_set_facts(files):
    """(role, task name) of every set_fact task that sets a *_pending fact, from {path: parsed YAML}."""
    found = set()
    for path, data in files.items():
        for task in walk(data):
            facts = task.get('ansible.builtin.set_fact') or task.get('set_fact')
            if isinstance(facts, dict) and any(str(key).endswith('_pending') for key in facts):
                found.add((path.split('/')[1], task.get('name')))
    return found


def check_mode_reads(texts):
    """{path: number of lines that read ansible_check_mode} from {path: text}."""
    return {path: count for path, count in
            ((path, sum('ansible_check_mode' in line for line in text.splitlines())) for path, text in texts.items())
            if count}


def _role_files():
    return sorted(glob.glob(os.path.join(ROOT, 'roles', '*', 'tasks', '*.yml'))
                  + glob.glob(os.path.join(ROOT, 'roles', '*', 'handlers', '*.yml')))


def _relative(path):
    return os.path.relpath(path, ROOT).replace(os.sep, '/')


def test_no_set_fact_task_sets_a_check_mode_flag():
    files = {}
    for path in _role_files():
        with open(path) as handle:
            files[_relative(path)] = yaml.safe_load(handle)
    assert flag_set_facts(files) == FLAG_SET_FACTS


def test_a_set_fact_flag_is_found():
    task = {'name': 'Remember', 'ansible.builtin.set_fact': {'_x_pending': '{{ ansible_check_mode }}'}}
    assert flag_set_facts({'roles/x/tasks/main.yml': [{'block': [task]}]}) == {('x', 'Remember')}


def test_ansible_check_mode_is_read_only_in_the_named_cases():
    texts = {}
    for path in _role_files():
        with open(path) as handle:
            texts[_relative(path)] = handle.read()
    assert check_mode_reads(texts) == CHECK_MODE_READS


def test_an_inline_check_mode_guard_is_found():
    assert check_mode_reads({'a.yml': '- name: x\n  when: not ansible_check_mode\n', 'b.yml': '---\n'}) == {'a.yml': 1}


def test_every_platform_preflight_is_the_common_role():
    asserts = collections.Counter()
    for path in _role_files():
        with open(path) as handle:
            if 'Assert that the platform is supported' in handle.read():
                asserts[_relative(path)] += 1
    assert dict(asserts) == {'roles/common/tasks/preflight.yml': 1}
    for path in glob.glob(os.path.join(ROOT, 'roles', '*', 'vars', 'main.yml')):
        role = path.split(os.sep)[-3]
        with open(path) as handle:
            if '_%s_supported_platforms' % role not in (yaml.safe_load(handle) or {}):
                continue
        with open(os.path.join(ROOT, 'roles', role, 'tasks', 'preflight.yml')) as handle:
            text = handle.read()
        assert 'common_supported_platforms: "{{ _%s_supported_platforms }}"' % role in text, role
