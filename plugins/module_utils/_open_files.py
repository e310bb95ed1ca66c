# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Which processes hold which files open, from /proc/PID/fd (and the open flags in /proc/PID/fdinfo).

One scan for two questions: which processes have a given file open (package_lock names the holder of an open file
description lock, whose pid the kernel does not report) and which files under a directory some process has open
for writing (the spot tool leaves checkpoints that are still being written out of a sync). Processes and
descriptors that vanish or may not be read during the scan are skipped, never an error. Standard library only:
the spot tool ships this file to the node.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

PROC = '/proc'


def descriptors(proc=PROC):
    """``(pid, path of /proc/PID/fd/N)`` for every open file descriptor of every process this one may read."""
    try:
        pids = [name for name in os.listdir(proc) if name.isdigit()]
    except OSError:
        return
    for pid in pids:
        fd_dir = os.path.join(proc, pid, 'fd')
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            yield int(pid), os.path.join(fd_dir, fd)


def open_flags(fd_path):
    """The open flags (``O_WRONLY``, ``O_RDWR`` ...) of the descriptor at ``/proc/PID/fd/N``, or None when gone."""
    fdinfo = os.path.join(os.path.dirname(os.path.dirname(fd_path)), 'fdinfo', os.path.basename(fd_path))
    try:
        with open(fdinfo) as f:
            return [int(line.split()[1], 8) for line in f if line.startswith('flags:')][0]
    except (OSError, IndexError, ValueError):
        return None


def pids_with_open(st, proc=PROC):
    """Pids of the other processes that have the file ``st`` (an ``os.stat`` result) describes open, each once."""
    pids = []
    for pid, fd_path in descriptors(proc):
        if pid == os.getpid() or (pids and pids[-1] == pid):
            continue
        try:
            fst = os.stat(fd_path)
        except OSError:
            continue
        if fst.st_ino == st.st_ino and fst.st_dev == st.st_dev:
            pids.append(pid)
    return pids


def open_for_writing(root, proc=PROC):
    """Paths under the directory ``root`` that some process has open with write access."""
    busy = set()
    prefix = root.rstrip('/') + '/'
    for _pid, fd_path in descriptors(proc):
        try:
            target = os.readlink(fd_path)
        except OSError:
            continue
        if not target.startswith(prefix):
            continue
        flags = open_flags(fd_path)
        if flags is not None and flags & (os.O_WRONLY | os.O_RDWR):
            busy.add(target)
    return busy
