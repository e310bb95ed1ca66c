# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""``NVRM: Xid`` lines from ``journalctl -k`` or ``dmesg`` text, in all their timestamp formats.

:func:`parse` reads any text without raising: a line that is not an Xid line is skipped, and an Xid line whose
code is no number this module can read (more than XID_CODE_MAX_DIGITS ASCII digits) is kept, with code None,
as a ``warn`` event. Digits are ASCII digits only.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re
import stat

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command
from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_xid import XID_CATALOG

# NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
# NVRM: Xid (0000:03:00): 13, 0003 00000000 0000a1c0 ...         (drivers before R450)
# ASCII digits only: a plain \d and int() also take Arabic-Indic digits. The text is stripped by parse().
_XID_RE = re.compile(r'NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\):'
                     r'\s*(?P<code>[0-9]+),?(?P<text>.*)', re.ASCII)

# Xid codes have three digits at most so far; a longer figure is no code (and int() refuses over 4300 digits).
XID_CODE_MAX_DIGITS = 9

# The header before "NVRM:", one pattern per format; the first that matches names the time.
_TIME_PATTERNS = (
    # dmesg (raw seconds since boot), possibly after a --decode "kern  :warn  : " prefix
    re.compile(r'\[\s*(?P<time>\d+\.\d+)\]', re.ASCII),
    # dmesg -T / --ctime
    re.compile(r'\[(?P<time>[A-Z][a-z]{2} [A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4})\]', re.ASCII),
    # dmesg --time-format iso, journalctl -o short-iso / short-iso-precise
    re.compile(r'(?P<time>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)', re.ASCII),
    # journalctl -o short / short-precise, syslog
    re.compile(r'(?P<time>[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)', re.ASCII),
)
_HOST_RE = re.compile(r'\s(?P<host>[^\s:]+) kernel:\s*$', re.ASCII)


class KernelLogError(ValueError):
    """The kernel log cannot be read as asked (a bad ``--since``, a path that is not a saved log, not text)."""


def classify(code):
    """``(status, description)`` for an Xid code; unknown codes are ``warn`` and say so, as is None (unreadable)."""
    if code is None:
        return ('warn', 'an Xid whose code could not be read (more than %d digits); read the line itself'
                % XID_CODE_MAX_DIGITS)
    if code in XID_CATALOG:
        return XID_CATALOG[code]
    return ('warn', 'Xid %d is not in the catalog this collection knows; look it up in NVIDIA\'s Xid documentation'
            % code)


def _header_time(header):
    for pattern in _TIME_PATTERNS:
        m = pattern.search(header)
        if m:
            return m.group('time')
    return None


def normalize_pci(pci):
    """``0000:3B:00`` -> ``0000:3b:00``; ``00000000:3b:00.0`` -> ``0000:3b:00`` (Xid names the device, not the function)."""
    parts = pci.lower().split(':')
    domain = '%04x' % int(parts[0], 16)
    device = parts[2].split('.')[0]
    return '%s:%s:%s' % (domain, parts[1], device)


def parse(text):
    """Every Xid line in ``text`` -> dicts ``{time, host, pci, code, status, description, text, line}``.

    ``text``: str, bytes (read as UTF-8) or None. ``code`` is None when the line's code cannot be read.
    Raises KernelLogError for anything else than text; never for what the text says.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', errors='replace')
    if text is not None and not isinstance(text, str):
        raise KernelLogError('a kernel log is text, got %s' % type(text).__name__)
    events = []
    for line in (text or '').splitlines():
        pos = line.find('NVRM: Xid')
        if pos < 0:
            continue
        m = _XID_RE.search(line, pos)
        if not m:
            continue
        header = line[:pos]
        digits = m.group('code').lstrip('0') or '0'
        code = int(digits) if len(digits) <= XID_CODE_MAX_DIGITS else None
        status, description = classify(code)
        host = _HOST_RE.search(header)
        events.append({
            'time': _header_time(header),
            'host': host.group('host') if host else None,
            'pci': normalize_pci(m.group('pci')),
            'code': code,
            'status': status,
            'description': description,
            'text': m.group('text').strip(),
            'line': line.strip(),
        })
    return events


def matches_gpu(event_pci, gpu_bus_id):
    """Whether an Xid's PCI id (``0000:3b:00``) names the GPU at ``0000:3b:00.0``."""
    if not event_pci or not gpu_bus_id:
        return False
    return gpu_bus_id.lower().startswith(event_pci.lower() + '.') or gpu_bus_id.lower() == event_pci.lower()


# A saved kernel log is a few MB at most; more is not a log this module should hold in memory.
MAX_LOG_BYTES = 64 * 1024 * 1024


