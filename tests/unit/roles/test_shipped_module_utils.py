# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scripts that roles install on hosts import the collection's module_utils, copied beside them in their package
layout from a hand-kept list in the role's vars (gpu_monitoring's collector, spot's tool, slurm's health check and
power program). Each list must hold exactly what its script imports, directly or through another module_utils file:
a missing file breaks the script on the host only (an ImportError there, not here), an extra one is shipped for
nothing.

The copy has one home, common's tasks_from=script_libraries (roles/common/README.md): each list goes to it together
with the directory its script is installed in, and no other role task copies module_utils by hand. Each checker is a
function of the parsed files, with a negative control."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ast
import copy
import functools
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.tests.support.tasks import role_task_files, walk
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import role_yaml

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

PACKAGE = 'ansible_collections.gpuops.gpu_server.plugins.module_utils'
MODULE_UTILS = os.path.join(ROOT, 'plugins', 'module_utils')
# (role, the vars/main.yml list, the script the list is shipped with, the vars/main.yml directory it is installed in)
SHIPPED = [
    ('gpu_monitoring_node', '_gpu_monitoring_node_collector_modules', 'gpuops-gpu-collector.py',
     '_gpu_monitoring_node_collector_dir'),
    ('spot', '_spot_modules', 'gpuops-spot.py', '_spot_tool_dir'),
    ('slurm', '_slurm_health_modules', 'gpuops-slurm-health.py', '_slurm_health_dir'),
    ('slurm', '_slurm_power_modules', 'gpuops-slurm-power.py', '_slurm_power_dir'),
]
# The one home of the copy.
HOME = 'roles/common/tasks/script_libraries.yml'
# Modules that put a file's content on the host.
WRITERS = {'ansible.builtin.copy', 'ansible.builtin.template', 'gpuops.gpu_server.config_files',
           'ansible.posix.synchronize', 'ansible.builtin.get_url', 'ansible.builtin.unarchive'}
_VAR = re.compile(r'\b(_[a-z0-9_]+)\b')


def imported(path):
    """The module_utils files (``_x.py``) that the Python file PATH imports itself."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PACKAGE:
                found.update('%s.py' % alias.name for alias in node.names)
            elif node.module.startswith(PACKAGE + '.'):
                found.add('%s.py' % node.module[len(PACKAGE) + 1:].split('.')[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + '.'):
                    found.add('%s.py' % alias.name[len(PACKAGE) + 1:].split('.')[0])
    return found


def closure(path, module_utils=MODULE_UTILS):
    """Every module_utils file that PATH needs, through the files it imports."""
    needed, todo = set(), list(imported(path))
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        todo.extend(imported(os.path.join(module_utils, name)) - needed)
    return needed


@pytest.mark.parametrize('role, name, script, directory', SHIPPED, ids=['%s:%s' % (s[0], s[1]) for s in SHIPPED])
def test_each_shipped_list_is_exactly_what_its_script_imports(role, name, script, directory):
    listed = role_yaml(role, 'vars', 'main.yml')[name]
    needed = closure(os.path.join(ROOT, 'roles', role, 'files', script))
    assert needed, '%s imports nothing of module_utils: the list %s is not needed' % (script, name)
    assert len(listed) == len(set(listed)), '%s lists a file twice: %s' % (name, listed)
    assert not needed - set(listed), 'roles/%s/vars/main.yml %s misses %s, which %s imports' % (
        role, name, sorted(needed - set(listed)), script)
    assert not set(listed) - needed, 'roles/%s/vars/main.yml %s ships %s, which %s never imports' % (
        role, name, sorted(set(listed) - needed), script)


def test_the_closure_follows_imports_between_module_utils(tmp_path):
    # Negative control of the check above: a script that imports one file, which imports another.
    utils = tmp_path / 'module_utils'
    utils.mkdir()
    (utils / '_a.py').write_text('from %s import _b\n' % PACKAGE)
    (utils / '_b.py').write_text('from %s._c import thing\n' % PACKAGE)
    (utils / '_c.py').write_text('import os\n')
    script = tmp_path / 'tool.py'
    script.write_text('import sys\nfrom %s import _a  # noqa\n' % PACKAGE)
    assert closure(str(script), str(utils)) == {'_a.py', '_b.py', '_c.py'}
    assert closure(str(script), str(utils)) - {'_a.py', '_b.py'} == {'_c.py'}


@functools.lru_cache(maxsize=None)
def _parsed_task_files():
    return role_task_files(ROOT)


def _task_files():
    """The parsed role task files (a copy: a test may plant a task)."""
    return copy.deepcopy(_parsed_task_files())


@functools.lru_cache(maxsize=None)
def _role_vars():
    """{name: value} of every role's vars/main.yml and defaults/main.yml (the names are role-prefixed)."""
    found = {}
    for role in os.listdir(os.path.join(ROOT, 'roles')):
        for part in ('defaults', 'vars'):
            path = os.path.join(ROOT, 'roles', role, part, 'main.yml')
            if os.path.exists(path):
                with open(path) as f:
                    found.update(yaml.safe_load(f) or {})
    return found


def module_utils_names(variables):
    """The variables whose value names module_utils, directly or through another such variable (a directory, a list
    of the files, the collection_path of plugins/module_utils)."""
    shipped = {entry[1] for entry in SHIPPED}
    found = {name for name, value in variables.items() if 'module_utils' in str(value) or name in shipped}
    while True:
        more = {name for name, value in variables.items()
                if name not in found and set(_VAR.findall(str(value))) & found}
        if not more:
            return found
        found |= more


