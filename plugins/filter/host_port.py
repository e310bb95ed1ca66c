# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter host_port (documented in host_port.yml)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError


def host_port(address, port):
    """``address:port``, an IPv6 address in brackets (``[::1]:9090``); a bracketed address stays as it is."""
    if not isinstance(address, str):
        raise AnsibleFilterError('host_port: expected an address or host name as a string, got %r' % (address,))
    if isinstance(port, bool) or not (isinstance(port, int) or (isinstance(port, str) and port.strip().isdigit())):
        raise AnsibleFilterError('host_port: expected a TCP port number, got %r' % (port,))
    if not 1 <= int(port) <= 65535:
        raise AnsibleFilterError('host_port: a TCP port is 1 to 65535, got %s' % (port,))
    if ':' in address and not (address.startswith('[') and address.endswith(']')):
        address = '[%s]' % address
    return '%s:%d' % (address, int(port))


class FilterModule(object):
    def filters(self):
        return {'host_port': host_port}
