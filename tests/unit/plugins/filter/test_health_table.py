# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import health_table

FILTER = health_table.FilterModule().filters()['health_table']


def check(name, gpu, status):
    return {'check': name, 'gpu': gpu, 'status': status, 'value': None, 'message': name}


HEALTHY = {'status': 'ok', 'checks': [check('driver_loaded', None, 'ok'), check('temperature', 0, 'ok')],
           'nvidia': {'gpus': [{'index': 0, 'name': 'NVIDIA H200'}]}}
SICK = {'status': 'fail', 'nvidia': {'gpus': [{'index': 0, 'name': 'NVIDIA A100-SXM4-80GB'}, {'index': 1, 'name': None}]},
        'checks': [check('driver_loaded', None, 'ok'), check('xid', None, 'warn'), check('xid', 1, 'fail'),
                   check('pcie_link_width', 1, 'warn'), check('xid', 1, 'fail'), check('temperature', 0, 'ok')]}
NO_DRIVER = {'status': 'fail', 'nvidia': {'gpus': []}, 'checks': [check('driver_loaded', None, 'fail')]}


def test_one_line_per_gpu_and_host_wide_findings():
    lines = FILTER({'node-b': SICK, 'node-a': HEALTHY, 'node-c': NO_DRIVER, 'node-d': None})
    assert [line.split() for line in lines] == [
        ['HOST', 'GPU', 'NAME', 'STATUS', 'FAILING', 'CHECKS'],
        ['node-a', '0', 'NVIDIA', 'H200', 'ok', '-'],
        ['node-b', '-', '-', 'warn', 'xid'],
        ['node-b', '0', 'NVIDIA', 'A100-SXM4-80GB', 'ok', '-'],
        ['node-b', '1', '?', 'fail', 'xid,', 'pcie_link_width'],
        ['node-c', '-', '-', 'fail', 'driver_loaded'],
        ['node-d', '-', '-', 'error', '-'],
    ]
    assert lines[1] == '%-24s %-3s %-28s %-6s %s' % ('node-a', 0, 'NVIDIA H200', 'ok', '-')


@pytest.mark.parametrize('value', [[HEALTHY], 'node-a', {'node-a': 'ok'}])
def test_health_table_refuses(value):
    with pytest.raises(AnsibleFilterError, match='health_table'):
        FILTER(value)
