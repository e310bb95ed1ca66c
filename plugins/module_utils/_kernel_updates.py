# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The kernel updates the archive has for a host's installed kernel flavours, from dpkg-query and ``apt-get -s``.

Pure functions, used by the module kernel_updates (and so by playbooks/upgrade_driver.yml with
gpuops_upgrade_kernel). A kernel metapackage is an installed package named after a flavour (linux-image-generic,
Ubuntu Core's linux-image-uc-generic, linux-image-cloud-amd64, linux-headers-cloud-amd64,
linux-modules-nvidia-580-server-aws) whose Depends name a per-release package (linux-image-6.8.0-149-generic,
linux-headers-6.1.0-50-cloud-amd64, linux-modules-nvidia-580-server-6.8.0-149-generic). Upgrading those metapackages
is what brings a new kernel.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._kernel_release import kernel_flavour, newest_first

# dpkg-query -W -f with this format (dpkg-query itself reads the \t and \n escapes) gives one line per package:
# name, status abbreviation (ii, hi, rc ...), version, Depends.
DPKG_QUERY_FORMAT = '${Package}\\t${db:Status-Abbrev}\\t${Version}\\t${Depends}\\n'
# apt-get -s of a kernel upgrade prints a few hundred lines; anything past this is not apt's answer.
MAX_TEXT_CHARS = 16 * 1024 * 1024
# The unmet-dependency lines apt prints are few; a refusal message keeps at most this many.
MAX_UNMET_LINES = 20

_PACKAGE = re.compile(r'^[a-z0-9][a-z0-9+.-]{0,199}\Z')
# The three families of per-release packages a kernel metapackage depends on, and the metapackages' own names.
_NVIDIA_MODULES = r'linux-modules-nvidia-([0-9]+)-server(?:-open)?-'
# Debian's unsigned image is linux-image-<release>-unsigned, Ubuntu's linux-image-unsigned-<release>; Ubuntu Core's
# is linux-image-uc-<release> ("Signed kernel image generic for Ubuntu Core", the dependency of the flavour
# metapackages linux-image-uc-generic, linux-image-uc-generic-hwe-24.04 ...: packages.ubuntu.com, noble,
# linux-image-uc-generic 6.8.0-137.137 depends on linux-image-uc-6.8.0-137-generic).
_PER_RELEASE = (
    re.compile(r'^linux-image-(?:unsigned-|uc-)?(.+?)(?:-unsigned)?\Z'),
    re.compile(r'^linux-headers-(.+)\Z'),
    re.compile(r'^' + _NVIDIA_MODULES + r'(.+)\Z'),
)
_META_NAME = re.compile(r'^(?:linux-image-|linux-headers-|' + _NVIDIA_MODULES + r')([a-z][a-z0-9.+-]*)\Z')
_IMAGE = _PER_RELEASE[0]
# Release-shaped suffixes that are no kernel: linux-headers-6.1.0-50-common, linux-image-6.1.0-50-amd64-dbg.
_NOT_A_KERNEL = re.compile(r'-(?:common|common-rt|dbg)\Z')
# "Inst linux-image-cloud-amd64 [6.1.176-1] (6.1.192-3 Debian-Security:12/oldstable-security [amd64])"
_INST = re.compile(r'^Inst (\S+)(?: \[([^\]]+)\])? \((\S+)(?: ([^\[)]*?))?(?: \[[^\]]*\])?\)')
_UNMET_START = 'The following packages have unmet dependencies:'


def _text(value):
    if isinstance(value, bytes):
        value = value.decode('utf-8', errors='replace')
    if not isinstance(value, str):
        return ''
    return value[:MAX_TEXT_CHARS]


def release_of(name):
    """The kernel release a per-release package is for (linux-image-6.1.0-50-cloud-amd64 -> 6.1.0-50-cloud-amd64,
    linux-image-unsigned-6.8.0-149-generic, Ubuntu Core's linux-image-uc-6.8.0-137-generic, linux-headers-...,
    linux-modules-nvidia-580-server-open-6.8.0-149-generic); '' for a package that is not one (a metapackage,
    linux-headers-6.1.0-50-common, anything else)."""
    for pattern in _PER_RELEASE:
        m = pattern.match(name or '')
        if m:
            release = m.group(m.lastindex)
            if kernel_flavour(release) and not _NOT_A_KERNEL.search(release):
                return release
    return ''


def image_release(name):
    """The release of a kernel image package (linux-image-<release>, linux-image-unsigned-<release> or Ubuntu Core's
    linux-image-uc-<release>), else ''."""
    return release_of(name) if _IMAGE.match(name or '') else ''


def dep_names(depends):
    """The package names in a Depends field, alternatives included, without versions or architectures."""
    names = []
    for clause in (depends or '').split(','):
        for alternative in clause.split('|'):
            word = alternative.strip().split(' ', 1)[0].split('(', 1)[0].split(':', 1)[0]
            if word and word not in names:
                names.append(word)
    return names