def hand_copies(files, variables):
    """(path, task name) of every task outside common's home that writes files on the host from module_utils: its
    arguments, loop or vars name module_utils or a variable of module_utils_names."""
    tainted = module_utils_names(variables)
    found = set()
    for path, data in files.items():
        if path == HOME:
            continue
        for task in walk(data):
            writers = WRITERS & set(task)
            if not writers:
                continue
            keys = ('loop', 'with_items', 'vars', 'args')
            text = str([task[module] for module in writers] + [task.get(key) for key in keys])
            if 'module_utils' in text or set(_VAR.findall(text)) & tainted:
                found.add((path, task.get('name')))
    return found


def script_libraries_calls(files):
    """[(path, the import's vars)] of every import or include of common's tasks_from=script_libraries."""
    calls = []
    for path, data in files.items():
        for task in walk(data):
            for module in ('ansible.builtin.import_role', 'ansible.builtin.include_role'):
                args = task.get(module)
                if isinstance(args, dict) and args.get('name') == 'gpuops.gpu_server.common' \
                        and args.get('tasks_from') == 'script_libraries':
                    calls.append((path, task.get('vars') or {}))
    return calls


def test_no_role_copies_module_utils_by_hand():
    assert hand_copies(_task_files(), _role_vars()) == set()


@pytest.mark.parametrize('planted', [
    # spot's copy before common had the entry point
    {'name': 'Install the collection\'s Python that the tool imports',
     'ansible.builtin.copy': {'src': "{{ 'plugins/module_utils' | gpuops.gpu_server.collection_path }}/{{ item }}",
                              'dest': '/usr/local/lib/gpuops-spot/x/{{ item }}', 'mode': '0644'},
     'loop': '{{ _spot_modules }}'},
    # gpu_monitoring_node's, through a directory variable, in config_files
    {'name': 'Install the parsers',
     'gpuops.gpu_server.config_files': {'files': [
         {'path': '/usr/local/lib/c/{{ item }}',
          'content': "{{ lookup('ansible.builtin.file', _gpu_monitoring_node_parsers_dir ~ '/' ~ item, rstrip=false) }}"}]},
     'loop': '{{ _gpu_monitoring_node_collector_modules }}'},
    # a new variable of the role that leads to module_utils through another one
    {'name': 'Copy one parser', 'ansible.builtin.copy': {'src': '{{ _slurm_x_dir }}/_pci.py', 'dest': '/opt/x/_pci.py'},
     'vars': {'_slurm_x_dir': '{{ _slurm_y }}'}},
])
def test_a_planted_hand_copy_is_found(planted):
    files = _task_files()
    files['roles/spot/tasks/install.yml'].append({'name': 'A block', 'block': [planted]})
    variables = dict(_role_vars(), _slurm_y="{{ 'plugins/module_utils' | gpuops.gpu_server.collection_path }}")
    assert hand_copies(files, variables) == {('roles/spot/tasks/install.yml', planted['name'])}


def test_a_copy_of_something_else_is_not_a_hand_copy():
    task = {'name': 'Install the tool', 'ansible.builtin.copy': {'src': 'gpuops-spot.py', 'dest': '{{ _spot_tool }}'}}
    assert hand_copies({'roles/spot/tasks/x.yml': [task]}, _role_vars()) == set()


def _expand(text, variables, depth=5):
    """TEXT with each whole ``{{ name }}`` of VARIABLES replaced by its value, DEPTH times."""
    for _round in range(depth):
        text = re.sub(r'\{\{ *(_[a-z0-9_]+) *\}\}', lambda m: str(variables.get(m.group(1), m.group(0))), text)
    return text


@pytest.mark.parametrize('role, name, script, directory', SHIPPED, ids=['%s:%s' % (s[0], s[1]) for s in SHIPPED])
def test_each_list_goes_to_common_with_its_scripts_directory(role, name, script, directory):
    calls = [(path, args) for path, args in script_libraries_calls(_parsed_task_files())
             if args.get('common_script_module_utils') == '{{ %s }}' % name]
    assert len(calls) == 1, 'roles/%s: %s should go to common (tasks_from=script_libraries) once: %s' % (role, name, calls)
    path, args = calls[0]
    assert path.startswith('roles/%s/tasks/' % role), path
    assert args.get('common_script_dir') == '{{ %s }}' % directory, args
    # The script itself is installed in that directory, by the same file's tasks.
    variables = role_yaml(role, 'vars', 'main.yml')
    wanted = '%s/%s' % (variables[directory], script)
    destinations = set()
    for task in walk(_parsed_task_files()[path]):
        for module in ('ansible.builtin.copy', 'gpuops.gpu_server.config_files'):
            args = task.get(module) or {}
            for entry in args.get('files', [args]):
                destinations.add(_expand(str(entry.get('dest') or entry.get('path') or ''), variables))
    assert wanted in destinations, (wanted, sorted(destinations))


def test_every_call_of_script_libraries_is_one_of_the_shipped_lists():
    lists = {'{{ %s }}' % entry[1] for entry in SHIPPED}
    calls = script_libraries_calls(_task_files())
    assert len(calls) == len(SHIPPED)
    assert {args.get('common_script_module_utils') for _path, args in calls} == lists
