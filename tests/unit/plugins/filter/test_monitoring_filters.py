# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""monitoring_scrape_mismatches and its parse (_monitoring): the GPU nodes that the monitoring server would scrape the
wrong way are named, with the variable their inventory sets; a value that is not a boolean or a user name fails by
name instead of reading as false (the Jinja loop it replaces took `hv[v] | bool`, so 'maybe' was a quiet False)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import monitoring
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _monitoring

FILTER = monitoring.FilterModule().filters()['monitoring_scrape_mismatches']
SERVER = dict(tls=True, web_auth=True, web_user='gpuops')


def mismatches(hostvars, **server):
    return FILTER(sorted(hostvars), hostvars, **dict(SERVER, **server))


def test_nodes_that_set_nothing_or_the_same_pass():
    assert mismatches({'gpu-a': {}, 'gpu-b': {'gpu_monitoring_tls': True, 'gpu_monitoring_web_user': 'gpuops'},
                       'gpu-c': {'gpu_monitoring_node_web_auth': 'yes', 'ansible_host': '10.0.0.3'}}) == []
    assert FILTER([], {}, True, True, 'gpuops') == []


@pytest.mark.parametrize('variables,said', [
    ({'gpu_monitoring_tls': False}, 'gpu-b has gpu_monitoring_tls False'),
    ({'gpu_monitoring_web_auth': 'no'}, 'gpu-b has gpu_monitoring_web_auth False'),
    ({'gpu_monitoring_web_auth': ' OFF '}, 'gpu-b has gpu_monitoring_web_auth False'),
    ({'gpu_monitoring_tls': 0}, 'gpu-b has gpu_monitoring_tls False'),
    ({'gpu_monitoring_web_user': 'scraper'}, 'gpu-b has gpu_monitoring_web_user scraper'),
    # The gpu_monitoring_node role's names, and they win over the entry's.
    ({'gpu_monitoring_node_tls': 'false'}, 'gpu-b has gpu_monitoring_node_tls False'),
    ({'gpu_monitoring_node_tls': False, 'gpu_monitoring_tls': True}, 'gpu-b has gpu_monitoring_node_tls False'),
    ({'gpu_monitoring_node_web_user': 'other', 'gpu_monitoring_web_user': 'gpuops'},
     'gpu-b has gpu_monitoring_node_web_user other'),
])
def test_a_node_set_up_the_other_way_is_named_with_its_variable(variables, said):
    assert mismatches({'gpu-a': {}, 'gpu-b': variables}) == [said]


def test_every_mismatch_of_every_node_is_named_in_host_order():
    got = mismatches({'gpu-c': {'gpu_monitoring_tls': False},
                      'gpu-a': {'gpu_monitoring_tls': False, 'gpu_monitoring_web_user': 'x'}})
    assert got == ['gpu-a has gpu_monitoring_tls False', 'gpu-a has gpu_monitoring_web_user x',
                   'gpu-c has gpu_monitoring_tls False']


def test_the_user_counts_only_while_basic_auth_is_on():
    nodes = {'gpu-a': {'gpu_monitoring_web_user': 'other', 'gpu_monitoring_web_auth': False}}
    assert mismatches(nodes, web_auth=False) == []
    # ... and then a broken user name is no error either: nothing uses it.
    assert mismatches({'gpu-a': {'gpu_monitoring_web_user': 'a:b', 'gpu_monitoring_web_auth': 'no'}}, web_auth='no') == []


def test_a_server_without_tls_refuses_a_node_with_it():
    assert mismatches({'gpu-a': {'gpu_monitoring_tls': 'yes'}}, tls=False) == ['gpu-a has gpu_monitoring_tls True']


@pytest.mark.parametrize('value', ['maybe', '', ' ', 'yes\nno', 'tru', 2, -1, 1.0, 0.0, None, [], {}, ['yes'],
                                   '\u0661', 'ｙｅｓ', 'true\x00'])
def test_a_node_boolean_that_is_no_boolean_fails_by_host_and_name(value):
    with pytest.raises(AnsibleFilterError) as e:
        mismatches({'gpu-a': {}, 'gpu-b': {'gpu_monitoring_tls': value}})
    assert 'GPU node gpu-b: gpu_monitoring_tls is %r' % (value,) in str(e.value)
    assert 'write true or false' in str(e.value)


@pytest.mark.parametrize('value', ['', ' ', 'a b', 'a:b', 'user\n', '\tuser', 'us\rer', 7, None, True, ['gpuops'],
                                   'gpu\u00a0ops'])
def test_a_node_user_that_is_no_user_name_fails_by_host_and_name(value):
    with pytest.raises(AnsibleFilterError) as e:
        mismatches({'gpu-b': {'gpu_monitoring_node_web_user': value}})
    assert 'GPU node gpu-b: gpu_monitoring_node_web_user is %r' % (value,) in str(e.value)


@pytest.mark.parametrize('server,said', [
    (dict(tls='sometimes'), "the server's gpu_monitoring_server_tls is 'sometimes'"),
    (dict(web_auth=None), "the server's gpu_monitoring_server_web_auth is None"),
    (dict(web_user='a b'), "the server's gpu_monitoring_server_web_user is 'a b'"),
])
def test_a_bad_server_value_fails_by_name(server, said):
    with pytest.raises(AnsibleFilterError) as e:
        mismatches({'gpu-a': {}}, **server)
    assert said in str(e.value)


def test_bad_shapes_fail_with_a_message():
    with pytest.raises(AnsibleFilterError, match='the hosts must be a list'):
        FILTER('gpu-a', {}, True, True, 'gpuops')
    with pytest.raises(AnsibleFilterError, match='no host variables for .gpu-z.'):
        FILTER(['gpu-z'], {}, True, True, 'gpuops')
    with pytest.raises(_monitoring.MonitoringError, match='must be a mapping'):
        _monitoring.scrape_mismatches({'gpu-a': ['x']}, True, True, 'gpuops')
    with pytest.raises(_monitoring.MonitoringError, match='mapping of host name'):
        _monitoring.scrape_mismatches(['gpu-a'], True, True, 'gpuops')


def test_negative_control_the_old_loose_reading_lets_a_typo_through():
    """The Jinja loop this filter replaces read a node's value with Ansible's bool filter, which turns any unknown word
    into False: 'ture' (a typo for true) then matched a server with TLS off and nothing was said. Feeding the same
    case to a parser that reads like that must miss it, and the real one must catch it."""
    def loose(value, where):
        return str(value).strip().lower() in ('true', 'yes', 'on', '1', 'y', 't')

    nodes = {'gpu-a': {'gpu_monitoring_tls': 'ture'}}
    real = _monitoring.parse_bool
    try:
        _monitoring.parse_bool = loose
        assert _monitoring.scrape_mismatches(nodes, False, False, 'gpuops') == []  # the typo slips through
    finally:
        _monitoring.parse_bool = real
    with pytest.raises(_monitoring.MonitoringError, match="gpu_monitoring_tls is 'ture'"):
        _monitoring.scrape_mismatches(nodes, False, False, 'gpuops')
