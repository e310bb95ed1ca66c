# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every plugin's documentation is what antsibull-docs and ansible-doc read: the filters' and tests' .yml files and
the modules' DOCUMENTATION, EXAMPLES and RETURN strings must be YAML, and EXAMPLES YAML tasks that name the plugin. A
plain scalar holding ': ' (a Python dict in a Jinja expression, or a sentence) is not YAML; the docs build and
docs-lint only find it minutes into `make test`."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ast
import glob
import os

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

MODULES = sorted(glob.glob(os.path.join(ROOT, 'plugins', 'modules', '*.py')))
DOCS = sorted(glob.glob(os.path.join(ROOT, 'plugins', 'filter', '*.yml')) +
              glob.glob(os.path.join(ROOT, 'plugins', 'test', '*.yml')))


def example_problems(name, examples):
    """What is wrong with the EXAMPLES text of plugin NAME: [] when it is a YAML list of named tasks that uses it."""
    try:
        tasks = yaml.safe_load(examples)
    except yaml.YAMLError as e:
        return ['EXAMPLES is not YAML: %s' % str(e).splitlines()[0]]
    if not isinstance(tasks, list) or not all(isinstance(t, dict) and t.get('name') for t in tasks):
        return ['EXAMPLES is not a list of named tasks']
    if 'gpuops.gpu_server.%s' % name not in examples:
        return ['EXAMPLES does not use gpuops.gpu_server.%s' % name]
    return []


def test_every_filter_and_test_is_documented():
    assert len(DOCS) > 20


@pytest.mark.parametrize('path', DOCS, ids=[os.path.basename(p) for p in DOCS])
def test_examples_are_yaml_tasks_that_use_the_plugin(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    assert set(doc) == {'DOCUMENTATION', 'EXAMPLES', 'RETURN'}
    name = os.path.splitext(os.path.basename(path))[0]
    assert doc['DOCUMENTATION']['name'] == name
    assert example_problems(name, doc['EXAMPLES']) == []


def module_docs(path):
    """The DOCUMENTATION, EXAMPLES and RETURN strings of the module at PATH, read without importing it."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    return dict((node.targets[0].id, node.value.value) for node in tree.body
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in ('DOCUMENTATION', 'EXAMPLES', 'RETURN') and isinstance(node.value, ast.Constant))


@pytest.mark.parametrize('path', MODULES, ids=[os.path.basename(p) for p in MODULES])
def test_module_docs_are_yaml(path):
    docs = module_docs(path)
    assert set(docs) == {'DOCUMENTATION', 'EXAMPLES', 'RETURN'}
    name = os.path.splitext(os.path.basename(path))[0]
    assert yaml.safe_load(docs['DOCUMENTATION'])['module'] == name
    assert isinstance(yaml.safe_load(docs['RETURN']), dict)
    assert example_problems(name, docs['EXAMPLES']) == []


def test_negative_control_a_dict_in_a_plain_scalar_is_refused():
    broken = ("- name: Refuse an unsupported platform\n  ansible.builtin.assert:\n"
              "    that: ansible_facts | gpuops.gpu_server.platform_supported({'Debian': ['12']})\n")
    assert example_problems('platform_supported', broken)[0].startswith('EXAMPLES is not YAML')
    assert example_problems('platform_supported', broken.replace("that: ", "that: \"").rstrip() + "\"\n") == []
    assert example_problems('other', "- name: x\n  ansible.builtin.debug:\n") == [
        'EXAMPLES does not use gpuops.gpu_server.other']
