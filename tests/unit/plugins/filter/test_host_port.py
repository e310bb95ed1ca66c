# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""host_port and its parse (_host_port): a port is an int or ASCII digits only, an address is an address (issue 52:
non-ASCII digits were taken as a port)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import host_port
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _host_port

FILTER = host_port.FilterModule().filters()['host_port']


@pytest.mark.parametrize('address,port,result', [
    ('0.0.0.0', 9100, '0.0.0.0:9100'), ('10.0.0.5', '9090', '10.0.0.5:9090'),
    ('monitor.example', 9093, 'monitor.example:9093'), ('localhost', 22, 'localhost:22'), ('gpu-01', 1, 'gpu-01:1'),
    ('node1.example.', 65535, 'node1.example.:65535'),
    ('::', 9100, '[::]:9100'), ('::1', 9090, '[::1]:9090'), ('fd00::5', '9835', '[fd00::5]:9835'),
    ('[::1]', 9090, '[::1]:9090'), ('', 9100, ':9100'), ('fe80::1%eth0', '22', '[fe80::1%eth0]:22'),
    ('::ffff:10.0.0.1', 80, '[::ffff:10.0.0.1]:80'), ('10.0.0.5', '00022', '10.0.0.5:22'),
])
def test_host_port(address, port, result):
    assert FILTER(address, port) == result


# Digits of other scripts that str.isdigit() and int() accept: the old check took every one of these as a port.
OTHER_DIGITS = ['\u0662\u0662', '\u06f2\u06f2', '\u0968\u0968', '\uff12\uff12', '\U0001d7d0\U0001d7d0', '2\u0662',
                '\u0e52\u0e52', '\u1812\u1812']
# Other spellings that int() or float() or the old strip() took, or that are no port at all.
NOT_PORTS = [' 22', '22 ', '22\n', '\t22', '+22', '-22', '2_2', '22.0', '0x16', '1e3', '', ' ', '٢', '²', '22\r',
             '22 # x', '22\nPermitRootLogin yes', '022 ', '1' * 6, 'http', '0b10110']
NOT_PORT_TYPES = [True, False, None, 22.0, 22.5, float('nan'), [22], {'port': 22}, b'22', (22,)]


@pytest.mark.parametrize('port', OTHER_DIGITS + NOT_PORTS + NOT_PORT_TYPES, ids=repr)
def test_only_ascii_digits_and_ints_are_ports(port):
    with pytest.raises(AnsibleFilterError, match=r'^host_port: .* is not a port: write a number 1-65535') as e:
        FILTER('10.0.0.5', port)
    assert repr(port)[:60] in str(e.value)             # the message shows the value as it is (repr)


@pytest.mark.parametrize('port', [0, -1, 65536, 2 ** 64, '0', '65536', '99999', '00000'])
def test_ports_are_1_to_65535(port):
    with pytest.raises(AnsibleFilterError, match=r'is out of range: a port is 1-65535'):
        FILTER('10.0.0.5', port)


def test_negative_control_the_old_check_took_other_scripts_digits():
    """The old test (str.isdigit() after strip(), then int()) took the digits of other scripts and blank-padded
    text, and wrote int()'s reading of them: the cases above would have passed as ports."""
    def old_is_port(port):
        return isinstance(port, int) or (isinstance(port, str) and port.strip().isdigit())
    assert all(old_is_port(p) for p in OTHER_DIGITS + [' 22', '22\n', '\t22', '22\r'])
    assert int('\u0662\u0662') == 22 and int('\uff12\uff12') == 22


@settings(max_examples=300)
@given(port=st.text(st.characters(codec='utf-8'), max_size=6))
def test_any_text_is_ascii_digits_or_refused(port):
    """Any string: a port exactly when it is 1-5 ASCII digits of 1-65535, and the result holds those digits' value."""
    is_port = port.isascii() and port.isdigit() and len(port) <= 5 and 1 <= int(port) <= 65535
    if is_port:
        assert FILTER('h', port) == 'h:%d' % int(port)
    else:
        with pytest.raises(AnsibleFilterError, match='^host_port: '):
            FILTER('h', port)


@settings(max_examples=100)
@given(digit=st.characters(categories=['Nd']).filter(lambda c: not c.isascii()))
def test_every_unicode_decimal_digit_but_ascii_is_refused(digit):
    assert unicodedata.decimal(digit) in range(10)
    with pytest.raises(AnsibleFilterError, match='is not a port'):
        FILTER('h', '1' + digit)


NOT_ADDRESSES = [None, 5, ['::'], b'::1', '10.0.0.5\n', ' 10.0.0.5', '10.0.0.5 ', '10.0.0.5\nPermitRootLogin yes',
                 'fe80::1%eth0\nPermitRootLogin yes', 'fe80::1% x', '[::1', '::1]', '[10.0.0.5]', '[host]', 'node_1',
                 'a b', 'host:22', '10.0.0.256', '0x7f.1', '127.1', '\u0661\u0660.0.0.1', 'x' * 64, '-node', 'node-',
                 'n\u00f6de', '.', '..', 'a..b', '*', '${x}', '{{ x }}']


@pytest.mark.parametrize('address', NOT_ADDRESSES, ids=repr)
def test_only_addresses_and_host_names_are_addresses(address):
    with pytest.raises(AnsibleFilterError, match=r'^host_port: .* is not an address'):
        FILTER(address, 9100)


def test_the_parse_is_the_module_utils_one():
    assert _host_port.parse_port('9100') == 9100 and _host_port.parse_port(22) == 22
    assert _host_port.parse_address('fd00::5') == '[fd00::5]'
    with pytest.raises(_host_port.HostPortError):
        _host_port.parse_port('\uff12\uff12')
