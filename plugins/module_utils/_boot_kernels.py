# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The kernels a tree can boot (``boot/vmlinuz-<release>`` with its ``lib/modules/<release>``), their headers,
and the modules each lists in modules.dep and modules.builtin. Reads are bounded and stay inside the tree.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._image_tree import as_text, join_in_root, read_bounded, resolve_in_root
from ansible_collections.gpuops.gpu_server.plugins.module_utils._kernel_release import is_release, newest_first


# modules.dep of a 6.8 generic kernel is about 1 MiB; modules.builtin far less.
MAX_MODULES_LIST_BYTES = 32 * 1024 * 1024


def modules_dir(root, release):
    """``<root>/lib/modules/<release>`` (or ``<root>/usr/lib/modules/<release>`` on a tree without /lib) when it is a
    directory, else None."""
    if not is_release(release):
        return None
    for base in ('lib/modules', 'usr/lib/modules'):
        path = resolve_in_root(root, join_in_root(root, os.path.join(base, release)))
        if os.path.isdir(path):
            return path
    return None


def bootable_kernels(root='/'):
    """The kernels the tree at ``root`` can boot, newest first: every ``<root>/boot/vmlinuz-<release>`` (a file)
    whose ``<root>/lib/modules/<release>`` directory exists.

    In a container the running kernel is the Docker host's: it has no /lib/modules directory there and is not
    listed. Names with blanks, control or non-ASCII characters are not kernels. Never raises; an unreadable /boot
    gives []. Raises PathRefused for a path whose links loop (resolve_in_root).
    """
    boot = resolve_in_root(root, join_in_root(root, 'boot'))
    try:
        names = os.listdir(boot)
    except OSError:
        return []
    releases = []
    for name in names:
        if not name.startswith('vmlinuz-'):
            continue
        release = name[len('vmlinuz-'):]
        if not is_release(release):
            continue
        if os.path.isfile(resolve_in_root(root, os.path.join(boot, name))) and modules_dir(root, release):
            releases.append(release)
    return newest_first(releases)


def headers_installed(root, release):
    """Whether ``<root>/lib/modules/<release>/build`` exists: what DKMS builds against."""
    mdir = modules_dir(root, release)
    return bool(mdir) and os.path.isdir(resolve_in_root(root, os.path.join(mdir, 'build')))


def _module_key(name):
    # The kernel takes '-' and '_' in module names as the same character.
    return name.replace('-', '_')


def listed_modules(text):
    """The module names (``_`` for ``-``) listed in a ``modules.dep`` or ``modules.builtin`` text: the file name of
    the first field, without ``.ko`` and a compression suffix (``.xz``, ``.zst``, ``.gz``)."""
    text = as_text(text) or ''
    names = set()
    for line in text.splitlines():
        path = line.split(':', 1)[0].strip()
        base = path.rsplit('/', 1)[-1]
        m = re.match(r'^([A-Za-z0-9_-]+)\.ko(?:\.(?:xz|zst|gz))?\Z', base)
        if m:
            names.add(_module_key(m.group(1)))
    return names


def module_listed(root, release, name):
    """Whether kernel ``release`` has module ``name`` (built as a file or built in), from its ``modules.dep`` and
    ``modules.builtin``: True, False, or None when neither file could be read (the caller then asks modinfo).

    nova_core, the upstream driver for GSP-based NVIDIA GPUs, is in kernels from 6.15 on (Ubuntu 26.04's 7.0
    kernels, noble's 7.0 HWE and cloud kernels); a 6.8 kernel answers False.
    """
    mdir = modules_dir(root, release)
    if not mdir:
        return None
    names, read_any = set(), False
    for listing in ('modules.dep', 'modules.builtin'):
        data, _reason = read_bounded(os.path.join(mdir, listing), MAX_MODULES_LIST_BYTES)
        if data is not None:
            read_any = True
            names |= listed_modules(data)
    if not read_any:
        return None
    return _module_key(name) in names
