# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""listen_beyond_host and _host_port.only_this_host: a listen address counts as this host only when it is a loopback
address or localhost, parsed; anything else (every address, another name, a value that is no address) reaches
beyond the host, so that a role refuses it without TLS and authentication (fail closed)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import host_port
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _host_port

FILTER = host_port.FilterModule().filters()['listen_beyond_host']


@pytest.mark.parametrize('address', ['127.0.0.1', '127.0.0.2', '127.255.255.254', '::1', '[::1]', '::1%lo',
                                     'localhost', 'LOCALHOST', 'localhost.'])
def test_loopback_addresses_and_localhost_are_this_host_only(address):
    assert _host_port.only_this_host(address)


@pytest.mark.parametrize('address', [
    '', '0.0.0.0', '::', '[::]', '10.0.0.5', 'fd00::5', 'node1.example', 'localhost.example',
    'my-localhost',
    # not addresses at all: counted as reaching beyond the host, never as loopback
    '127.0.0.1 ', ' 127.0.0.1', '127.0.0.1\n0.0.0.0', '127.0.0.1,10.0.0.5', '127.1', '0177.0.0.1', '2130706433',
    '[127.0.0.1]', 'localhost\n', None, 127, True, ['127.0.0.1'], {'a': '127.0.0.1'}])
def test_everything_else_reaches_beyond_the_host(address):
    assert not _host_port.only_this_host(address)


def test_the_filter_names_the_variables_that_reach_beyond_the_host_sorted():
    listen = {'z_listen_address': '0.0.0.0', 'a_listen_address': '127.0.0.1', 'm_listen_address': '[::1]',
              'b_listen_address': '127.0.0.1\n0.0.0.0'}
    assert FILTER(listen) == ['b_listen_address', 'z_listen_address']
    assert FILTER({}) == []


@pytest.mark.parametrize('value', [None, ['127.0.0.1'], '127.0.0.1', {1: '127.0.0.1'}])
def test_a_value_that_is_not_a_mapping_fails_with_a_message(value):
    with pytest.raises(AnsibleFilterError, match='^listen_beyond_host: .* is not a mapping of names'):
        FILTER(value)


def test_negative_control_a_string_comparison_would_miss_brackets_and_spaces():
    """What the roles compared before (value in ['127.0.0.1', '::1', 'localhost']) called '[::1]' open and took
    nothing it did not list; the parse is what tells '127.0.0.1 ' (not an address) from '127.0.0.2' (loopback)."""
    naive = ['127.0.0.1', '::1', 'localhost']
    assert '[::1]' not in naive and _host_port.only_this_host('[::1]')
    assert '127.0.0.2' not in naive and _host_port.only_this_host('127.0.0.2')


@given(st.text(max_size=40))
def test_any_text_gives_a_boolean_and_never_a_traceback(text):
    result = _host_port.only_this_host(text)
    assert result is (result is True)
    if result:
        assert text.strip() == text and '\n' not in text
