# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""What dpkg and apt print about kernel and NVIDIA module packages: package names (``apt-cache pkgnames``),
the installed linux-image metapackages and their kernels, control paragraphs (``dpkg-query -s``, ``apt-cache
show``), ``apt-cache madison`` versions, installed versions, and the driver version a prebuilt module was built
from. Pure functions on the commands' text; never raise.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._image_tree import as_text
from ansible_collections.gpuops.gpu_server.plugins.module_utils._kernel_release import is_release, kernel_flavour


PACKAGE_NAME = re.compile(r'^[a-z0-9][a-z0-9+.-]{0,199}\Z')


def package_names(text):
    """The package names in ``apt-cache pkgnames`` output, as a set. Without ``--all-names`` apt-cache lists the
    packages that have a version in the cache, not names that are only provided; a line that is no package name
    is skipped."""
    text = as_text(text) or ''
    return set(line.strip() for line in text.splitlines() if PACKAGE_NAME.match(line.strip()))


def _dep_names(depends):
    names = set()
    for clause in depends.split(','):
        for alternative in clause.split('|'):
            word = alternative.strip().split(' ', 1)[0].split('(', 1)[0].split(':', 1)[0]
            if word:
                names.add(word)
    return names


def _is_per_release_image(name):
    # linux-image-6.8.0-149-generic, linux-image-unsigned-6.8.0-149-generic, linux-image-uc-...: one kernel each.
    return bool(re.match(r'^linux-image-(?:unsigned-|uc-)?[0-9]', name))


def image_metapackages(text, releases):
    """``{release: metapackage}`` for the installed linux-image metapackages in the output of
    ``dpkg-query -W -f '${Package}\\t${Status}\\t${Depends}\\n' 'linux-image-*'``.

    A metapackage is a ``linux-image-<flavour>`` package (linux-image-generic, linux-image-aws,
    linux-image-generic-hwe-24.04, Ubuntu Core's linux-image-uc-generic, Debian's linux-image-cloud-amd64) whose
    Depends name ``linux-image-<release>`` (or ``linux-image-unsigned-<release>``, ``linux-image-uc-<release>``); the
    per-release packages themselves are not metapackages. When several depend on the same kernel (linux-image-virtual
    and linux-image-generic both name a -generic kernel) the one named after the kernel's own flavour wins, else the
    first by name.
    """
    text = as_text(text) or ''
    wanted = set(r for r in releases if is_release(r))
    candidates = {}
    for line in text.splitlines():
        parts = line.split('\t')
        if len(parts) < 3:
            continue
        name, status, depends = parts[0].strip(), parts[1].split(), parts[2]
        if not name.startswith('linux-image-') or not PACKAGE_NAME.match(name) or _is_per_release_image(name):
            continue
        if len(status) != 3 or status[2] != 'installed':
            continue
        deps = _dep_names(depends)
        for release in wanted:
            if deps & set(prefix + release for prefix in ('linux-image-', 'linux-image-unsigned-', 'linux-image-uc-')):
                candidates.setdefault(release, set()).add(name)
    chosen = {}
    for release, names in candidates.items():
        own = 'linux-image-' + kernel_flavour(release)
        chosen[release] = own if own in names else sorted(names)[0]
    return chosen


def upstream_version(version):
    """The upstream part of a Debian version: '1:580.196.07-0ubuntu0.24.04.1' -> '580.196.07'; '' for no version."""
    version = (as_text(version) or '').strip()
    if ':' in version:
        version = version.split(':', 1)[1]
    return version.rsplit('-', 1)[0] if '-' in version else version


def parse_control(text):
    """``{package: {'Version', 'Depends', 'Status'}}`` from ``apt-cache show`` or ``dpkg-query -s`` output (one
    paragraph per package version; the first paragraph of a package wins: ``--no-all-versions`` prints the
    candidate only)."""
    found = {}
    for paragraph in re.split(r'\n[ \t]*\n', (as_text(text) or '').replace('\r\n', '\n')):
        fields, key = {}, None
        for line in paragraph.split('\n'):
            if line[:1] in (' ', '\t') and key:
                fields[key] += ' ' + line.strip()
                continue
            name, sep, value = line.partition(':')
            key = name.strip() if sep else None
            if key:
                fields[key] = value.strip()
        name = fields.get('Package', '')
        if PACKAGE_NAME.match(name) and name not in found:
            found[name] = {'Version': fields.get('Version', ''), 'Depends': fields.get('Depends', ''),
                           'Status': fields.get('Status', '')}
    return found


def driver_versions(installed, candidates, common, prebuilt, branch):
    """The driver version the host has (or apt would install) and the version each prebuilt package was built from.

    INSTALLED and CANDIDATES: ``parse_control`` of ``dpkg-query -s`` and ``apt-cache show --no-all-versions`` of the
    kernel-common package COMMON and the PREBUILT packages. An installed package counts as it is (the role holds the
    driver, so apt keeps that version), else apt's candidate. Returns ``(driver_version, {prebuilt: built_with})``."""
    def pick(name):
        entry = installed.get(name) or {}
        if (entry.get('Status') or '').split()[-1:] == ['installed']:
            return entry
        return candidates.get(name) or {}
    return (pick(common).get('Version', ''),
            dict((name, built_with(pick(name).get('Depends', ''), branch)) for name in prebuilt))


def built_with(depends, branch):
    """The driver version a linux-modules-nvidia-<branch>-server[-open]-<kernel> package was built from: the lower
    bound of its nvidia-kernel-common-<branch>-server dependency (noble-updates, 2026-12-04: the 6.8.0-149.149
    package of 6.8.0-149-generic has ``nvidia-kernel-common-580-server (>= 580.178.04)`` and its objects in
    build/nvidia-srv/580.178.04, while the 6.8.0-149.149.1+1 rebuild of -lowlatency has ``(>= 580.196.07)``; the
    -open packages add an upper bound ``(<= 580.178.04-1)``). '' when DEPENDS has no such bound."""
    m = re.search(r'(?:^|,)\s*nvidia-kernel-common-%s(?:-server)?\s*\(>=\s*([A-Za-z0-9.+~:-]+)\)' % re.escape(
        str(branch)), as_text(depends) or '')
    return m.group(1) if m else ''


# A package and its version in ``apt-cache madison`` output: " pkg | 6.8.0-149.149.1 | http://... Packages".
_MADISON = re.compile(r'^\s*([a-z0-9][a-z0-9+.-]*)\s*\|\s*([A-Za-z0-9.+~:-]+)\s*\|')


def parse_madison(text):
    """``{package: [version, ...]}`` in the order apt-cache madison prints them (newest first per source)."""
    found = {}
    for line in (as_text(text) or '').splitlines():
        m = _MADISON.match(line)
        if m and PACKAGE_NAME.match(m.group(1)):
            versions = found.setdefault(m.group(1), [])
            if m.group(2) not in versions:
                versions.append(m.group(2))
    return found


def installed_versions(text):
    """``{package: version}`` of the installed packages in ``dpkg-query -W -f '${Package}\t${Status}\t${Version}\n'``
    output."""
    found = {}
    for line in (as_text(text) or '').splitlines():
        parts = line.split('\t')
        if len(parts) < 3:
            continue
        name, status, version = parts[0].strip(), parts[1].split(), parts[2].strip()
        if PACKAGE_NAME.match(name) and len(status) == 3 and status[2] == 'installed' and version:
            found[name] = version
    return found
