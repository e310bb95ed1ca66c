# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError, AnsibleUndefinedVariable

from ansible_collections.gpuops.gpu_server.plugins.filter import cluster

FILTERS = cluster.FilterModule().filters()


class LazyVars(dict):
    """A host's variables as hostvars gives them: templated when read, some failing to template."""

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        if value == 'UNDEFINED':
            raise AnsibleUndefinedVariable('not defined')
        return value


HOSTVARS = {
    'm1': LazyVars(ansible_host='10.0.0.1', ansible_facts={'hostname': 'node1'}, unrelated='UNDEFINED'),
    'm2': LazyVars(ansible_host='m2.example', training_cluster_address='UNDEFINED',
                   ansible_facts={'ib0': {'ipv4': {'address': '10.10.0.2'}}}, training_cluster_aliases=['gpu2']),
    'm3': LazyVars(ansible_host='m3.example'),
}


def test_addresses_and_lines_from_hostvars():
    addresses = FILTERS['cluster_member_addresses'](['m1', 'm2', 'm3'], HOSTVARS, 'ib0')
    # m2's training_cluster_address does not template: unset, as `default` read it; only the needed variables are read.
    assert addresses == {'m1': '10.0.0.1', 'm2': '10.10.0.2', 'm3': ''}
    assert FILTERS['cluster_hosts_lines'](['m1', 'm2', 'm3'], addresses, HOSTVARS) == [
        '10.0.0.1 m1 node1', '10.10.0.2 m2 gpu2']
    assert FILTERS['cluster_member_addresses'](None, HOSTVARS) == {}


@pytest.mark.parametrize('call,fragment', [
    (lambda: FILTERS['cluster_member_addresses']('m1', HOSTVARS), 'expected a list of host names'),
    (lambda: FILTERS['cluster_member_addresses'](['m1'], ['m1']), 'expected hostvars'),
    (lambda: FILTERS['cluster_member_addresses'](['m9'], HOSTVARS), 'm9 is not in hostvars'),
    (lambda: FILTERS['cluster_hosts_lines'](['m1'], ['10.0.0.1'], HOSTVARS), "expected the members' addresses"),
    (lambda: FILTERS['cluster_hosts_lines'](['m1'], {'m1': '10.0.0.1'}, {'m1': {'training_cluster_aliases': 'x'}}),
     'training_cluster_aliases of m1 must be a list'),
])
def test_refuses(call, fragment):
    with pytest.raises(AnsibleFilterError) as e:
        call()
    assert fragment in str(e.value)
