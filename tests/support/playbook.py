# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one way the tests run ansible-playbook: run_playbook for tests/unit and tests/preflight (this checkout's
collection and ansible.cfg, the default output callback), molecule_playbook for the Molecule verifiers (the scenario's
inventory and ansible.cfg). Both without colour, stdout and stderr together in the order they came."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

# The repository root (realpath: imported through .cache/collections, this file's path runs through the link).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')

# pytestmark of a test module that runs playbooks: skipped, not failed, where this interpreter has no ansible-playbook.
needs_ansible_playbook = pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason='ansible-playbook not in this venv')


# common is internal: a test imports one of its entry points through the test-only wrapper role (tests/support/roles),
# as the collection's roles do. common_entry_play(ENTRY) is the start of such a play on localhost, up to the import's
# `tasks_from:` line; the test adds the import's vars and its own tasks.
COMMON_CALLER = os.path.join(ROOT, 'tests', 'support', 'roles', 'common_caller')


def common_entry_play(entry, caller=COMMON_CALLER):
    """The first lines of a play that imports common's ENTRY through CALLER (the wrapper role by default)."""
    return ('\n- hosts: localhost\n  gather_facts: false\n  tasks:\n    - name: The entry point under test\n'
            '      ansible.builtin.import_role:\n        name: %s\n        tasks_from: %s\n' % (caller, entry))


def ansible_environment(**variables):
    """os.environ with this checkout's collection and ansible.cfg, plain output, and VARIABLES on top."""
    environ = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'),
                   ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.cache', 'collections'),
                   ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default', ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1',
                   ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_INVENTORY_UNPARSED_WARNING='false')
    environ.update(variables)
    return environ


def run_playbook(playbook, *args, inventory='localhost,', local=True, env=None, timeout=120):
    """ansible-playbook PLAYBOOK -i INVENTORY ARGS, run from the repository root -> subprocess.CompletedProcess whose
    stdout holds stdout and stderr together.

    INVENTORY: a file or a host list. LOCAL: the hosts are this machine, reached through the local connection and this
    interpreter (False where the inventory says how to reach each host). ENV: a dict added to the environment (PATH
    for fake commands). TIMEOUT: seconds."""
    argv = [ANSIBLE_PLAYBOOK, str(playbook), '-i', str(inventory)]
    if local:
        argv += ['-c', 'local', '-e', 'ansible_python_interpreter=%s' % sys.executable]
    argv += [str(arg) for arg in args]
    return subprocess.run(argv, cwd=ROOT, env=ansible_environment(**(env or {})), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout, check=False)


def molecule_playbook(playbook, *args, extra_vars=None, env=None, timeout=900, command='ansible-playbook'):
    """ansible-playbook PLAYBOOK ARGS against the running Molecule scenario's instances, as Molecule runs it: the
    scenario's inventory and ansible.cfg (MOLECULE_INVENTORY_FILE, MOLECULE_EPHEMERAL_DIRECTORY), this checkout's
    collection -> (exit status, stdout and stderr together).

    The command is the first on PATH, as Molecule's: scripts/molecule-all.sh puts its Mitogen wrapper there.
    EXTRA_VARS: a dict, given as -e JSON. ENV: a dict added to the environment. TIMEOUT: seconds.
    COMMAND='ansible' runs an ad-hoc command instead, PLAYBOOK being its host pattern."""
    environ = dict(os.environ, ANSIBLE_CONFIG=os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'ansible.cfg'),
                   ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.cache', 'collections'), ANSIBLE_FORCE_COLOR='0',
                   ANSIBLE_NOCOLOR='1')
    environ.update(env or {})
    argv = [command, str(playbook), '-i', os.environ['MOLECULE_INVENTORY_FILE']] + [str(arg) for arg in args]
    if extra_vars:
        argv += ['-e', json.dumps(extra_vars)]
    proc = subprocess.run(argv, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=timeout, check=False)
    return proc.returncode, proc.stdout
