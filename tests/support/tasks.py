# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading a role's parsed task files, for the static checks of tests/unit/roles."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os
import re

import yaml

_DEFAULT = re.compile(r'\s*\|\s*default\b')


def walk(items):
    """Every task of a parsed task file, the tasks inside block, rescue and always included."""
    for task in items or []:
        if isinstance(task, dict):
            yield task
            for key in ('block', 'rescue', 'always'):
                yield from walk(task.get(key))


def role_task_files(root):
    """{'roles/<role>/tasks/<file>.yml': parsed YAML} for every role task file under the repository root ``root``."""
    files = {}
    for path in sorted(glob.glob(os.path.join(root, 'roles', '*', 'tasks', '*.yml'))):
        with open(path) as handle:
            files[os.path.relpath(path, root).replace(os.sep, '/')] = yaml.safe_load(handle)
    return files


def when_texts(task):
    """A task's ``when`` as a list of strings (one condition or a list of them)."""
    when = task.get('when', [])
    return [str(item) for item in (when if isinstance(when, list) else [when])]


def names_without_default(text, pattern):
    """The names ``pattern`` (a compiled regular expression, the name in group 1) finds in a template or condition
    text that no ``| default`` follows."""
    return [match.group(1) for match in pattern.finditer(text) if not _DEFAULT.match(text, match.end())]