def read_file(path, max_bytes=MAX_LOG_BYTES):
    """Text of a saved kernel log. Raises KernelLogError unless ``path`` is a regular file of at most ``max_bytes``.

    The file is opened without blocking (a FIFO without a writer would hang ``open()``) and read to at most
    ``max_bytes`` + 1 bytes (``/dev/zero`` never ends), so that the read is bounded in time and size.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, 'O_NOCTTY', 0))
    except (IOError, OSError) as e:
        raise KernelLogError('%s could not be read: %s' % (path, e.strerror or e))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise KernelLogError('%s is %s, not a regular file: give a saved journalctl -k or dmesg output'
                                 % (path, _file_kind(st.st_mode)))
        if st.st_size > max_bytes:
            raise KernelLogError('%s holds %d bytes, more than the %d bytes a kernel log is read up to'
                                 % (path, st.st_size, max_bytes))
        chunks, total = [], 0
        while True:
            data = os.read(fd, min(65536, max_bytes + 1 - total))
            if not data:
                break
            chunks.append(data)
            total += len(data)
            if total > max_bytes:
                raise KernelLogError('%s holds more than the %d bytes a kernel log is read up to' % (path, max_bytes))
    except (IOError, OSError) as e:
        raise KernelLogError('%s could not be read: %s' % (path, e.strerror or e))
    finally:
        os.close(fd)
    return b''.join(chunks).decode('utf-8', errors='replace')


def _file_kind(mode):
    for test, name in ((stat.S_ISFIFO, 'a FIFO'), (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'),
                       (stat.S_ISSOCK, 'a socket'), (stat.S_ISDIR, 'a directory')):
        if test(mode):
            return name
    return 'not a regular file'


def _has_lines(text):
    """Whether journalctl printed any message (with -q it prints nothing at all when there is none)."""
    return any(line.strip() and not line.startswith('-- ') for line in (text or '').splitlines())


def read(journalctl_path=None, dmesg_path=None, since=None, timeout=30, runner=None):
    """Kernel log text of the current boot (or since ``since``), from whichever reader holds it.

    ``journalctl -k`` is asked first. When it answers but holds no kernel message of the current boot
    (journald keeps no kernel messages on that host, or no journal at all), ``dmesg`` is read instead:
    an empty journal must not pass for a clean kernel log. With ``since``, an empty answer counts only
    when the journal does hold kernel messages of this boot; otherwise dmesg (the whole boot) is read.

    Returns ``(text, source, error)``: ``source`` names the reader whose text is returned
    (``journalctl`` or ``dmesg``); ``error`` says why nothing could be read (text is then None).
    Raises KernelLogError when journalctl refuses ``since``, _command.CommandTimeout when a reader hangs,
    _command.CommandOutputTooLarge when one prints more than the byte cap.
    """
    runner = runner or _command.run
    errors = []
    if journalctl_path:
        base = [journalctl_path, '-k', '--no-pager', '-q', '-o', 'short-iso']
        argv = base + (['--since', since] if since else ['-b', '0'])
        try:
            rc, out, err = runner(argv, timeout=timeout)
        except _command.CommandNotFound as e:
            errors.append(str(e))
        else:
            if since and rc != 0 and _SINCE_REFUSED_RE.search(err or ''):
                raise KernelLogError("kernel_log_since %r is not a time journalctl understands (%s); use a form "
                                     "such as '-1h', '2025-02-23 16:00:00' or 'today'"
                                     % (since, (err or '').strip()))
            if rc == 0 and 'No journal files were found' not in (err or ''):
                if _has_lines(out):
                    return out, 'journalctl', None
                if since and _journal_has_boot(base, runner, timeout):
                    # The journal holds this boot's kernel messages, none since ``since``.
                    return out, 'journalctl', None
                errors.append('journalctl holds no kernel messages of the current boot')
            else:
                errors.append(_command.failure_message(argv, rc, err, out))
    if dmesg_path:
        argv = [dmesg_path]
        try:
            rc, out, err = runner(argv, timeout=timeout)
        except _command.CommandNotFound as e:
            errors.append(str(e))
        else:
            if rc == 0:
                return out, 'dmesg', None
            errors.append(_command.failure_message(argv, rc, err, out))
    if not journalctl_path and not dmesg_path:
        errors.append('neither journalctl nor dmesg was found')
    return None, None, '; '.join(errors)


# systemd: "Failed to parse timestamp: not-a-time", older: 'Failed to parse timestamp: ...'
_SINCE_REFUSED_RE = re.compile(r'(?i)failed to parse (?:timestamp|time|--since)')


def _journal_has_boot(base, runner, timeout):
    """Whether the journal holds at least one kernel message of the current boot."""
    try:
        rc, out, _err = runner(base + ['-b', '0', '-n', '1'], timeout=timeout)
    except _command.CommandNotFound:
        return False
    return rc == 0 and _has_lines(out)
