# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The execution environment's two definitions, read as ansible-builder reads them.

meta/execution-environment.yml is what ansible-builder's introspection reads from this collection inside any EE (paths
relative to the collection's root); ee/execution-environment.yml is the EE `make ee` builds (paths relative to ee/).
Both are checked against ansible-builder's own version 3 schema, and what they name must exist: a missing requirements
file is only a warning in a build (introspect.py prints it and goes on), so the EE would silently lack it.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

import pytest
import yaml

ee_schema = pytest.importorskip('ansible_builder.ee_schema')
DefinitionError = pytest.importorskip('ansible_builder.exceptions').DefinitionError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return yaml.safe_load(f)


def requirement_names(path):
    """The distribution names of a pip requirements file (comments, blanks and markers left out), lower-cased."""
    names = []
    with open(os.path.join(ROOT, path)) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                names.append(re.match(r'[A-Za-z0-9._-]+', line).group(0).lower())
    return names


def test_collection_meta_is_version_3_and_valid():
    meta = load('meta/execution-environment.yml')
    assert meta['version'] == 3
    ee_schema.validate_schema(meta)


@pytest.mark.parametrize('kind', ['python', 'system'])
def test_collection_meta_files_exist_relative_to_the_collection_root(kind):
    path = load('meta/execution-environment.yml')['dependencies'][kind]
    assert not os.path.isabs(path)
    assert os.path.isfile(os.path.join(ROOT, path)), path


def test_no_docker_sdk_on_the_controller():
    """Nothing of the collection needs the Docker SDK in the EE: community.docker's modules run on managed hosts."""
    assert 'docker' not in requirement_names('meta/ee-requirements.txt')


def test_controller_side_needs_are_declared():
    """pki's community.crypto modules run delegated to localhost (the EE), and need cryptography there."""
    delegated = []
    for dirpath, _dirs, files in os.walk(os.path.join(ROOT, 'roles')):
        for name in files:
            if name.endswith('.yml') and os.sep + 'tasks' in dirpath:
                with open(os.path.join(dirpath, name)) as f:
                    text = f.read()
                if 'community.crypto.' in text and 'delegate_to: localhost' in text:
                    delegated.append(os.path.relpath(os.path.join(dirpath, name), ROOT))
    assert delegated, 'no community.crypto task delegated to localhost: update this test and meta/ee-requirements.txt'
    assert 'cryptography' in requirement_names('meta/ee-requirements.txt')


def test_build_definition_is_valid_and_its_files_exist():
    definition = load('ee/execution-environment.yml')
    assert definition['version'] == 3
    ee_schema.validate_schema(definition)
    here = os.path.join(ROOT, 'ee')
    for entry in definition['additional_build_files']:
        src = entry['src']
        # build/ee/ is staged by scripts/ee.sh; the rest is in the repository.
        if not src.startswith('../build/'):
            assert os.path.exists(os.path.join(here, src)), src
    # The collection's own needs come through introspection, not a copy in the build definition.
    assert 'system' not in definition['dependencies']
    assert definition['images']['base_image']['name'] == 'local/debian12:latest'
    assert definition['options']['package_manager_path'] == '/usr/bin/apt-get'


def test_schema_check_can_fail():
    """Negative control: ansible-builder's schema refuses what it should (a version 1 key under version 3)."""
    with pytest.raises(DefinitionError):
        ee_schema.validate_schema({'version': 3, 'build_arg_defaults': {'EE_BASE_IMAGE': 'x'}, 'dependencies': {'python': 1}})
