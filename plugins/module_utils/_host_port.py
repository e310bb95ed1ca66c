# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A TCP/UDP port and a listen address, parsed once into typed values, and joined as ``address:port``.

Used by the host_port filter (plugins/filter/host_port.py), whose result is written into listen flags, unit files
and sshd's configuration: a port is an int or ASCII digits only (no sign, space, underscore, line break, or the
digits of other scripts that ``int()`` and ``str.isdigit()`` take, such as ``'٢٢'``), an address is an IP address, a
bracketed IPv6 address, a host name or empty. Standard library only; never a traceback for bad input, only
HostPortError naming the value.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ipaddress
import re

MIN_PORT = 1
MAX_PORT = 65535

_DIGITS = re.compile(r'[0-9]{1,5}\Z')                     # match(): ASCII digits only, nothing around them
# A host name: dot-separated labels of ASCII letters, digits and inner hyphens (RFC 1123), 253 characters at most.
_LABEL = r'[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?'
_HOST_NAME = re.compile(r'%s(?:\.%s)*\.?\Z' % (_LABEL, _LABEL))
# A label that inet_aton reads as a number (decimal, octal, 0x hex): a name of such labels only (10.0.0.256,
# 0x7f.1) is a malformed address to the resolver, not a host name.
_NUMERIC_LABEL = re.compile(r'(?:0[xX][0-9A-Fa-f]*|[0-9]+)\Z')
# What ipaddress is given: hex digits, colons and dots, and an IPv6 zone of interface-name characters (ipaddress
# takes any text after the %, a line break included).
_IP_CHARACTERS = re.compile(r'[0-9A-Fa-f:.]{2,45}(?:%[A-Za-z0-9_.-]{1,15})?\Z')


class HostPortError(ValueError):
    """A port or address that cannot be written; the message names the value and what is expected."""


def _show(value):
    """A value as a message shows it: repr, so that line breaks, spaces, quotes and other scripts' digits show."""
    try:
        text = repr(value)
    except Exception:                                     # pylint: disable=broad-except; an object's own __repr__
        text = type(value).__name__
    return text if len(text) <= 80 else text[:77] + '...'


def parse_port(value, example=9100):
    """``value`` as a port number: an int 1-65535 (not a boolean), or a string of 1-5 ASCII digits with nothing
    around them. Raises HostPortError otherwise, its message suggesting ``example``. The one port parser of the
    collection: the firewall's allow-list (_firewall.py) reads its ports through it too."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise HostPortError('%s is not a port: write a number 1-65535 such as %d' % (_show(value), example))
    if isinstance(value, str):
        if not _DIGITS.match(value):
            raise HostPortError('%s is not a port: write a number 1-65535 such as %d (ASCII digits only, nothing '
                                'around them)' % (_show(value), example))
        value = int(value, 10)
    if not MIN_PORT <= value <= MAX_PORT:
        raise HostPortError('%s is out of range: a port is 1-65535' % _show(value))
    return value


def parse_address(value):
    """``value`` as a listen address: '' (every address), an IPv4 address, an IPv6 address (with or without
    brackets, a zone such as ``%eth0`` kept), or a host name. Returns the text to write before ``:port``: an IPv6
    address in brackets, anything else as given. Raises HostPortError otherwise."""
    if not isinstance(value, str):
        raise HostPortError('%s is not an address: write an IP address or a host name as a string' % _show(value))
    if value == '':
        return value
    bracketed = value.startswith('[') and value.endswith(']')
    inner = value[1:-1] if bracketed else value
    address = None
    if _IP_CHARACTERS.match(inner):
        try:
            address = ipaddress.ip_address(inner)
        except ValueError:
            pass
    if address is not None and address.version == 6:
        return '[%s]' % inner
    if address is not None and not bracketed:
        return value
    if not bracketed and len(value) <= 253 and _HOST_NAME.match(value) and \
            not all(_NUMERIC_LABEL.match(label) for label in value.rstrip('.').split('.')):
        return value
    raise HostPortError('%s is not an address: write an IPv4 address (10.0.0.5), an IPv6 address (fd00::5 or '
                        '[fd00::5]), a host name (node1.example) or an empty string for every address' % _show(value))


def join(address, port):
    """``address:port``, an IPv6 address in brackets (``[::1]:9090``), both parsed first (parse_address,
    parse_port)."""
    return '%s:%d' % (parse_address(address), parse_port(port))


def only_this_host(address):
    """Whether a service that listens on ``address`` is reachable from this host only: a loopback IP address
    (127.0.0.0/8, ::1, bracketed or with a zone) or the name ``localhost``. Everything else counts as reachable
    beyond the host, fail closed: every address (``''``, ``0.0.0.0``, ``::``), another name, and a value that is not
    an address at all (which parse_address refuses where it is written)."""
    try:
        text = parse_address(address)
    except HostPortError:
        return False
    inner = text[1:-1] if text.startswith('[') else text
    if inner.rstrip('.').lower() == 'localhost':
        return True
    try:
        return ipaddress.ip_address(inner.split('%', 1)[0]).is_loopback
    except ValueError:
        return False


def beyond_host(listen):
    """The names of ``listen`` ({name: address}) whose address is reachable beyond this host (only_this_host false),
    sorted. Raises HostPortError when ``listen`` is not a mapping of names to values."""
    if not isinstance(listen, dict) or not all(isinstance(name, str) for name in listen):
        raise HostPortError('%s is not a mapping of names to listen addresses' % _show(listen))
    return sorted(name for name, address in listen.items() if not only_this_host(address))
