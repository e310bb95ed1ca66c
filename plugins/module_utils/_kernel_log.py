# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""``NVRM: Xid`` lines from ``journalctl -k`` or ``dmesg`` text, in all their timestamp formats.

:func:`parse` reads any text without raising: a line that is not an Xid line is skipped, and an Xid line whose
code is no number this module can read (more than XID_CODE_MAX_DIGITS ASCII digits) is kept, with code None,
as a ``warn`` event; one whose PCI address is none (a device above 1f) is kept with pci None (host-wide). Digits
are ASCII digits only.
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
# The host name journalctl prints before "kernel:": printable ASCII without ':' (a host name is 253 characters at
# most), so that no control character or megabyte of junk becomes an event's host.
_HOST_RE = re.compile(r'\s(?P<host>[!-9;-~]{1,253}) kernel:\s*$', re.ASCII)

# What an event carries of its line: the text after the code at most XID_TEXT_MAX characters, the whole line at most
# XID_LINE_MAX, each then cut with TRUNCATED_MARK naming how much was left out, so that a huge kernel log line cannot
# bloat the facts, the health result or the fleet report. NVIDIA's own Xid texts are under 200 characters.
XID_TEXT_MAX = 512
XID_LINE_MAX = 1024
TRUNCATED_MARK = ' [... %d more characters]'
# Control characters (C0, DEL, C1) are dropped from an event's text and line; a tab becomes a space.
_CONTROL_RE = re.compile('[\x00-\x08\x0a-\x1f\x7f-\x9f]')


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


# A PCI address as the kernel, sysfs, lspci and nvidia-smi write it: [domain:]bus:device[.function], the domain of
# 4 to 8 hex digits (lspci -D and sysfs 4, or 5 for a VMD domain such as 10000; nvidia-smi 8), 0000 when absent
# (lspci without -D); the device 00-1f (5 bits) and the function 0-7 (PCI Local Bus Specification, configuration
# address). Either case; blanks around it are dropped, nothing else is taken.
_PCI_ADDRESS_RE = re.compile(r'(?:(?P<domain>[0-9a-f]{4,8}):)?(?P<bus>[0-9a-f]{2}):(?P<device>[01][0-9a-f])'
                             r'(?:\.(?P<function>[0-7]))?\Z', re.IGNORECASE | re.ASCII)


class PciAddressError(ValueError):
    """Text that is no PCI address; the message shows it."""


def parse_pci(pci):
    """``(domain, bus, device, function)`` of a PCI address: ints, function None when the address names only the
    device (``0000:3b:00``, as an Xid line does). Raises PciAddressError for anything else (not text, junk)."""
    if not isinstance(pci, str):
        raise PciAddressError('a PCI address is text such as 0000:3b:00.0, got %s' % type(pci).__name__)
    m = _PCI_ADDRESS_RE.match(pci.strip(' \t\r\n'))
    if not m:
        shown = repr(pci) if len(pci) <= 40 else repr(pci[:37]) + '...'
        raise PciAddressError('%s is not a PCI address: expected [domain:]bus:device[.function] in hex, such as '
                              '0000:3b:00.0 or 3b:00.0' % shown)
    function = m.group('function')
    return (int(m.group('domain') or '0', 16), int(m.group('bus'), 16), int(m.group('device'), 16),
            None if function is None else int(function))


def normalize_pci(pci):
    """The device a PCI address names, as Xid events carry it: ``0000:3B:00`` -> ``0000:3b:00``;
    ``00000000:3b:00.0`` and ``3b:00.0`` -> ``0000:3b:00`` (no domain: 0000; Xid names the device, not the function).
    Raises PciAddressError for what is no PCI address."""
    domain, bus, device, _function = parse_pci(pci)
    return '%04x:%02x:%02x' % (domain, bus, device)


def bounded_text(text, limit):
    """``text`` without control characters (a tab as a space), stripped, and at most ``limit`` characters followed
    by TRUNCATED_MARK when it was longer."""
    text = _CONTROL_RE.sub('', text.replace('\t', ' ')).strip()
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + TRUNCATED_MARK % (len(text) - limit)


def parse(text):
    """Every Xid line in ``text`` -> dicts ``{time, host, pci, code, status, description, text, line}``.

    ``text`` (after the code) and ``line`` are bounded (XID_TEXT_MAX, XID_LINE_MAX, see bounded_text) and hold no
    control character.

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
        try:
            pci = normalize_pci(m.group('pci'))
        except PciAddressError:
            pci = None                               # no device this event can be tied to: it counts host-wide
        events.append({
            'time': _header_time(header),
            'host': host.group('host') if host else None,
            'pci': pci,
            'code': code,
            'status': status,
            'description': description,
            'text': bounded_text(m.group('text'), XID_TEXT_MAX),
            'line': bounded_text(line, XID_LINE_MAX),
        })
    return events


def matches_gpu(event_pci, gpu_bus_id):
    """Whether an Xid's PCI id (``0000:3b:00``) names the GPU at ``gpu_bus_id`` (``0000:3b:00.0``, or as nvidia-smi
    prints it, ``00000000:3B:00.0``): the same domain, bus and device. False when either is no PCI address."""
    try:
        return parse_pci(event_pci)[:3] == parse_pci(gpu_bus_id)[:3]
    except PciAddressError:
        return False


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
