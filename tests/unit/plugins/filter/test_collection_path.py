# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import collection_path
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log

FILTER = collection_path.FilterModule().filters()['collection_path']


def test_module_utils_is_where_python_imports_the_parsers_from():
    assert FILTER('plugins/module_utils') == os.path.dirname(_kernel_log.__file__)
    assert os.path.isfile(os.path.join(FILTER('plugins/module_utils'), '_data_xid.py'))


def test_a_file_inside_the_collection(tmp_path):
    (tmp_path / 'plugins').mkdir()
    (tmp_path / 'plugins' / 'x.py').write_text('')
    assert collection_path.collection_path('plugins/./x.py', root=str(tmp_path)) == str(tmp_path / 'plugins' / 'x.py')


@pytest.mark.parametrize('relative,fragment', [
    ('plugins/module_utils/_missing.py', 'is not part of the gpuops.gpu_server collection'),
    ('../../etc', 'is not a path inside the collection'), ('/etc', 'is not a path inside the collection'),
    ('', 'expected a path inside the collection'), (None, 'expected a path inside the collection'),
])
def test_collection_path_refuses(relative, fragment):
    with pytest.raises(AnsibleFilterError, match='collection_path') as e:
        FILTER(relative)
    assert fragment in str(e.value)
