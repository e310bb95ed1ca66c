# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every role's public defaults and its argument specs list the same variables, each documented."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import role_yaml

ROLES = sorted(r for r in os.listdir(os.path.join(ROOT, "roles")) if not r.startswith("_"))


@pytest.mark.parametrize("role", ROLES)
def test_defaults_and_specs_list_the_same_variables(role):
    defaults = set(role_yaml(role, "defaults", "main.yml"))
    specs = role_yaml(role, "meta", "argument_specs.yml")["argument_specs"]
    documented, required = set(), set()
    for entry in specs.values():
        documented |= set(entry.get("options", {}))
        required |= {name for name, spec in entry.get("options", {}).items() if spec.get("required")}
    assert defaults - documented == set(), "defaults of %s missing from argument_specs" % role
    assert documented - defaults - required == set(), "argument_specs of %s document variables without a default" % role


@pytest.mark.parametrize("role", ROLES)
def test_every_public_variable_is_prefixed_and_described(role):
    specs = role_yaml(role, "meta", "argument_specs.yml")["argument_specs"]
    for entry_name, entry in specs.items():
        assert entry.get("short_description"), (role, entry_name)
        for name, spec in entry.get("options", {}).items():
            assert name.startswith(role + "_"), "%s: %s is not prefixed with the role name" % (role, name)
            assert spec.get("description"), "%s: %s has no description" % (role, name)
            assert spec.get("type"), "%s: %s has no type" % (role, name)


@pytest.mark.parametrize("role", ROLES)
def test_every_public_variable_is_in_the_role_readme(role):
    with open(os.path.join(ROOT, "roles", role, "README.md")) as f:
        readme = f.read()
    missing = sorted(name for name in role_yaml(role, "defaults", "main.yml") if name not in readme)
    assert not missing, "%s/README.md does not mention %s" % (role, ", ".join(missing))
