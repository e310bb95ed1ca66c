# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""How an NVIDIA driver branch from NVIDIA's CUDA repository is installed and locked with apt (Debian, Ubuntu).

Two schemes, by branch:
- up to 580, the branch is in the package names (cuda-drivers-580, nvidia-fabricmanager-580): installing those
  names installs the branch, and dpkg holds (apt-mark hold) keep it;
- from 590 on, NVIDIA's Driver Installation Guide r590 (PDF "Release r590", Dec 15, 2025,
  https://docs.nvidia.com/datacenter/tesla/pdf/Driver_Installation_Guide.pdf), section 4.1 "Version locking packages
  for Ubuntu / Debian" and 4.1.1 "Ubuntu 590 and later packages" (HTML: https://docs.nvidia.com/datacenter/tesla/
  driver-installation-guide/recent-updates.html#version-locking-packages-for-ubuntu-debian): "Driver pinning packages
  have been introduced for Debian and Ubuntu to track specific driver branches and versions", "For the best experience
  when locking a branch, we suggest to install the pinning package prior to installing the driver.", "Starting with
  branch 590, the Ubuntu packages will be renamed by removing the branch designation from the package name", and in
  its Table 4 "cuda-drivers-580: will be removed". The branch's pinning package is nvidia-driver-pinning-<branch>: the
  guide's install steps "apt install nvidia-driver-pinning-<branch>" (read through a public copy of its Ubuntu page),
  NVIDIA's own code (github.com/NVIDIA/gpu-driver-container, ubuntu26.04/install.sh installs
  nvidia-driver-pinning-${DRIVER_VERSION}, its README: "the version-specific `nvidia-driver-pinning-<version>` package
  pins the whole driver tree") and a bare-metal image build (github.com/dsx-ai-factory/infra-controller/pull/6149:
  "Fully switch to using nvidia-driver-pinning-615 to lock the driver versions"). A nvidia-driver-pinning-<version>
  package (nvidia-driver-pinning-590.48.01) locks one exact version, which this collection does not use.

Pure functions behind the filters nvidia_apt_driver_plan and nvidia_apt_lock_problems: the nvidia_driver role
computes what to install, hold, release and remove before it changes anything, and proves afterwards that the
pinning package and the holds lock the same branch.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._deb_control import upstream_version

# The first branch packaged without the branch in its names and locked by a pinning package (guide r590, 4.1.1).
PINNING_FIRST_BRANCH = 590
PINNING_PREFIX = 'nvidia-driver-pinning-'
_BRANCH = re.compile(r'^[0-9]{3}$')
# A Debian version's upstream part and branch: 1:590.48.01-1 -> 590.
_VERSION_BRANCH = re.compile(r'^(?:[0-9]+:)?([0-9]+)\.')
# A branch pinning package (nvidia-driver-pinning-590), not a version one (nvidia-driver-pinning-590.48.01).
_BRANCH_PINNING = re.compile(r'^' + re.escape(PINNING_PREFIX) + r'([0-9]{3})$')
_ANY_PINNING = re.compile(r'^' + re.escape(PINNING_PREFIX) + r'[0-9]')
# Packages whose names match the driver's patterns (^nvidia-, ^libnvidia-) but are not the driver's: the NVIDIA
# Container Toolkit (nvidia_container_toolkit holds them itself). Their holds are never the driver's to release.
_NOT_DRIVER = re.compile(r'^(?:lib)?nvidia-container|^nvidia-docker')
# `apt-cache madison NAME...`: " cuda-drivers | 590.48.01-1 | http://127.0.0.1:8765  Packages".
_MADISON = re.compile(r'^\s*(\S+)\s*\|\s*(\S+)\s*\|')
# An exact driver version as NVIDIA numbers it: 580.178.04 (three fields on Linux), 535.54 on older branches.
_DRIVER_VERSION = re.compile(r'^([0-9]{3})\.[0-9]+(?:\.[0-9]+)?$')


def check_branch(branch):
    """The branch as a three-digit string; ValueError otherwise."""
    branch = str(branch)
    if not _BRANCH.match(branch):
        raise ValueError("expected a three-digit driver branch such as '590', got %r" % (branch,))
    return branch


def uses_pinning(branch):
    """Whether NVIDIA's repository ships this branch under branch-less names, locked by a pinning package."""
    return int(check_branch(branch)) >= PINNING_FIRST_BRANCH


def pinning_package(branch):
    """The package that locks apt onto a branch (from 590 on), or '' for the branches named in their packages."""
    return PINNING_PREFIX + check_branch(branch) if uses_pinning(branch) else ''


