# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 29, property-based, at the module's boundary: any option values give a result or a clear failure
(``fail_json``), never a traceback."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from hypothesis import HealthCheck, given, settings, strategies as st

from ansible_collections.gpuops.gpu_server.plugins.modules import cuda_compat

FOREIGN = ['\u0665\u0665\u0660', '\uff15\uff15\uff10', '\u0661\u0662.\u0664', '\u0665\u0665\u0660.54.15']
versions = st.one_of(st.none(), st.sampled_from(['12.4', '11.8', '13.0', '12.2.2', '550.54.15', '470', '580',
                                                 '550-server', '2.4.1', '1.13.1+cu117', '', ' ', 'latest'] + FOREIGN),
                     st.from_regex(r'[0-9]{1,4}(\.[0-9]{1,3}){0,3}', fullmatch=True), st.text(max_size=10),
                     st.integers(-10, 10 ** 6), st.floats(allow_nan=False, allow_infinity=False),
                     st.builds(lambda n: '9' * n, st.integers(4290, 4400)))
gpus = st.lists(st.dictionaries(st.sampled_from(['architecture', 'pci_device_id', 'name', 'product']),
                                st.one_of(st.text(max_size=12), st.sampled_from(['Hopper', '10de:2330', 'Tesla K80']),
                                          st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2)),
                                max_size=3), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.fixed_dictionaries(
    {'cuda_version': versions, 'driver_branch': versions, 'driver_version': versions, 'torch_version': versions},
    optional={'architectures': st.lists(st.one_of(st.sampled_from(['Hopper', 'Kepler', 'ada', 'Rubin']),
                                                  st.text(max_size=8)), max_size=3),
              'gpus': gpus, 'kernel_module': st.sampled_from(['open', 'proprietary']),
              'allow_minor_compat': st.booleans(), 'fail_on_incompatible': st.booleans()}))
def test_any_options_give_a_result_or_a_clear_failure(run_module, args):
    args = dict((k, v) for k, v in args.items() if v is not None)
    if 'architectures' not in args and 'gpus' not in args:
        args['architectures'] = ['Hopper']          # never read the machine running the tests
    result = run_module(cuda_compat.main, args)
    if result.failed:
        assert isinstance(result['msg'], str) and 0 < len(result['msg']) < 2000, result['msg'][:300]
        assert 'Traceback' not in result['msg']
    else:
        assert result['verdict'] in ('compatible', 'incompatible', 'unknown')
