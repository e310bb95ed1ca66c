# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import platforms

FILTERS = platforms.FilterModule().filters()
SUPPORTED = FILTERS['platform_supported']
TEXT = FILTERS['platforms_text']

BASE = {'Debian': ['11', '12', '13'], 'Ubuntu': ['20', '22', '24', '26'], 'RedHat': ['8', '9'], 'Rocky': ['8', '9'],
        'AlmaLinux': ['8', '9'], 'CentOS': ['8', '9'], 'OracleLinux': ['8', '9']}
ROLES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'roles')


def facts(distribution, major, family='Debian'):
    return {'distribution': distribution, 'distribution_major_version': major, 'os_family': family}


def test_the_text_of_base_names_every_release_of_its_data():
    assert TEXT(BASE) == ('Debian 11/12/13, Ubuntu 20.04/22.04/24.04/26.04, '
                          'EL 8/9 (RHEL, Rocky, AlmaLinux, CentOS Stream, Oracle Linux)')


def test_the_text_follows_the_data_sorted_by_number():
    assert TEXT({'Ubuntu': ['26', '22'], 'Debian': ['13', '9']}) == 'Ubuntu 22.04/26.04, Debian 9/13'
    assert TEXT({'Debian': ['12'], 'RedHat': ['9'], 'Rocky': ['8', '9']}) == 'Debian 12, EL 9 (RHEL), EL 8/9 (Rocky)'
    assert TEXT({'Debian': []}) == 'Debian family (every release)'


@pytest.mark.parametrize('host,supported', [
    (facts('Debian', '13'), True), (facts('Debian', '10'), False), (facts('Ubuntu', '24'), True),
    (facts('Ubuntu', '18'), False), (facts('Rocky', '9', 'RedHat'), True), (facts('Rocky', '10', 'RedHat'), False),
    (facts('Fedora', '40', 'RedHat'), False), (facts('Linuxmint', '22'), False),
])
def test_a_host_is_supported_only_on_a_listed_major(host, supported):
    assert SUPPORTED(host, BASE) is supported


def test_an_empty_list_means_every_release_of_a_distribution_or_family():
    assert SUPPORTED(facts('Debian', '10'), {'Debian': []}) is True
    assert SUPPORTED(facts('Linuxmint', '22'), {'Debian': []}) is True
    assert SUPPORTED(facts('Rocky', '9', 'RedHat'), {'Debian': []}) is False


@pytest.mark.parametrize('data', [{}, [], 'Debian', {'Debian': '12'}, {'Debian': [12]}, {'Ubuntu': ['24.04']}])
def test_malformed_data_is_refused_with_a_message(data):
    with pytest.raises(AnsibleFilterError, match='platforms_text'):
        TEXT(data)
    with pytest.raises(AnsibleFilterError, match='platform_supported'):
        SUPPORTED(facts('Debian', '12'), data)


# Roles without platform data of their own, each for a reason: internal roles that run only inside a parent role, whose
# preflight checked the platform (common, pki, vendor_repo), and the operations that run on hosts the driver roles
# set up, through those roles (gpu_acceptance, upgrade_driver), or in a Python environment of their own (jupyter); and
# gpu_monitoring, the entry that includes gpu_monitoring_node and gpu_monitoring_server, whose preflights check it.
NO_PLATFORMS = {'common', 'pki', 'vendor_repo', 'gpu_acceptance', 'upgrade_driver', 'jupyter', 'gpu_monitoring'}


@pytest.mark.parametrize('path', sorted(glob.glob(os.path.join(ROLES, '*', 'vars', 'main.yml'))))
def test_every_role_data_renders(path):
    """Every role's _<role>_supported_platforms has the shape the common preflight reads; a role without it fails
    here unless NO_PLATFORMS names it (nvidia_driver and cuda_toolkit were skipped before issue 54)."""
    role = path.split(os.sep)[-3]
    data = yaml.safe_load(open(path)) or {}
    key = '_%s_supported_platforms' % role
    if role in NO_PLATFORMS:
        return
    assert key in data, '%s keeps no supported platforms (vars/main.yml %s)' % (role, key)
    assert TEXT(data[key])
    for distribution, majors in data[key].items():
        for major in majors or ['1']:
            assert SUPPORTED(facts(distribution, major), data[key])


def test_no_platforms_names_only_existing_roles():
    assert NO_PLATFORMS <= set(os.listdir(ROLES))


@pytest.mark.parametrize('role', ['nvidia_driver', 'cuda_toolkit'])
def test_the_driver_roles_declare_the_platforms_they_have_data_for(role):
    """Issue 54: the driver and toolkit declare Debian 11-13, Ubuntu 20.04-26.04 and EL 8/9, and a release
    they have no table for (Debian 10, Ubuntu 18, EL 10, Fedora) is refused by common's preflight."""
    data = yaml.safe_load(open(os.path.join(ROLES, role, 'vars', 'main.yml')))['_%s_supported_platforms' % role]
    assert data == BASE
    assert SUPPORTED(facts('Ubuntu', '24'), data) and SUPPORTED(facts('Rocky', '9', 'RedHat'), data)
    for refused in (facts('Debian', '10'), facts('Ubuntu', '18'), facts('RedHat', '10', 'RedHat'),
                    facts('Fedora', '41', 'RedHat')):
        assert not SUPPORTED(refused, data)
