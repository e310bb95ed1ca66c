# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The shape of plugins/module_utils stays as issue 54 cut it: files of one concern, each module's helpers its own.

1. No module_utils file is longer than LINE_BUDGET lines, unless OVER_BUDGET names it with the reason; an entry whose
   file is gone or back under the budget is stale and fails too.
2. No private helper crosses a module: no ``from ..._x import _y`` (absolute or relative) and no ``_x._y`` where
   ``_x`` is an imported module_utils file, in plugins/ and in the host scripts that roles ship (roles/*/files).
3. A module_utils name is used from the module that defines it: ``_x.name`` where ``_x`` only imports ``name`` from
   elsewhere is a re-export (the split's callers must import each name from its new home), in plugins/, the host
   scripts and tests/unit.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULE_UTILS = os.path.join(ROOT, 'plugins', 'module_utils')
PACKAGE = 'ansible_collections.gpuops.gpu_server.plugins.module_utils'

# About a screen-full of concerns: _kernels.py (954 lines, seven concerns) and _compat.py (803, four) were over it;
# the largest file of one concern after the split is under 450.
LINE_BUDGET = 600
# Files allowed over the budget, each with why it is one concern all the same.
OVER_BUDGET = {
    # The spot tool's library (shipped beside roles/spot/files/gpuops-spot.py): one concern, the interruption notice,
    # with a parser per cloud (AWS, GCP, Azure, Alibaba, Tencent) and the poller that asks them; 620 lines.
    '_spot.py': 'one parser per cloud for the same notice, and the poller that uses them',
}


def _lines(path):
    with open(path, encoding='utf-8') as handle:
        return handle.read().count('\n')


def budget_problems(directory, budget=LINE_BUDGET, allowed=None):
    """The files of DIRECTORY over BUDGET lines that ALLOWED (a dict, name -> reason) does not name, and the entries of
    ALLOWED that are stale (no such file, or not over the budget)."""
    allowed = OVER_BUDGET if allowed is None else allowed
    sizes = dict((os.path.basename(p), _lines(p)) for p in glob.glob(os.path.join(directory, '*.py')))
    problems = ['%s has %d lines, over the budget of %d: split it by concern, or add it to OVER_BUDGET with the reason'
                % (name, size, budget) for name, size in sorted(sizes.items()) if size > budget and name not in allowed]
    for name in sorted(allowed):
        if name not in sizes:
            problems.append('OVER_BUDGET names %s, which is no file of module_utils: remove the entry' % name)
        elif sizes[name] <= budget:
            problems.append('OVER_BUDGET names %s, which has %d lines, within the budget: remove the entry'
                            % (name, sizes[name]))
    return problems


def _module_utils_aliases(tree):
    """Local name -> module_utils file name (``_x``) for each ``from PACKAGE import _x [as y]`` (or ``from . import``)."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module == PACKAGE or (node.level and not node.module)):
            for alias in node.names:
                aliases[alias.asname or alias.name] = alias.name
    return aliases


def _imported_from(node):
    """The module_utils file (``_x``) an ``ImportFrom`` reads names from, or None."""
    module = node.module or ''
    if node.level and module:
        return module.split('.')[0]
    if module.startswith(PACKAGE + '.'):
        return module[len(PACKAGE) + 1:].split('.')[0]
    return None


def private_import_problems(path, text=None):
    """Each private helper PATH takes from another module_utils file: ``from ..._x import _y`` or ``_x._y``."""
    text = _read(path) if text is None else text
    tree = ast.parse(text)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _imported_from(node):
            problems += ['%s:%d imports the private %s from %s: make it public in %s (or move it), or keep it inside'
                         % (path, node.lineno, alias.name, _imported_from(node), _imported_from(node))
                         for alias in node.names if alias.name.startswith('_')]
    aliases = _module_utils_aliases(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                and node.attr.startswith('_') and not node.attr.startswith('__'):
            problems.append('%s:%d reads the private %s.%s: make it public or keep it inside %s'
                            % (path, node.lineno, aliases[node.value.id], node.attr, aliases[node.value.id]))
    return problems


def defined_names(path):
    """The names a module defines at its top level (functions, classes, assignments), not those it imports."""
    names = set()
    for node in ast.parse(_read(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names |= set(t.id for t in ast.walk(target) if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def reexport_problems(path, module_utils=MODULE_UTILS, text=None):
    """Each ``_x.name`` in PATH where the module_utils file ``_x`` does not define ``name`` (it imports it)."""
    text = _read(path) if text is None else text
    tree = ast.parse(text)
    aliases = _module_utils_aliases(tree)
    defined, problems = {}, []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases):
            continue
        module = aliases[node.value.id]
        source = os.path.join(module_utils, module + '.py')
        if not os.path.isfile(source) or node.attr.startswith('__'):
            continue
        if module not in defined:
            defined[module] = defined_names(source)
        if node.attr not in defined[module]:
            problems.append('%s:%d reads %s.%s, which %s only imports: import it from the module that defines it'
                            % (os.path.relpath(path, ROOT), node.lineno, module, node.attr, module))
    return problems


def _read(path):
    with open(path, encoding='utf-8') as handle:
        return handle.read()


def _python(*patterns):
    return sorted(p for pattern in patterns for p in glob.glob(os.path.join(ROOT, pattern), recursive=True))


PLUGINS_AND_SCRIPTS = ('plugins/**/*.py', 'roles/*/files/*.py')


def test_no_module_utils_file_over_the_line_budget():
    assert len(glob.glob(os.path.join(MODULE_UTILS, '_*.py'))) > 30
    assert budget_problems(MODULE_UTILS) == []


def test_no_private_helper_crosses_a_module():
    paths = _python(*PLUGINS_AND_SCRIPTS)
    assert any(p.endswith('_fleet_render.py') for p in paths) and any(p.endswith('gpuops-spot.py') for p in paths)
    assert [problem for p in paths for problem in private_import_problems(p)] == []


def test_each_name_is_read_from_its_own_module():
    paths = _python(*(PLUGINS_AND_SCRIPTS + ('tests/unit/**/*.py',)))
    assert any(p.endswith('test_kernels.py') for p in paths)
    assert [problem for p in paths for problem in reexport_problems(p)] == []


# Negative controls: each check fails on the shapes it exists to refuse.

def test_negative_control_a_long_file_and_stale_entries(tmp_path):
    # The eight kernel modules together are about the old _kernels.py: over the budget.
    kernels = ('_kernel_release', '_image_tree', '_boot_kernels', '_modinfo', '_initramfs', '_deb_control', '_dkms',
               '_kernel_plan')
    whole = ''.join(_read(os.path.join(MODULE_UTILS, name + '.py')) for name in kernels)
    assert whole.count('\n') > 900
    (tmp_path / '_kernels.py').write_text(whole)
    (tmp_path / '_small.py').write_text('x = 1\n' * 600)
    assert budget_problems(str(tmp_path), allowed={}) == [
        '_kernels.py has %d lines, over the budget of 600: split it by concern, or add it to OVER_BUDGET with the '
        'reason' % whole.count('\n')]
    assert budget_problems(str(tmp_path), allowed={'_kernels.py': 'a reason'}) == []
    stale = budget_problems(str(tmp_path), allowed={'_kernels.py': 'r', '_small.py': 'r', '_gone.py': 'r'})
    assert len(stale) == 2 and '_gone.py' in stale[0] and '_small.py' in stale[1] and '600 lines' in stale[1]


def test_negative_control_private_imports(tmp_path):
    path = str(tmp_path / '_fleet_render.py')
    # _fleet_render.py before round 3 took _fleet.py's private text helpers.
    assert len(private_import_problems(path, 'from %s._fleet import (\n    STATUSES, _clean, _join)\n' % PACKAGE)) == 2
    assert len(private_import_problems(path, 'from ._fleet import _clean\n')) == 1
    assert len(private_import_problems(path, 'from %s import _fleet\n_fleet._clean("x")\n' % PACKAGE)) == 1
    assert len(private_import_problems(path, 'from %s import _fleet as f\nf._clean("x")\n' % PACKAGE)) == 1
    # What stays allowed: public names, a module's own helpers, dunder attributes, other packages' private names.
    assert private_import_problems(path, 'from %s._fleet import clean_text, join_text\n' % PACKAGE) == []
    assert private_import_problems(path, 'from %s import _fleet\n_fleet.clean_text("x")\n_fleet.__file__\n'
                                   % PACKAGE) == []
    assert private_import_problems(path, 'def _own():\n    pass\n_own()\nimport os\nos._exit\n') == []


def test_negative_control_reexports(tmp_path):
    utils = tmp_path / 'module_utils'
    utils.mkdir()
    (utils / '_home.py').write_text('def upstream_version(v):\n    return v\nLIMIT = 3\nOK, FAIL = "ok", "fail"\n')
    (utils / '_hub.py').write_text('from %s._home import upstream_version  # noqa\n' % PACKAGE)
    path = str(tmp_path / 'caller.py')
    # A caller that still reaches a moved name through the module it used to live in.
    found = reexport_problems(path, str(utils), 'from %s import _hub\n_hub.upstream_version("1")\n' % PACKAGE)
    assert len(found) == 1 and '_hub.upstream_version, which _hub only imports' in found[0]
    assert reexport_problems(path, str(utils), 'from %s import _home\n_home.upstream_version("1")\n_home.LIMIT\n_home.OK\n'
                             % PACKAGE) == []
    # The real _compat.py imports cuda_min_driver from _compat_cuda: reading it through _compat is refused.
    found = reexport_problems(path, MODULE_UTILS, 'from %s import _compat\n_compat.cuda_min_driver("12.4")\n' % PACKAGE)
    assert len(found) == 1 and 'import it from the module that defines it' in found[0]
