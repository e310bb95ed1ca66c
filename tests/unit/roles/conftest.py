# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The roles' unit tests template a role's variables with Ansible itself: `ansible_play` runs a small playbook against
localhost (or an inventory) and returns the JSON the playbook wrote to `out`, with the variables of the roles it names
loaded first, as each role has them (`role_vars_play`)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import sys

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ANSIBLE_PLAYBOOK, run_playbook
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import role_path


# The facts that pick a role's vars file and its platform data, per test platform (tests that template a role's
# variables for a platform: ansible_facts=dict(PLATFORM_FACTS[platform], ...)).
PLATFORM_FACTS = {
    'debian12': dict(distribution='Debian', os_family='Debian', distribution_version='12.8', distribution_major_version='12'),
    'debian13': dict(distribution='Debian', os_family='Debian', distribution_version='13.2', distribution_major_version='13'),
    'ubuntu2004': dict(distribution='Ubuntu', os_family='Debian', distribution_version='20.04', distribution_major_version='20'),
    'ubuntu2204': dict(distribution='Ubuntu', os_family='Debian', distribution_version='22.04', distribution_major_version='22'),
    'ubuntu2404': dict(distribution='Ubuntu', os_family='Debian', distribution_version='24.04', distribution_major_version='24'),
    'ubuntu2604': dict(distribution='Ubuntu', os_family='Debian', distribution_version='26.04', distribution_major_version='26'),
    'ubuntu2804': dict(distribution='Ubuntu', os_family='Debian', distribution_version='28.04', distribution_major_version='28'),
}


def role_vars_play(roles, os_vars=False):
    """A play (YAML) that loads, on every host, each of ROLES' variables as the role has them: its defaults/main.yml,
    with OS_VARS its vars/<the host's ansible_facts['distribution']>.yml, then its vars/main.yml."""
    tasks = []
    for role in roles:
        files = ['defaults/main.yml'] + (["vars/{{ ansible_facts['distribution'] }}.yml"] if os_vars else []) + ['vars/main.yml']
        tasks += [{'ansible.builtin.include_vars': {'file': role_path(role, name)}} for name in files]
    return yaml.safe_dump([{'name': 'The variables of ' + ', '.join(roles), 'hosts': 'all', 'gather_facts': False,
                            'tasks': tasks}], sort_keys=False)


@pytest.fixture
def ansible_play(tmp_path):
    """run(TEXT, EXTRA=None, INVENTORY=None, ROLE_VARS=(), OS_VARS=False, **FIELDS) -> (process, JSON of `out` or None).

    TEXT (and INVENTORY) are %-formatted with FIELDS and `out` (the JSON file to write), `dir` (the test's tmp_path)
    and `python` (this interpreter); EXTRA goes in as extra variables. Without an inventory the play runs on
    localhost through the local connection. ROLE_VARS: roles whose variables a first play loads on every host
    (role_vars_play, with OS_VARS). `run.dir` is that tmp_path, for the other files a playbook writes."""
    if not os.path.exists(ANSIBLE_PLAYBOOK):
        pytest.skip('ansible-playbook not in this venv')

    def run(text, extra=None, inventory=None, role_vars=(), os_vars=False, **fields):
        out = tmp_path / 'out.json'
        if out.exists():
            out.unlink()
        fields = dict(fields, out=out, dir=tmp_path, python=sys.executable)
        playbook = tmp_path / 'play.yml'
        playbook.write_text((role_vars_play(role_vars, os_vars) if role_vars else '') + text % fields)
        if inventory is None:
            proc = run_playbook(playbook, '-e', json.dumps(extra or {}))
        else:
            (tmp_path / 'inventory.yml').write_text(inventory % fields)
            proc = run_playbook(playbook, '-e', json.dumps(extra or {}), inventory=tmp_path / 'inventory.yml', local=False)
        return proc, (json.loads(out.read_text()) if out.exists() else None)

    run.dir = tmp_path
    return run