def parse_dpkg_query(text):
    """The installed packages in the output of ``dpkg-query -W -f DPKG_QUERY_FORMAT``: ``{name: {version, held,
    depends}}``. A package is installed when its status abbreviation's second letter is ``i`` (``ii``, ``hi``);
    ``held`` when the first is ``h``. Lines that do not have the four fields or a package name are skipped."""
    packages = {}
    for line in _text(text).splitlines():
        parts = line.split('\t')
        if len(parts) != 4:
            continue
        name, status, version, depends = parts[0].strip(), parts[1], parts[2].strip(), parts[3]
        if not _PACKAGE.match(name) or len(status) < 2 or status[1] != 'i':
            continue
        packages[name] = {'version': version, 'held': status[0] == 'h', 'depends': dep_names(depends)}
    return packages


def kernel_metapackages(packages):
    """The installed kernel metapackages, sorted: packages named ``linux-image-<flavour>``, ``linux-headers-<flavour>``
    or ``linux-modules-nvidia-<branch>-server[-open]-<flavour>`` (not a per-release package themselves) whose Depends
    name a per-release ``linux-image-``, ``linux-headers-`` or ``linux-modules-nvidia-`` package."""
    metas = []
    for name, info in packages.items():
        if release_of(name) or not _META_NAME.match(name):
            continue
        if any(release_of(dep) for dep in info['depends']):
            metas.append(name)
    return sorted(metas)


def installed_kernels(packages):
    """The releases of the installed kernel images, newest first."""
    return newest_first(set(r for r in (image_release(n) for n in packages) if r))


def parse_simulation(text):
    """The ``Inst`` lines of ``apt-get -s`` output: ``[{name, from, to}]`` in apt's order, ``from`` null for a
    package that is not installed yet."""
    found = []
    for line in _text(text).splitlines():
        m = _INST.match(line)
        if m:
            found.append({'name': m.group(1), 'from': m.group(2), 'to': m.group(3)})
    return found


def new_kernels(installs):
    """The kernel releases whose image the simulated upgrade installs (``parse_simulation``'s list), newest first."""
    return newest_first(set(r for r in (image_release(i['name']) for i in installs) if r))


def inplace_kernels(installs):
    """The releases whose installed image the upgrade replaces with a new build of the same release (Debian keeps
    the ABI, and so the release, across some updates): the release alone cannot tell that such a kernel is running."""
    return newest_first(set(r for r in (image_release(i['name']) for i in installs if i['from']) if r))


def nvidia_module_branches(installs):
    """``{package: branch}`` for the per-release Canonical NVIDIA module packages the upgrade installs
    (linux-modules-nvidia-580-server-7.0.0-1018-aws: 580)."""
    found = {}
    for item in installs:
        m = re.match(r'^' + _NVIDIA_MODULES, item['name'])
        if m and release_of(item['name']):
            found[item['name']] = m.group(1)
    return found


def unmet_dependencies(text):
    """The lines under apt's "The following packages have unmet dependencies:" (stripped, at most 20), and the
    ``E:`` lines; [] when apt printed neither."""
    lines, inside = [], False
    for line in _text(text).splitlines():
        if line.strip() == _UNMET_START:
            inside = True
            continue
        if line.startswith('E: '):
            lines.append(line.strip())
            inside = False
        elif inside and line.startswith(' ') and line.strip():
            lines.append(line.strip())
        elif inside:
            inside = False
    return lines[:MAX_UNMET_LINES]


def refusal(rc, text):
    """Why apt refuses the simulated upgrade, or None when it does not (rc 0).

    ``{message, unmet, nvidia}``: ``unmet`` the lines of ``unmet_dependencies`` (or the last lines apt printed when it
    printed no such block), ``nvidia`` whether they name an NVIDIA package (the new kernel's prebuilt module needs a
    driver other than the held one)."""
    if rc == 0:
        return None
    unmet = unmet_dependencies(text)
    if not unmet:
        unmet = [line.strip() for line in _text(text).splitlines() if line.strip()][-5:]
    nvidia = any(re.search(r'\b(?:linux-modules-nvidia-|linux-objects-nvidia-|nvidia-)', line) for line in unmet)
    return {'message': '; '.join(unmet) or 'apt-get exited with %s' % rc, 'unmet': unmet, 'nvidia': nvidia}


def summarize(packages, metapackages, running, simulation_rc=None, simulation_text=None):
    """Everything the upgrade play needs from one host: the metapackages simulated, what their upgrade installs,
    the new kernels, the running and newest installed kernels, the newest one after the upgrade, the Canonical NVIDIA
    module branches it would install, and apt's refusal (None when it agreed or nothing was simulated)."""
    installs = parse_simulation(simulation_text) if simulation_text is not None else []
    refused = refusal(simulation_rc, simulation_text) if simulation_rc is not None else None
    if refused:
        installs = []
    kernels = installed_kernels(packages)
    new = new_kernels(installs)
    after = newest_first(set(kernels) | set(new))
    return {
        'metapackages': list(metapackages),
        'upgrades': [i for i in installs if i['name'] in metapackages],
        'installs': installs,
        'new_kernels': new,
        'inplace_kernels': inplace_kernels(installs),
        'installed_kernels': kernels,
        'running': running,
        'newest_installed': kernels[0] if kernels else None,
        'newest_after': after[0] if after else None,
        'nvidia_module_branches': nvidia_module_branches(installs),
        'refusal': refused,
    }
