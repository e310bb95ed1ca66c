# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The install sequence has one home, common's tasks_from=packages (roles/common/README.md), and common, pki and
vendor_repo are internal roles that refuse a play calling them directly; held in place.

- No role task file outside common waits for the package manager with package_lock and installs packages itself
  (apt, dnf, package): that is the sequence written by hand, which the packages step replaced in 17 files. The few
  files that call package_lock for another reason are named, with the reason.
- Each import of the packages step gives a label of its own role (``docker``, ``hardening_usbguard``): the result
  ``_common_packages[label]`` of one role is never another's.
- Every entry point of common starts with the check of tasks/internal.yml, naming itself; pki and vendor_repo start
  with their own; the argument specs of the three say "Internal:" first, as ansible-doc shows them.
Each checker is a function of the parsed files, with a negative control.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import yaml

from ansible_collections.gpuops.gpu_server.tests.support.tasks import role_task_files, walk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

LOCK = ('gpuops.gpu_server.package_lock', 'package_lock')
INSTALLERS = ('ansible.builtin.apt', 'ansible.builtin.dnf', 'ansible.builtin.package', 'ansible.builtin.yum',
              'apt', 'dnf', 'package', 'yum')
# Files outside common that call package_lock without installing through it, and why.
OWN_LOCK = {
    'roles/base/tasks/sources-apt.yml': 'waits for the lock before it edits the distribution sources',
    'roles/base/tasks/sources-dnf.yml': 'waits for the lock before it installs EPEL and enables CRB',
    'roles/base/tasks/verify.yml': 'reads which packages dpkg lacks, to prove the install',
}
# Of those, files that install a package themselves, and why the packages step does not fit.
OWN_INSTALL = {
    'roles/base/tasks/sources-dnf.yml': "EPEL's release package, on RHEL from a URL whose key no repository holds yet "
                                        '(disable_gpg_check), before any other repository is set up',
}
INTERNAL_ROLES = ('common', 'pki', 'vendor_repo')


def _installs(task):
    """Whether TASK installs packages (an install module whose state is present, latest or its default)."""
    for key in INSTALLERS:
        args = task.get(key)
        if isinstance(args, dict) and 'name' in args and args.get('state', 'present') in ('present', 'latest'):
            return True
    return False


def lock_callers(files):
    """Paths outside roles/common whose tasks call package_lock, from {path: parsed YAML}."""
    return {path for path, data in files.items() if not path.startswith('roles/common/')
            for task in walk(data) if any(key in task for key in LOCK)}


def hand_written_sequences(files):
    """Paths outside roles/common that call package_lock and install packages themselves."""
    return {path for path in lock_callers(files) if any(_installs(task) for task in walk(files[path]))}


def packages_labels(files):
    """(path, label) of every import of common's packages step whose label is not its role's name or name_part."""
    found = set()
    for path, data in files.items():
        role = path.split('/')[1]
        for task in walk(data):
            args = task.get('ansible.builtin.import_role') or task.get('ansible.builtin.include_role')
            if not isinstance(args, dict) or args.get('tasks_from') != 'packages':
                continue
            label = str((task.get('vars') or {}).get('common_packages_label', ''))
            if label != role and not label.startswith(role + '_'):
                found.add((path, label))
    return found


def _first_task(data):
    return (data or [{}])[0]


def unchecked_entry_points(files, entry_points):
    """Entry points of common whose task file does not start with tasks/internal.yml's check naming that entry."""
    missing = set()
    for entry in entry_points:
        first = _first_task(files.get('roles/common/tasks/%s.yml' % entry))
        if (first.get('ansible.builtin.import_tasks') != 'internal.yml'
                or (first.get('vars') or {}).get('_common_entry_point') != entry):
            missing.add(entry)
    return missing


def _files():
    return role_task_files(ROOT)


def _specs(role):
    with open(os.path.join(ROOT, 'roles', role, 'meta', 'argument_specs.yml')) as handle:
        return yaml.safe_load(handle)['argument_specs']


def test_no_role_writes_the_install_sequence_by_hand():
    files = _files()
    assert hand_written_sequences(files) == set(OWN_INSTALL)
    assert lock_callers(files) == set(OWN_LOCK)


def test_a_hand_written_sequence_is_found():
    # Negative control: docker's install.yml as it was before the packages step.
    old = yaml.safe_load('''
- name: Wait for cloud-init or unattended-upgrades to release the package manager, then read the missing packages
  gpuops.gpu_server.package_lock:
    packages: "{{ _docker_packages }}"
  register: __docker_package_lock
- name: Docker's repository
  block:
    - name: Install the Docker engine
      ansible.builtin.apt:
        name: "{{ _docker_packages }}"
        state: present
''')
    lock_only = [{'name': 'Wait', 'gpuops.gpu_server.package_lock': None}]
    files = {'roles/docker/tasks/install.yml': old, 'roles/base/tasks/verify.yml': lock_only,
             'roles/common/tasks/packages.yml': old}
    assert hand_written_sequences(files) == {'roles/docker/tasks/install.yml'}
    assert lock_callers(files) == {'roles/docker/tasks/install.yml', 'roles/base/tasks/verify.yml'}
    removal = [{'name': 'Remove', 'ansible.builtin.apt': {'name': 'x', 'state': 'absent'}}] + lock_only
    assert hand_written_sequences({'roles/x/tasks/a.yml': removal}) == set()


def test_the_packages_step_is_used_by_the_roles_that_install():
    imports = {path for path, data in _files().items() for task in walk(data)
               if (task.get('ansible.builtin.import_role') or {}).get('tasks_from') == 'packages'}
    assert len(imports) >= 16, sorted(imports)


def test_every_label_is_its_own_roles():
    assert packages_labels(_files()) == set()


def test_a_label_of_another_role_is_found():
    task = {'name': 'Install', 'ansible.builtin.import_role': {'name': 'gpuops.gpu_server.common', 'tasks_from': 'packages'},
            'vars': {'common_packages_label': 'docker'}}
    assert packages_labels({'roles/spot/tasks/install.yml': [task]}) == {('roles/spot/tasks/install.yml', 'docker')}


def test_every_entry_point_of_common_refuses_a_direct_call():
    entry_points = set(_specs('common'))
    assert {'packages', 'apt_index', 'preflight'} <= entry_points
    assert unchecked_entry_points(_files(), entry_points) == set()


def test_an_entry_point_without_the_check_is_found():
    # Negative control: apt_index.yml as it was, its include first.
    files = {'roles/common/tasks/apt_index.yml': [{'name': 'Read', 'ansible.builtin.include_tasks': {'file': 'x.yml'}}],
             'roles/common/tasks/packages.yml': [{'name': 'Refuse', 'ansible.builtin.import_tasks': 'internal.yml',
                                                  'vars': {'_common_entry_point': 'apt_index'}}]}
    assert unchecked_entry_points(files, ['apt_index', 'packages', 'preflight']) == {'apt_index', 'packages', 'preflight'}


def test_pki_and_vendor_repo_refuse_a_direct_call():
    files = _files()
    for role in ('pki', 'vendor_repo'):
        first = _first_task(files['roles/%s/tasks/main.yml' % role])
        that = first.get('ansible.builtin.assert', {}).get('that')
        assert 'ansible_parent_role_names' in str(that), role


def test_the_internal_roles_say_so_first():
    for role in INTERNAL_ROLES:
        for entry, spec in _specs(role).items():
            assert spec['short_description'].startswith('Internal: '), (role, entry)
        with open(os.path.join(ROOT, 'roles', role, 'README.md')) as handle:
            assert handle.readline().rstrip().endswith('(internal)'), role
