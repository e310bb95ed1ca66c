# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Whether an extracted initramfs carries the current copy of a modprobe.d file (the nouveau/nova_core
blacklist): the copies unmkinitramfs put anywhere in the tree, compared byte for byte with the file on disk.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import stat

from ansible_collections.gpuops.gpu_server.plugins.module_utils._image_tree import read_bounded


# A modprobe.d file is a few lines; one over this size is not the file the role writes.
MAX_CONFIG_BYTES = 1024 * 1024
# Entries looked at while searching an extracted initramfs (an Ubuntu 24.04 generic initramfs holds about 3,000).
MAX_TREE_ENTRIES = 200000


def extracted_copies(tree, basename):
    """The regular files ``<anything>/etc/modprobe.d/<basename>`` under the extracted initramfs ``tree``
    (unmkinitramfs puts the archives in early/, early2/, main/ or at the top). Links are neither followed nor taken:
    an image cannot point the comparison at a file outside it. At most 200,000 entries are looked at."""
    found, seen = [], 0
    for dirpath, dirnames, filenames in os.walk(tree):
        seen += len(dirnames) + len(filenames)
        if seen > MAX_TREE_ENTRIES:
            break
        dirnames.sort()
        if basename in filenames and os.path.basename(dirpath) == 'modprobe.d' and \
                os.path.basename(os.path.dirname(dirpath)) == 'etc':
            path = os.path.join(dirpath, basename)
            if stat.S_ISREG(os.lstat(path).st_mode):
                found.append(path)
    return sorted(found)


def blacklist_state(tree, basename, on_disk):
    """Whether the extracted initramfs ``tree`` carries ``etc/modprobe.d/<basename>`` with the bytes ``on_disk``
    (None: the file is not on disk). Returns ``(state, reason)``: ``current`` (every copy has those bytes),
    ``stale`` (a copy differs, or the file is gone from disk), ``missing`` (no copy), ``unreadable``."""
    copies = extracted_copies(tree, basename)
    if not copies:
        why = 'the initramfs has no etc/modprobe.d/%s' % basename
        if on_disk is None:
            why += ', and the file does not exist on disk either'
        return 'missing', why
    for path in copies:
        data, reason = read_bounded(path, MAX_CONFIG_BYTES)
        if data is None:
            return 'unreadable', reason or '%s vanished while it was read' % path
        if on_disk is None:
            return 'stale', ('the initramfs carries etc/modprobe.d/%s (%s), which no longer exists on disk'
                             % (basename, os.path.relpath(path, tree)))
        if data != on_disk:
            return 'stale', ('etc/modprobe.d/%s in the initramfs (%s) differs from the file on disk'
                             % (basename, os.path.relpath(path, tree)))
    return 'current', 'the initramfs carries etc/modprobe.d/%s with the same bytes as on disk' % basename
