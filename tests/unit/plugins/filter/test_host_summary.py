# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import host_summary

FILTER = host_summary.FilterModule().filters()['host_summary']
SERVICES = 'chrony|docker|ssh|nftables|ufw'

FACTS = {
    'distribution': 'Debian', 'distribution_version': '12.12', 'kernel': '6.1.0-41-amd64',
    'virtualization_type': 'docker', 'virtualization_role': 'guest',
    'packages': {'chrony': [{'version': '4.3-2+deb12u1'}], 'docker.io': [{'version': '20.10.24+dfsg1-1+deb12u1'}],
                 'nftables': [{'version': '1.0.6-2+deb12u2'}], 'ufw': [{'version': '0.36.2-1'}]},
    'services': {'docker.service': {'state': 'running', 'status': 'enabled'},
                 'chrony.service': {'state': 'running', 'status': 'enabled'},
                 'nftables.service': {'state': 'stopped', 'status': 'enabled'},
                 'ssh.service': {'state': 'stopped', 'status': 'disabled'},
                 'cron.service': {'state': 'running', 'status': 'enabled'}},
}
# systemctl show --property=Id,ActiveState,SubState prints the properties in its own order, a block per unit.
SHOW = ('ActiveState=active\nSubState=running\nId=chrony.service\n\n'
        'ActiveState=active\nSubState=running\nId=docker.service\n\n'
        'ActiveState=active\nSubState=exited\nId=nftables.service\n\n'
        'ActiveState=inactive\nSubState=dead\nId=ufw.service\n\n'
        'ActiveState=inactive\nSubState=dead\nId=firewalld.service\n')


def test_summary_names_packages_services_and_the_firewall_in_use():
    lines = FILTER(FACTS, watch=['build-essential', 'chrony', 'docker.io'], services=SERVICES, units_show=SHOW,
                   ufw='Status: inactive\n', firewalld='')
    assert lines == [
        'Debian 12.12, kernel 6.1.0-41-amd64 (docker guest)',
        'package: chrony 4.3-2+deb12u1',
        'package: docker.io 20.10.24+dfsg1-1+deb12u1',
        'service: chrony.service active (running)',
        'service: docker.service active (running)',
        # service_facts says "stopped" of a loaded oneshot unit; systemd's own words win.
        'service: nftables.service active (exited)',
        'firewall: nftables 1.0.6-2+deb12u2, /etc/nftables.conf loaded (nftables.service active (exited))',
    ]


def test_ufw_and_firewalld_count_only_when_they_filter():
    show = 'Id=ufw.service\nActiveState=active\nSubState=exited\n'
    lines = FILTER(FACTS, units_show=show, ufw='Status: active\n\nTo Action From\n', firewalld='running\n')
    assert lines[-1] == ('firewall: ufw 0.36.2-1, active (ufw.service active (exited)); '
                         'firewalld ?, running (firewalld.service ?)')
    # Negative control: an installed but inactive ufw, a stopped firewalld and an inactive nftables unit filter nothing.
    lines = FILTER(FACTS, units_show='Id=nftables.service\nActiveState=inactive\nSubState=dead\n',
                   ufw='Status: inactive', firewalld='not running')
    assert lines[-1] == 'firewall: none in use'


def test_a_unit_systemd_does_not_describe_keeps_the_service_facts_state():
    lines = FILTER(FACTS, services='docker', units_show='')
    assert lines[1:] == ['service: docker.service running', 'firewall: none in use']


def test_no_services_pattern_lists_no_services():
    assert not [line for line in FILTER(FACTS, units_show=SHOW) if line.startswith('service:')]


@pytest.mark.parametrize('facts, kwargs, match', [
    ('Debian', {}, 'ansible_facts'),
    (FACTS, {'services': '('}, 'regular expression'),
])
def test_bad_input_is_a_clear_error(facts, kwargs, match):
    with pytest.raises(AnsibleFilterError, match=match):
        FILTER(facts, **kwargs)
