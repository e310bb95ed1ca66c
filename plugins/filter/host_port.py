# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filters host_port and listen_beyond_host (documented in host_port.yml and listen_beyond_host.yml)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _host_port


def host_port(address, port):
    """``address:port``, an IPv6 address in brackets (``[::1]:9090``); both parsed first (_host_port.join)."""
    try:
        return _host_port.join(address, port)
    except _host_port.HostPortError as e:
        raise AnsibleFilterError('host_port: %s' % e)


def listen_beyond_host(listen):
    """The names of {name: listen address} whose address is reachable beyond this host (_host_port.beyond_host)."""
    try:
        return _host_port.beyond_host(listen)
    except _host_port.HostPortError as e:
        raise AnsibleFilterError('listen_beyond_host: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'host_port': host_port, 'listen_beyond_host': listen_beyond_host}