def _pinning(branch, pinning):
    """Whether the plan locks BRANCH with NVIDIA's pinning package: PINNING None decides by the branch (NVIDIA's
    repository), False never (Ubuntu's archive, whose 590-server and later packages keep the branch in their names and
    have no pinning package)."""
    return uses_pinning(branch) if pinning is None else bool(pinning) and uses_pinning(branch)


def version_branch(version):
    """The driver branch of a package version ('590.48.01-1' -> '590'), or '' when it has none."""
    m = _VERSION_BRANCH.match(str(version or ''))
    return m.group(1) if m else ''


def check_version(version, branch):
    """The exact driver version ('580.178.04'), '' for none; ValueError when it is malformed or of another branch."""
    version = str(version or '').strip()
    if not version:
        return ''
    m = _DRIVER_VERSION.match(version)
    if not m:
        raise ValueError("expected an exact driver version such as '580.178.04', got %r" % (version,))
    if m.group(1) != str(branch):
        raise ValueError('driver version %s is of branch %s, not of branch %s' % (version, m.group(1), branch))
    return version


def version_problem(version, branch, requested_branch, distribution, source):
    """Why the nvidia_driver role cannot pin VERSION (nvidia_driver_version), as the end of a sentence that begins with
    "nvidia_driver_version=VERSION"; '' when it can, or when VERSION is ''. BRANCH is the branch the role resolved,
    REQUESTED_BRANCH the nvidia_driver_branch given (auto or a branch), DISTRIBUTION and SOURCE the host's distribution
    (ansible_facts) and the driver's source (distribution or cuda_repo): an exact version is pinned in Ubuntu's archive
    only (its nvidia-graphics-drivers-<branch>-server source packages)."""
    version = str(version or '').strip()
    if not version:
        return ''
    m = _DRIVER_VERSION.match(version)
    if not m:
        return ("is not an exact driver version: give NVIDIA's three numbers, such as '580.178.04' (apt-cache madison "
                "nvidia-utils-580-server lists them), or '' for the newest of the branch.")
    if m.group(1) != str(branch):
        return ("is of branch %s, but nvidia_driver_branch=%s: set nvidia_driver_branch to '%s' or auto, or choose a "
                "version of branch %s." % (m.group(1), requested_branch, m.group(1), branch))
    if distribution != 'Ubuntu' or source != 'distribution':
        return ("applies to Ubuntu's archive (nvidia_driver_source=distribution on Ubuntu) only; here %s with "
                "nvidia_driver_source=%s: set nvidia_driver_version to '' and lock the branch with nvidia_driver_branch."
                % (distribution, source))
    return ''


def installed_versions(packages):
    """{name: version} from Ansible's package_facts (name -> list of {'version': ...}) or a plain {name: version}."""
    out = {}
    for name, value in (packages or {}).items():
        if isinstance(value, list):
            value = value[0].get('version', '') if value and isinstance(value[0], dict) else ''
        elif isinstance(value, dict):
            value = value.get('version', '')
        out[name] = str(value or '')
    return out


def madison_versions(text):
    """{name: [versions]} from the output of `apt-cache madison NAME...`."""
    out = {}
    for line in (text or '').splitlines():
        m = _MADISON.match(line)
        if m:
            out.setdefault(m.group(1), [])
            if m.group(2) not in out[m.group(1)]:
                out[m.group(1)].append(m.group(2))
    return out


# Ubuntu's prebuilt kernel modules (linux-restricted-modules): held with the driver, but versioned by the kernel
# (6.8.0-149.149), not by the driver: no <version>-* or <branch>.* spec, and no version check against the driver's.
_KERNEL_BUILD = re.compile(r'^linux-(?:modules|objects|signatures)-nvidia-')


def _versioned(name):
    return not _KERNEL_BUILD.match(name)


def _matches(name, patterns):
    return not _NOT_DRIVER.match(name) and any(re.search(p, name) for p in patterns)


