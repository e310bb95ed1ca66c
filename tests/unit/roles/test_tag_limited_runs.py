# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A run limited by tags (`--tags docker`, `--skip-tags ...`) runs only the tasks tagged `always` of the other roles.

ansible-core puts a validation task, tagged always, before every imported role entry point with an argument spec. The
packages step of common, imported by every role, took the role's package list as an argument; its validation evaluated
that list in runs whose tags skipped the preflight that loads the variables it comes from, and failed
("'_hardening_base_packages' is undefined" under `--tags base`). The callers now import it with rolespec_validate false
and the step validates itself under their tags. Each role that imports the step is run here on this machine, in check
mode, with a tag no task has: only the always tasks run, and none may fail.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os
import re

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ANSIBLE_PLAYBOOK, run_playbook

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
IMPORT = re.compile(r'^(?P<indent> +)tasks_from: packages\n(?P=indent)(?:#[^\n]*\n(?P=indent))?rolespec_validate: (?P<value>\S+)$',
                    re.M)


def callers():
    """The roles whose task files import common's packages step (not the internal ones, which no play may run: pki's
    callers, jupyter and the monitoring roles, are among them)."""
    found = set()
    for path in glob.glob(os.path.join(ROOT, 'roles', '*', 'tasks', '*.yml')):
        with open(path) as f:
            if re.search(r'^ +tasks_from: packages$', f.read(), re.M):
                found.add(path.split(os.sep)[-3])
    return sorted(found - {'common', 'pki', 'vendor_repo'})


def imports_without_opt_out(text):
    """The number of imports of the packages step in TEXT that keep ansible-core's always-tagged validation."""
    total = len(re.findall(r'^ +tasks_from: packages$', text, re.M))
    opted_out = sum(1 for m in IMPORT.finditer(text) if m.group('value') == 'false')
    return total - opted_out


def test_every_import_of_the_packages_step_opts_out_of_the_always_validation():
    assert len(callers()) >= 14
    offenders = []
    for path in glob.glob(os.path.join(ROOT, 'roles', '*', 'tasks', '*.yml')) + \
            glob.glob(os.path.join(ROOT, 'tests', 'support', 'roles', '*', 'tasks', '*.yml')):
        with open(path) as f:
            if imports_without_opt_out(f.read()):
                offenders.append(os.path.relpath(path, ROOT))
    assert offenders == []


def test_the_opt_out_check_can_fail():
    """Negative control: an import without the option is counted."""
    text = '- ansible.builtin.import_role:\n    name: gpuops.gpu_server.common\n    tasks_from: packages\n  vars: {}\n'
    assert imports_without_opt_out(text) == 1
    assert imports_without_opt_out(text.replace('packages\n', 'packages\n    rolespec_validate: false\n')) == 0


PLAY = '''
- hosts: localhost
  gather_facts: true
  roles:
    - gpuops.gpu_server.%(role)s
'''


def run_with_unused_tag(tmp_path, text):
    playbook = tmp_path / 'play.yml'
    playbook.write_text(text)
    return run_playbook(playbook, '--check', '--tags', 'gpuops_no_task_has_this_tag', timeout=300)


@pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason='ansible-playbook not in this venv')
@pytest.mark.parametrize('role', callers())
def test_a_run_limited_to_other_tags_passes(role, tmp_path):
    proc = run_with_unused_tag(tmp_path, PLAY % {'role': role})
    assert proc.returncode == 0, proc.stdout
    assert 'failed=0' in proc.stdout, proc.stdout


@pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason='ansible-playbook not in this venv')
def test_the_always_validation_fails_such_a_run(tmp_path):
    """Negative control: the step imported with ansible-core's own validation, its package list from a variable that
    a skipped task would have set, fails the same run (through the test-only caller role, as common is internal)."""
    roles = tmp_path / 'roles' / 'caller' / 'tasks'
    roles.mkdir(parents=True)
    (roles / 'main.yml').write_text(
        '- name: Load the list (skipped by the tags)\n'
        '  ansible.builtin.set_fact:\n    __caller_packages: [bash]\n  tags: [caller_preflight]\n'
        '- name: The packages step\n  ansible.builtin.import_role:\n    name: gpuops.gpu_server.common\n'
        '    tasks_from: packages\n  vars:\n    common_packages_label: caller\n'
        '    common_packages_names: "{{ __caller_packages }}"\n  tags: [caller_install]\n')
    proc = run_playbook_with_roles(tmp_path, '- hosts: localhost\n  gather_facts: false\n  roles: [caller]\n')
    assert proc.returncode != 0, proc.stdout
    assert "'__caller_packages' is undefined" in proc.stdout, proc.stdout


def run_playbook_with_roles(tmp_path, text):
    playbook = tmp_path / 'play.yml'
    playbook.write_text(text)
    return run_playbook(playbook, '--check', '--tags', 'gpuops_no_task_has_this_tag', timeout=300,
                        env={'ANSIBLE_ROLES_PATH': str(tmp_path / 'roles')})


@pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason='ansible-playbook not in this venv')
def test_the_step_still_validates_its_arguments(tmp_path):
    """The opt-out moves the validation into the step, it does not drop it: a repository that is no dict is refused."""
    caller = os.path.join(ROOT, 'tests', 'support', 'roles', 'common_caller')
    playbook = tmp_path / 'play.yml'
    playbook.write_text(
        '- hosts: localhost\n  gather_facts: false\n  tasks:\n'
        '    - name: The step with a bad argument\n      ansible.builtin.include_role:\n'
        '        name: %s\n        tasks_from: packages\n      vars:\n        common_packages_label: t\n'
        '        common_packages_names: [bash]\n        common_packages_repo: "not a dict"\n' % caller)
    proc = run_playbook(playbook, '--check', timeout=300)
    assert proc.returncode != 0, proc.stdout
    assert "argument 'common_packages_repo' is of type str" in proc.stdout, proc.stdout
    assert 'Wait for cloud-init' not in proc.stdout, proc.stdout
