# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""DKMS build state under ``<root>/var/lib/dkms``: the newest build log (DKMS 2 and 3 layouts), the kernel it was
written for, and its first error line. No link is followed below var/lib/dkms.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re
import stat

from ansible_collections.gpuops.gpu_server.plugins.module_utils._image_tree import join_in_root, resolve_in_root


# A compiler's or make's error line in a DKMS build log: "file.c:12:3: error: ...", "make[2]: *** ... Error 2".
_BUILD_ERROR = re.compile(r'(?:\berror:|\*\*\* .*Error [0-9]+|\bfatal error\b)')
MAX_BUILD_LOG_BYTES = 8 * 1024 * 1024


def first_build_error(text):
    """The first error line of a DKMS make.log (ASCII-printable, at most 300 characters), or '' when there is none."""
    if not isinstance(text, str):
        return ''
    for line in text[:MAX_BUILD_LOG_BYTES].splitlines():
        if _BUILD_ERROR.search(line):
            clean = ''.join(c for c in line.strip() if 0x20 <= ord(c) <= 0x7e)
            return clean[:300]
    return ''


# The first line of a DKMS make.log names the module and the kernel it was built for (dkms 2.8 and 3.0 alike):
# "DKMS make.log for nvidia-current-535.309.01 for kernel 6.12.118+deb12-cloud-amd64 (x86_64)".
_BUILD_KERNEL = re.compile(r'^DKMS make\.log for \S+ for kernel (\S+)', re.M)


def build_log_kernel(text):
    """The kernel release a DKMS make.log was written for (its first line), or '' when it names none."""
    if not isinstance(text, str):
        return ''
    found = _BUILD_KERNEL.search(text[:4096])
    return ''.join(c for c in found.group(1) if 0x20 < ord(c) <= 0x7e)[:100] if found else ''


def newest_build_log(root='/'):
    """The newest DKMS build log under <root>/var/lib/dkms (DKMS 2: <module>/<version>/build/make.log; DKMS 3:
    <module>/<version>/<kernel>/<arch>/log/make.log), or None. No link is followed below var/lib/dkms."""
    base = resolve_in_root(root, join_in_root(root, '/var/lib/dkms'))
    newest, newest_mtime = None, None
    for depth_pattern in (('build', 'make.log'), ('*', '*', 'log', 'make.log')):
        for path in _expand(base, ('*', '*') + depth_pattern):
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and (newest_mtime is None or st.st_mtime > newest_mtime):
                newest, newest_mtime = path, st.st_mtime
    return newest


def _listdir(path):
    try:
        return sorted(os.listdir(path))[:1000]
    except OSError:
        return []


def _real_dir(path):
    """Whether path is a directory itself, not a link to one (a link in the tree could lead out of it)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _expand(base, parts):
    """The paths base/parts ('*' for every entry); the directories walked through are never links."""
    paths = [base]
    for part in parts:
        nxt = []
        for p in paths:
            if not _real_dir(p):
                continue
            if part == '*':
                nxt.extend(os.path.join(p, name) for name in _listdir(p))
            else:
                nxt.append(os.path.join(p, part))
        paths = nxt
    return paths