def driver_plan(branch, packages, holdable=None, holds=None, installed=None, patterns=None, available=None, version='',
                pinning=None):
    """What the role does with apt for a driver branch, computed before any change.

    packages: the driver packages of the branch (the platform's names for its scheme), kernel module packages
    included (Ubuntu's prebuilt linux-modules-nvidia-* are versioned by their kernel: installed and held as they
    are); holdable: the further packages held with them (Fabric Manager); holds: `apt-mark showhold` lines;
    installed: package_facts' packages; patterns: regular expressions of the driver's package names; available:
    the text of `apt-cache madison` for the packages (None: not checked); version: an exact driver version
    ('580.178.04', '' for the newest of the branch); pinning: None for NVIDIA's repository (its pinning package from
    590 on), False for a source without one (Ubuntu's archive).

    Returns a dict: pinned (bool), pinning_package ('' before 590), install (apt specs: from 590 on each name with
    '=<branch>.*', so that apt installs that branch whatever the newest version is, and moves an installed package
    to it; with a version each name with '=<version>-*'), hold (every package to hold, the pinning package first),
    release (holds to release first: driver packages no longer wanted, and wanted ones whose installed version is
    on another branch, or not the version), remove (pinning packages of other branches), missing (packages the
    sources have no version of the branch of, or not the version) and offered (for each missing package, the
    upstream versions the sources have of it).
    """
    branch = check_branch(branch)
    version = check_version(version, branch)
    pinned = _pinning(branch, pinning)
    pin = pinning_package(branch) if pinned else ''
    packages = [str(p) for p in packages or []]
    holdable = [str(p) for p in holdable or []]
    patterns = list(patterns or []) + [re.escape(PINNING_PREFIX)]
    versions = installed_versions(installed)
    hold = ([pin] if pin else []) + [p for p in packages + holdable if p != pin]
    release = []
    for name in (h.strip() for h in holds or []):
        if not name or not _matches(name, patterns) or name in release:
            continue
        if name not in hold:
            release.append(name)
        elif not _versioned(name):
            continue
        elif pinned and name != pin and name in versions and version_branch(versions[name]) != branch:
            release.append(name)
        elif version and name != pin and name in versions and upstream_version(versions[name]) != version:
            release.append(name)
    remove = sorted(n for n in versions if _ANY_PINNING.match(n) and n != pin)
    missing, offered = [], {}
    if available is not None:
        offered = madison_versions(available)
        for name in ([pin] if pin else []) + packages:
            if name == pin:
                if name not in offered:
                    missing.append(name)
            elif not _versioned(name):
                continue
            elif version and not any(upstream_version(v) == version for v in offered.get(name, [])):
                missing.append(name)
            elif pinned and not any(version_branch(v) == branch for v in offered.get(name, [])):
                missing.append(name)
    return {
        'pinned': pinned,
        'pinning_package': pin,
        'install': ([p + '=' + version + '-*' if _versioned(p) else p for p in packages] if version
                    else [p + '=' + branch + '.*' if _versioned(p) else p for p in packages] if pinned else packages),
        'hold': hold,
        'release': release,
        'remove': remove,
        'missing': missing,
        'offered': dict((name, [upstream_version(v) for v in offered.get(name, [])]) for name in missing),
    }


def lock_problems(branch, installed=None, holds=None, held=None, patterns=None, pinning=None):
    """Where the pinning package and the dpkg holds do not lock the same branch, after the install.

    held: the packages that must be held (the plan's hold, [] when holds are off); holds: `apt-mark showhold` lines.
    Returns a list of sentences; [] when every package in held is held (from 590 on: at a version of the branch),
    the branch's pinning package (from 590 on) is installed, no other pinning package is, and no pinning package of
    another branch is held. Other holds (a user's, the NVIDIA Container Toolkit's) are not judged. pinning: as for
    driver_plan.
    """
    branch = check_branch(branch)
    pin = pinning_package(branch) if _pinning(branch, pinning) else ''
    versions = installed_versions(installed)
    holds = [h.strip() for h in holds or [] if h.strip()]
    patterns = list(patterns or []) + [re.escape(PINNING_PREFIX)]
    problems = []
    if pin and pin not in versions:
        problems.append('the pinning package %s is not installed' % pin)
    others = sorted(n for n in versions if _ANY_PINNING.match(n) and n != pin)
    if others:
        problems.append('pinning packages of another branch or version are installed: %s' % ', '.join(others))
    for name in held or []:
        if name not in holds:
            problems.append('%s is not held' % name)
    for name in holds:
        if not _matches(name, patterns) or name not in versions:
            continue
        if _ANY_PINNING.match(name):
            m = _BRANCH_PINNING.match(name)
            if not m or m.group(1) != branch:
                problems.append('%s is held, but the branch is %s' % (name, branch))
            continue
        # From 590 on the same names serve every branch: a package the role holds must be held on this branch.
        got = version_branch(versions[name])
        if pin and name in (held or []) and got != branch:
            problems.append('%s is held at %s, which is not branch %s' % (name, versions[name], branch))
    return problems
