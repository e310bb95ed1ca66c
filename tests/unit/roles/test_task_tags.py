# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A role's tags select the tasks of its dynamic includes too.

Tags on an include_tasks or include_role select the include itself, not the tasks it loads: without the same tags
under `apply`, `--tags hardening_sshd` (or even `--tags hardening`) ran the include and silently skipped every task
in sshd.yml. Imports (static) pass their tags on by themselves, and so does an `apply` block to nested includes.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

INCLUDES = ("ansible.builtin.include_tasks", "ansible.builtin.include_role", "include_tasks", "include_role")
FILES = sorted(glob.glob(os.path.join(ROOT, "roles", "*", "tasks", "*.yml")) + glob.glob(os.path.join(ROOT, "playbooks", "*.yml"))
               + [os.path.join(ROOT, "site.yml")])


def tagged_includes(tasks):
    """(name, tags, apply tags) of each include among tasks, blocks and plays, that carries tags of its own."""
    for task in tasks or []:
        if not isinstance(task, dict):
            continue
        for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
            yield from tagged_includes(task.get(key))
        for key in INCLUDES:
            if key in task and task.get("tags") not in (None, "always", ["always"]):
                args = task[key] if isinstance(task[key], dict) else {}
                tags = task["tags"] if isinstance(task["tags"], list) else [task["tags"]]
                apply_tags = (args.get("apply") or {}).get("tags")
                yield task.get("name"), tags, apply_tags if isinstance(apply_tags, list) or apply_tags is None else [apply_tags]


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, ROOT))
def test_tagged_includes_apply_their_tags_to_what_they_load(path):
    with open(path) as f:
        content = yaml.safe_load(f) or []
    for name, tags, apply_tags in tagged_includes(content if isinstance(content, list) else []):
        assert apply_tags is not None and set(tags) <= set(apply_tags), (
            "%s: %r has tags %s but its apply gives the loaded tasks %s" % (os.path.relpath(path, ROOT), name, tags, apply_tags))


def test_the_check_finds_an_include_without_apply():
    tasks = [{"name": "SSH daemon", "ansible.builtin.include_tasks": "sshd.yml", "tags": ["hardening_sshd"]},
             {"block": [{"name": "nested", "ansible.builtin.include_tasks": {"file": "x.yml", "apply": {"tags": ["a"]}},
                         "tags": ["a", "b"]}]}]
    assert list(tagged_includes(tasks)) == [("SSH daemon", ["hardening_sshd"], None), ("nested", ["a", "b"], ["a"])]
