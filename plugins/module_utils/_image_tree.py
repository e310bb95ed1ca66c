# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Reading a tree that may be an image rather than the running host: paths resolved inside a root (no link
leads out of it), bounded reads of regular files, and text from what was read.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import errno
import os
import stat


def as_text(value):
    """str from str or bytes (UTF-8, bad bytes replaced); None for anything else."""
    if isinstance(value, bytes):
        return value.decode('utf-8', errors='replace')
    if isinstance(value, str):
        return value
    return None


def join_in_root(root, path):
    """PATH (absolute or not) under ROOT, lexically; resolve_in_root then walks its links inside ROOT."""
    return os.path.join(root or '/', path.lstrip('/'))


# Links followed while resolving one path inside a root (Linux's own limit is 40).
MAX_LINKS = 40


class PathRefused(ValueError):
    """A path inside a root that cannot be resolved inside it (its links do not end, one cannot be read, or the path
    is not under the root): refused, never guessed."""


def resolve_in_root(root, path, max_links=MAX_LINKS):
    """``path`` (under ``root``) resolved component by component as if ``root`` were ``/``: a link to an absolute
    target continues from ``root`` (Ubuntu's ``build -> /usr/src/linux-headers-...``, an image's ``lib -> /usr/lib``),
    ``..`` never climbs above ``root``, and every component is looked at with ``os.lstat``, so no link, in the last
    component or any other, leads to a file of the host that reads the image. A component that does not exist ends
    the walk: the rest is appended as it is (the caller's test of the path then finds nothing).

    Raises PathRefused after ``max_links`` links (a loop, or a chain no kernel would follow), for a link that cannot
    be read, and for a ``path`` not under ``root``."""
    root = os.path.abspath(root or '/')
    prefix = root.rstrip('/') + '/'
    # No lexical normalisation of path: its '..' are walked (and clamped) like a link's.
    if path != root and not path.startswith(prefix):
        raise PathRefused('%s is not under the root %s' % (path, root))
    pending = path[len(prefix):].split('/') if path.startswith(prefix) else []
    pending.reverse()                                    # a stack: the next component last
    done, links = [], 0
    while pending:
        part = pending.pop()
        if part in ('', '.'):
            continue
        if part == '..':
            if done:
                done.pop()                               # clamped: '..' of the root is the root
            continue
        candidate = os.path.join(root, *(done + [part]))
        try:
            st = os.lstat(candidate)
        except OSError:
            pending.reverse()
            return os.path.join(candidate, *[p for p in pending if p not in ('', '.')])
        if not stat.S_ISLNK(st.st_mode):
            done.append(part)
            continue
        links += 1
        if links > max_links:
            raise PathRefused('%s: more than %d symbolic links while resolving it inside %s (a loop?)'
                              % (path, max_links, root))
        try:
            target = os.readlink(candidate)
        except OSError as e:
            raise PathRefused('%s: the link %s cannot be read: %s' % (path, candidate, e.strerror or e))
        if os.path.isabs(target):
            done = []                                    # an absolute target starts again at the root
        pending.extend(reversed(target.split('/')))
    return os.path.join(root, *done)


def read_bounded(path, max_bytes):
    """The bytes of the regular file ``path``, not following a link at its last component.

    Returns ``(data, reason)``: data None and a reason when the file is missing (reason None then), not a regular
    file, unreadable or larger than ``max_bytes``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_NONBLOCK', 0))
    except OSError as e:
        if e.errno == errno.ENOENT:
            return None, None
        return None, '%s cannot be read: %s' % (path, e.strerror or e)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, '%s is not a regular file' % path
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(65536, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            return None, '%s is larger than %d bytes' % (path, max_bytes)
        return b''.join(chunks), None
    except OSError as e:
        return None, '%s cannot be read: %s' % (path, e.strerror or e)
    finally:
        os.close(fd)
