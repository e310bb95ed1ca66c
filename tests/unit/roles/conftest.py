# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The roles' unit tests template a role's variables with Ansible itself: `ansible_play` runs a small playbook against
localhost (or an inventory) and returns the JSON the playbook wrote to `out`."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import sys

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ANSIBLE_PLAYBOOK, run_playbook


@pytest.fixture
def ansible_play(tmp_path):
    """run(TEXT, EXTRA=None, INVENTORY=None, **FIELDS) -> (process, JSON of `out` or None).

    TEXT (and INVENTORY) are %-formatted with FIELDS and `out` (the JSON file to write), `dir` (the test's tmp_path)
    and `python` (this interpreter); EXTRA goes in as extra variables. Without an inventory the play runs on
    localhost through the local connection. `run.dir` is that tmp_path, for the other files a playbook writes."""
    if not os.path.exists(ANSIBLE_PLAYBOOK):
        pytest.skip('ansible-playbook not in this venv')

    def run(text, extra=None, inventory=None, **fields):
        out = tmp_path / 'out.json'
        if out.exists():
            out.unlink()
        fields = dict(fields, out=out, dir=tmp_path, python=sys.executable)
        playbook = tmp_path / 'play.yml'
        playbook.write_text(text % fields)
        if inventory is None:
            proc = run_playbook(playbook, '-e', json.dumps(extra or {}))
        else:
            (tmp_path / 'inventory.yml').write_text(inventory % fields)
            proc = run_playbook(playbook, '-e', json.dumps(extra or {}), inventory=tmp_path / 'inventory.yml', local=False)
        return proc, (json.loads(out.read_text()) if out.exists() else None)

    run.dir = tmp_path
    return run
