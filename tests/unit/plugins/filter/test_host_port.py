# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import host_port

FILTER = host_port.FilterModule().filters()['host_port']


@pytest.mark.parametrize('address,port,result', [
    ('0.0.0.0', 9100, '0.0.0.0:9100'), ('10.0.0.5', '9090', '10.0.0.5:9090'),
    ('monitor.example', 9093, 'monitor.example:9093'),
    ('::', 9100, '[::]:9100'), ('::1', 9090, '[::1]:9090'), ('fd00::5', '9835', '[fd00::5]:9835'),
    ('[::1]', 9090, '[::1]:9090'), ('', 9100, ':9100'),
])
def test_host_port(address, port, result):
    assert FILTER(address, port) == result


@pytest.mark.parametrize('address,port,fragment', [
    (None, 9100, 'expected an address'), (['::'], 9100, 'expected an address'),
    ('::', 'http', 'expected a TCP port number'), ('::', True, 'expected a TCP port number'),
    ('::', None, 'expected a TCP port number'), ('::', 0, 'a TCP port is 1 to 65535'),
    ('::', '70000', 'a TCP port is 1 to 65535'),
])
def test_host_port_refuses(address, port, fragment):
    with pytest.raises(AnsibleFilterError, match='host_port') as e:
        FILTER(address, port)
    assert fragment in str(e.value)
