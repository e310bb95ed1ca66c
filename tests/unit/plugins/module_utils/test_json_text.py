# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils._json_text import too_deep


@pytest.mark.parametrize('text, limit, expected', [
    ('{}', 1, None),
    ('{"a": [1, {"b": 2}]}', 3, None),
    ('{"a": [1, {"b": 2}]}', 2, 10),
    ('["[[[[", "{{{{"]', 1, None),           # brackets inside strings do not nest
    ('["\\"[[[[", [[1]]]', 2, 12),            # an escaped quote does not end the string
    ('"unterminated [[[[', 0, None),          # an unterminated string runs to the end
    ('[' * 60000, 32, 32),                    # 60 KB of brackets: found without recursion
    ('', 0, None),
])
def test_too_deep_finds_the_first_bracket_past_the_limit(text, limit, expected):
    assert too_deep(text, limit) == expected
