# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every ``version_added`` agrees with galaxy.yml's version.

The collection's first release is 1.0.0 and nothing was released before it, so no option, module, filter or test
may say it was added before 1.0.0, nor in a version later than the one galaxy.yml builds. Read from the role
argument specs (options and their suboptions, at any depth), the modules' DOCUMENTATION and the filter and test
plugins' YAML documentation.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRST_RELEASE = (1, 0, 0)
_VERSION_RE = re.compile(r'\A(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z')


def parse_version(value):
    """``(major, minor, patch)`` of a plain X.Y.Z version; None for anything else (a float, 1.0, ' 1.0.0')."""
    if not isinstance(value, str):
        return None
    m = _VERSION_RE.match(value)
    return tuple(int(part) for part in m.groups()) if m else None


def version_added_values(node, where=''):
    """``(place, value)`` for every ``version_added`` key anywhere in a YAML document."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = '%s.%s' % (where, key) if where else str(key)
            if key == 'version_added':
                yield where or '(top)', value
            else:
                yield from version_added_values(value, here)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from version_added_values(value, '%s[%d]' % (where, i))


def wrong_versions(values, release):
    """The ``(place, value, why)`` of each version_added that is not a version from 1.0.0 up to ``release``."""
    top = parse_version(release)
    found = []
    for place, value in values:
        version = parse_version(value)
        if version is None:
            found.append((place, value, 'not an X.Y.Z version string'))
        elif version < FIRST_RELEASE:
            found.append((place, value, 'before the first release 1.0.0'))
        elif version > top:
            found.append((place, value, 'after galaxy.yml version %s' % release))
    return found


def _module_documentation(path):
    with open(path) as f:
        text = f.read()
    m = re.search(r'^DOCUMENTATION = r?(\'\'\'|""")(.*?)\1', text, re.M | re.S)
    assert m, '%s has no DOCUMENTATION' % path
    return yaml.safe_load(m.group(2))


def documents(root=ROOT):
    """``{path: parsed document}`` of every file that may carry version_added."""
    docs = {}
    for path in sorted(glob.glob(os.path.join(root, 'roles', '*', 'meta', 'argument_specs.yml'))
                       + glob.glob(os.path.join(root, 'plugins', 'filter', '*.yml'))
                       + glob.glob(os.path.join(root, 'plugins', 'test', '*.yml'))):
        with open(path) as f:
            docs[os.path.relpath(path, root)] = yaml.safe_load(f)
    for path in sorted(glob.glob(os.path.join(root, 'plugins', 'modules', '*.py'))):
        docs[os.path.relpath(path, root)] = _module_documentation(path)
    return docs


def galaxy_version(root=ROOT):
    with open(os.path.join(root, 'galaxy.yml')) as f:
        return yaml.safe_load(f)['version']


def test_galaxy_version_is_a_release_version():
    version = galaxy_version()
    assert parse_version(version) is not None and parse_version(version) >= FIRST_RELEASE, version


def test_every_version_added_is_within_the_releases():
    release = galaxy_version()
    docs = documents()
    counted = {path: list(version_added_values(doc)) for path, doc in docs.items()}
    # What is read: every role spec, module, filter and test; options at any depth (hardening's spec alone has
    # dozens); a module's own version_added at the top.
    assert len(counted['roles/hardening/meta/argument_specs.yml']) > 30
    assert ('(top)', counted['plugins/modules/gpu_facts.py'][0][1]) == counted['plugins/modules/gpu_facts.py'][0]
    assert sum(len(v) for v in counted.values()) > 300
    wrong = {path: wrong_versions(values, release) for path, values in counted.items()}
    assert {path: w for path, w in wrong.items() if w} == {}


def test_every_module_filter_and_test_says_when_it_was_added():
    missing = [path for path, doc in documents().items() if path.startswith('plugins/')
               and 'version_added' not in (doc.get('DOCUMENTATION', doc) or {})]
    assert missing == []


# ---------------------------------------------------------------------------------------------------------------
# Negative controls: the versions of before this release (0.1.0 to 0.3.0, never released) and a version ahead of
# galaxy.yml are each reported, as are values that are no X.Y.Z string.

def test_a_version_before_the_first_release_is_reported():
    spec = yaml.safe_load('argument_specs:\n  main:\n    options:\n'
                          '      a: {type: str, version_added: 0.3.0}\n'
                          '      b: {type: dict, version_added: 1.0.0, options: {c: {type: int, version_added: 0.2.0}}}\n')
    assert wrong_versions(version_added_values(spec), '1.0.0') == [
        ('argument_specs.main.options.a', '0.3.0', 'before the first release 1.0.0'),
        ('argument_specs.main.options.b.options.c', '0.2.0', 'before the first release 1.0.0')]


def test_a_version_after_galaxy_yml_is_reported():
    values = [('x', '1.0.0'), ('y', '1.1.0'), ('z', '2.0.0'), ('w', '1.0.1')]
    assert wrong_versions(values, '1.0.1') == [('y', '1.1.0', 'after galaxy.yml version 1.0.1'),
                                               ('z', '2.0.0', 'after galaxy.yml version 1.0.1')]
    # Compared as numbers, not as text: 1.10.0 is after 1.9.0.
    assert wrong_versions([('v', '1.9.0')], '1.10.0') == []
    assert wrong_versions([('v', '1.10.0')], '1.9.0') == [('v', '1.10.0', 'after galaxy.yml version 1.9.0')]


def test_a_value_that_is_no_version_is_reported():
    values = [('a', 1.0), ('b', '1.0'), ('c', ' 1.0.0'), ('d', None), ('e', '1.0.0\n'), ('f', '\u0661.0.0')]
    assert [place for place, _value, _why in wrong_versions(values, '1.0.0')] == ['a', 'b', 'c', 'd', 'e', 'f']
