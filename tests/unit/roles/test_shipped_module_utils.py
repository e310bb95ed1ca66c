# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scripts that roles install on hosts import the collection's module_utils, copied beside them in their package
layout from a hand-kept list in the role's vars (gpu_monitoring's collector, spot's tool, slurm's health check and
power program). Each list must hold exactly what its script imports, directly or through another module_utils file:
a missing file breaks the script on the host only (an ImportError there, not here), an extra one is shipped for
nothing."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ast
import os

import pytest

from ansible_collections.gpuops.gpu_server.tests.unit.conftest import role_yaml

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

PACKAGE = 'ansible_collections.gpuops.gpu_server.plugins.module_utils'
MODULE_UTILS = os.path.join(ROOT, 'plugins', 'module_utils')
# (role, the vars/main.yml list, the script the list is shipped with)
SHIPPED = [
    ('gpu_monitoring', '_gpu_monitoring_collector_modules', 'gpuops-gpu-collector.py'),
    ('spot', '_spot_modules', 'gpuops-spot.py'),
    ('slurm', '_slurm_health_modules', 'gpuops-slurm-health.py'),
    ('slurm', '_slurm_power_modules', 'gpuops-slurm-power.py'),
]


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


@pytest.mark.parametrize('role, name, script', SHIPPED, ids=['%s:%s' % (s[0], s[1]) for s in SHIPPED])
def test_each_shipped_list_is_exactly_what_its_script_imports(role, name, script):
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
