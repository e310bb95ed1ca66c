# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Kernel releases (``uname -r``): which text is one, its flavour, and their order (newest first).

The one comparison of kernel releases in the collection (nvidia_kernels, kernel_updates). Pure functions.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re


# The kernel's utsname release holds 64 characters; a longer "release" is not one.
MAX_RELEASE_CHARS = 64
# A flavour: lower-case words joined by '-', at least one letter (generic, azure-fde, cloud-amd64, 686-pae).
_FLAVOUR = r'(?=[a-z0-9-]*[a-z])[a-z0-9]+(?:-[a-z0-9]+)*'
# Ubuntu 6.8.0-149-generic, 7.0.0-1018-aws; Debian 12 6.1.0-50-amd64, 6.1.0-50-cloud-amd64 (same shape).
_RELEASE_ABI = re.compile(r'^[0-9]+\.[0-9]+\.[0-9]+-[0-9]+-(' + _FLAVOUR + r')\Z')
# Debian 13 6.12.57+deb13-amd64, 6.12.57+deb13-cloud-amd64; backports 6.12.12+bpo-amd64.
_RELEASE_DEB = re.compile(r'^[0-9]+\.[0-9]+(?:\.[0-9]+)?\+(?:deb[0-9]+|bpo)-(' + _FLAVOUR + r')\Z')
# A release as a file name: printable ASCII without blank or '/', starting with a letter or digit (not '..').
_RELEASE_NAME = re.compile(r'^[A-Za-z0-9][\x21-\x2e\x30-\x7e]{0,%d}\Z' % (MAX_RELEASE_CHARS - 1))


def is_release(release):
    """Whether RELEASE can be a kernel release (and so a file name under boot/ and lib/modules/)."""
    return isinstance(release, str) and bool(_RELEASE_NAME.match(release))


def kernel_flavour(release):
    """The flavour a kernel release ends with: ``generic`` (6.8.0-149-generic), ``aws``, ``azure-fde``,
    ``nvidia-lowlatency``, ``amd64`` (6.1.0-50-amd64, 6.12.57+deb13-amd64), ``cloud-amd64``; '' for anything else.

    This is the release's own suffix. The flavour of the linux-image metapackage that installed it can differ
    (a 6.11 -generic kernel comes with linux-image-generic-hwe-24.04); the plan takes that one from the metapackage.
    """
    if not is_release(release):
        return ''
    for pattern in (_RELEASE_ABI, _RELEASE_DEB):
        m = pattern.match(release)
        if m:
            return m.group(1)
    return ''


# An upstream pre-release in a kernel release: 6.9.0-rc3 (uname -r of an upstream rc), 6.9.0-rc3-amd64 (an rc
# built with a distribution's flavour), 6.9.0-060900rc3-generic (Ubuntu's mainline builds), or Debian's 6.9~rc3
# spelling of the same in a package version.
_PRE_RELEASE = re.compile(r'(?:(?<=[0-9])|[-.~_])rc(?=[0-9])')


def _order_key(text):
    """dpkg's version ordering (deb-version(7): "Sorting algorithm") as a sort key: alternating non-digit and digit
    parts; non-digit parts compared character by character, letters before other characters, ``~`` before anything,
    even the end; digit parts compared as numbers. The key ends with the pair of an empty remainder, so that
    ``6.9.0`` sorts above ``6.9.0~rc3`` and below ``6.9.0-1``."""
    key = []
    for letters, digits in re.findall(r'([^0-9]*)([0-9]*)', text):
        if not letters and not digits:
            continue
        order = tuple(-1 if c == '~' else ord(c) if c.isalpha() else ord(c) + 256 for c in letters) + (0,)
        key.append((order, int(digits) if digits else 0))
    key.append(((0,), 0))
    return tuple(key)


def release_sort_key(release):
    """A sort key for kernel releases, numbers compared as numbers: ``sorted(releases, key=release_sort_key,
    reverse=True)`` puts the newest first (7.0.0-1018-aws before 6.8.0-1052-aws, 6.8.0-149 before 6.8.0-31).

    An upstream release candidate sorts below its release: ``6.9.0-rc1`` < ``6.9.0-rc2`` < ``6.9.0``, and
    ``6.9.0-rc3-amd64`` < ``6.9.0-1-amd64`` (an rc and a release build of one flavour), ``6.9.0-060900rc3-generic``
    < ``6.9.0-060900-generic`` (Ubuntu's mainline builds). The ``-rc`` marker is read as Debian's ``~rc`` (Debian
    versions an upstream rc as ``6.9~rc3``: Debian Policy 5.6.12, a ``~`` sorts before anything, even the end of a
    part), then the text is ordered as dpkg orders versions. This is the one comparison of kernel releases in the
    collection (nvidia_kernels, kernel_updates).

    Never raises; a value that is not a release (one that does not start with a digit) sorts by its text, before
    every release.
    """
    if not is_release(release) or not release[0].isdigit():
        return (0, str(release))
    # Digit runs are at most 64 characters long here, far from Python's limit on converting long digit strings.
    return (1,) + _order_key(_PRE_RELEASE.sub('~rc', release))


def newest_first(releases):
    return sorted(releases, key=release_sort_key, reverse=True)
