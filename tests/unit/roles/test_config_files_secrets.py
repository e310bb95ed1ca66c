# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A config_files task that writes a secret keeps it out of the log.

ansible.builtin.copy hid its ``content`` (no_log in its argument spec) and the template module never sent the rendered
text as an argument; gpuops.gpu_server.config_files gets the content as an argument and shows it like any module
(-vvv, --diff). So every config_files task whose content, or the template its content is rendered from, reads a
variable named like a secret (``*password``, ``*passphrase``, ``*token``, ``*private_key``, ``*hash``) carries
``no_log`` (docs/development.md). The checker is a function of the parsed files, with a negative control.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import json
import os
import re

from ansible_collections.gpuops.gpu_server.tests.support.tasks import role_task_files, walk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_EXPRESSION = re.compile(r'{{(.*?)}}', re.S)
_SECRET = re.compile(r'\b[A-Za-z_]*(password|passphrase|token|private_key|hash)\b')
_TEMPLATE = re.compile(r"lookup\('ansible\.builtin\.template',\s*'([^']+)'")


def reads_a_secret(text):
    return any(_SECRET.search(expression) for expression in _EXPRESSION.findall(text))


def unprotected(files, templates):
    """(path, task name) of every config_files task that reads a secret without no_log; templates: {name: text}."""
    found = set()
    for path, data in files.items():
        for task in walk(data):
            args = task.get('gpuops.gpu_server.config_files')
            if not isinstance(args, dict):
                continue
            text = json.dumps(args)
            text += ''.join(templates.get(name, '') for name in _TEMPLATE.findall(text))
            if reads_a_secret(text) and not task.get('no_log'):
                found.add((path, task.get('name')))
    return found


def _files():
    return role_task_files(ROOT)


def _templates():
    templates = {}
    for path in glob.glob(os.path.join(ROOT, 'roles', '*', 'templates', '*')):
        with open(path) as handle:
            templates[os.path.basename(path)] = handle.read()
    return templates


def test_every_config_files_task_that_writes_a_secret_has_no_log():
    files = _files()
    tasks = sum(1 for data in files.values() for task in walk(data) if 'gpuops.gpu_server.config_files' in task)
    assert tasks >= 30, tasks
    assert unprotected(files, _templates()) == set()


def test_a_secret_without_no_log_is_found():
    token = {'name': 'Token', 'gpuops.gpu_server.config_files': {'files': [
        {'path': '/etc/t', 'content': "T={{ jupyter_token }}"}]}}
    rendered = {'name': 'Config', 'gpuops.gpu_server.config_files': {'files': [
        {'path': '/etc/c', 'content': "{{ lookup('ansible.builtin.template', 'c.j2') }}"}]}}
    plain = {'name': 'Plain', 'gpuops.gpu_server.config_files': {'files': [
        {'path': '/etc/p', 'content': "PasswordAuthentication {{ hardening_ssh_password_authentication }}"}]}}
    hidden = dict(token, name='Hidden', no_log=True)
    found = unprotected({'a.yml': [token, rendered, plain, hidden]}, {'c.j2': "h = {{ __x_hash.stdout }}"})
    assert found == {('a.yml', 'Token'), ('a.yml', 'Config')}
