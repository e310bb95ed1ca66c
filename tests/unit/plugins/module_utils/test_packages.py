# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import shutil
import subprocess

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils._packages import missing, parse_dpkg_status, satisfied

STATUS = """Package: logrotate
Status: install ok installed
Priority: important
Architecture: amd64
Version: 3.21.0-1
Description: Log rotation utility
 with a continuation line: Package: not-a-package

Package: rsyslog
Status: deinstall ok config-files
Architecture: amd64
Version: 8.2302.0-1

Package: nvidia-driver
Status: hold ok installed
Architecture: amd64
Version: 1:535.216.01-1~deb12u1

Package: libc6
Status: install ok installed
Architecture: i386
Version: 2.36-9

Package: tzdata
Status: install ok installed
Architecture: all
Version: 2024a-0+deb12u1

Package: half
Status: install reinstreq half-installed
Architecture: amd64
Version: 1.0
"""


@pytest.fixture
def installed():
    return parse_dpkg_status(STATUS)


def test_only_the_installed_state_counts(installed):
    # Held packages are installed; config-files (removed) and half-installed are not.
    assert sorted(installed) == ['libc6', 'logrotate', 'nvidia-driver', 'tzdata']
    assert installed['nvidia-driver'] == [{'version': '1:535.216.01-1~deb12u1', 'arch': 'amd64'}]


@pytest.mark.parametrize('spec, expected', [
    ('logrotate', True),
    ('logrotate=3.21.0-1', True),
    ('logrotate=3.21.0-2', False),                    # another version: apt installs (or downgrades to) this one
    ('logrotate:amd64', True),
    ('logrotate:arm64', False),
    ('nvidia-driver=1:535.216.01-1~deb12u1', True),   # the epoch is part of the version, as apt compares it
    ('nvidia-driver=535.216.01-1~deb12u1', False),
    ('nvidia-driver=1:535.*', False),                 # a wildcard: apt may move to a newer match, so apt decides
    ('rsyslog', False),                               # only its configuration files are left
    ('half', False),
    ('absent', False),
    ('libc6', False),                                 # only the foreign i386 package: apt installs the native one
    ('libc6:i386', True),
    ('tzdata', True),                                 # Architecture: all serves every architecture
    ('python3-*', False),                             # name wildcards, >= and paths: apt decides
    ('logrotate>=3.0', False),
    ('/tmp/x.deb', False),
    ('', False),
])
def test_satisfied_as_apt_state_present_decides(installed, spec, expected):
    assert satisfied(spec, installed, 'amd64') is expected


def test_missing_keeps_order_and_drops_repeats(installed):
    assert missing(['rsyslog', 'logrotate', 'absent', 'rsyslog', 'tzdata'], installed, 'amd64') == ['rsyslog', 'absent']
    assert missing([], installed) == []
    assert missing(['logrotate'], {}) == ['logrotate']


def test_package_facts_shape_is_read_the_same():
    facts = {'logrotate': [{'name': 'logrotate', 'version': '3.21.0-1', 'arch': 'amd64', 'source': 'apt'}],
             'libc6:i386': [{'name': 'libc6:i386', 'version': '2.36-9', 'arch': 'i386', 'source': 'apt'}]}
    assert missing(['logrotate', 'logrotate=3.21.0-1', 'libc6', 'bogus'], facts) == ['libc6', 'bogus']


@pytest.mark.skipif(not (shutil.which('dpkg-query') and os.path.exists('/var/lib/dpkg/status')), reason='needs dpkg')
def test_agrees_with_dpkg_query_on_this_host():
    """The parser against dpkg's own reading of this machine's status file (the negative control: every package that
    dpkg-query lists as not installed is missing)."""
    out = subprocess.run(['dpkg-query', '-W', '-f', '${Package}\t${Architecture}\t${Version}\t${db:Status-Status}\n'],
                         check=True, capture_output=True, text=True).stdout
    native = subprocess.run(['dpkg', '--print-architecture'], check=True, capture_output=True, text=True).stdout.strip()
    with open('/var/lib/dpkg/status') as f:
        installed = parse_dpkg_status(f.read())
    rows = [line.split('\t') for line in out.splitlines() if line.count('\t') == 3]
    assert rows
    for name, arch, version, state in rows:
        spec = '%s:%s=%s' % (name, arch, version)
        assert satisfied(spec, installed, native) is (state == 'installed'), spec
