# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import script_libraries
from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

FILTER = script_libraries.FilterModule().filters()['script_libraries']
LAYOUT = 'ansible_collections/gpuops/gpu_server/plugins/module_utils'


def test_directories_first_then_the_files_with_their_bytes():
    entries = FILTER(['_json_text.py', '_command.py'], '/usr/local/lib/gpuops-tool')
    dirs = ['/usr/local/lib/gpuops-tool'] + ['/usr/local/lib/gpuops-tool/' + '/'.join(LAYOUT.split('/')[:n])
                                             for n in range(1, 6)]
    assert [e['path'] for e in entries] == dirs + ['/usr/local/lib/gpuops-tool/%s/%s' % (LAYOUT, name)
                                                   for name in ('_json_text.py', '_command.py')]
    for entry in entries[:6]:
        assert entry == {'path': entry['path'], 'state': 'directory', 'owner': 'root', 'group': 'root', 'mode': '0755'}
    for entry, name in zip(entries[6:], ('_json_text.py', '_command.py')):
        assert set(entry) == {'path', 'content', 'owner', 'group', 'mode'}
        assert (entry['owner'], entry['group'], entry['mode']) == ('root', 'root', '0644')
        with open(os.path.join(ROOT, 'plugins', 'module_utils', name), 'rb') as f:
            assert entry['content'].encode('utf-8') == f.read()


def test_line_endings_and_non_ascii_text_are_kept(tmp_path):
    (tmp_path / 'plugins' / 'module_utils').mkdir(parents=True)
    (tmp_path / 'plugins' / 'module_utils' / '_x.py').write_bytes('a = "µ"\r\nb = 1\n'.encode('utf-8'))
    entry = script_libraries.script_libraries(['_x.py'], '/opt/t', root=str(tmp_path))[-1]
    assert entry['content'] == 'a = "µ"\r\nb = 1\n'


def test_a_file_that_is_not_utf8_fails_with_its_path(tmp_path):
    (tmp_path / 'plugins' / 'module_utils').mkdir(parents=True)
    (tmp_path / 'plugins' / 'module_utils' / '_x.py').write_bytes(b'\xff\xfe')
    with pytest.raises(AnsibleFilterError, match=r'cannot read .*_x\.py of the collection as UTF-8'):
        script_libraries.script_libraries(['_x.py'], '/opt/t', root=str(tmp_path))


@pytest.mark.parametrize('names, fragment', [
    ('_command.py', 'must be a list of file names'),
    (b'_command.py', 'must be a list of file names'),
    ({'_command.py': 1}, 'must be a list of file names'),
    (None, 'must be a list of file names'),
    (7, 'must be a list of file names'),
    ([], 'are empty'),
    ([None], "common_script_module_utils[0] is None"),
    ([1], "common_script_module_utils[0] is 1"),
    ([True], "common_script_module_utils[0] is True"),
    ([['_command.py']], "common_script_module_utils[0] is ['_command.py']"),
    (['_command.py', ''], "common_script_module_utils[1] is ''"),
    ([' _command.py'], "is ' _command.py'"),
    (['_command.py '], "is '_command.py '"),
    (['_command.py\n'], "is '_command.py\\n'"),
    (['_command\r.py'], "is '_command\\r.py'"),
    (['_Command.py'], "is '_Command.py'"),
    (['command.py'], "is 'command.py'"),
    (['_command'], "is '_command'"),
    (['_command.pyc'], "is '_command.pyc'"),
    (['_data_\u0661.py'], 'lower-case ASCII'),  # an Arabic-Indic digit one
    (['../_command.py'], "is '../_command.py'"),
    (['module_utils/_command.py'], "is 'module_utils/_command.py'"),
    (['/etc/passwd'], "is '/etc/passwd'"),
    (['__init__.py'], 'is not a file of the collection'),
    (['_missing.py'], 'common_script_module_utils[0]: _missing.py is not a file of the collection'),
    (['_command.py', '_json_text.py', '_command.py'], 'common_script_module_utils[2] lists _command.py a second time'),
])
def test_bad_names_are_refused_naming_the_entry(names, fragment):
    with pytest.raises(AnsibleFilterError) as e:
        FILTER(names, '/usr/local/lib/gpuops-tool')
    assert str(e.value).startswith('script_libraries: ')
    assert fragment in str(e.value)


def test_a_directory_with_a_module_utils_name_is_not_a_file(tmp_path):
    (tmp_path / 'plugins' / 'module_utils' / '_dir.py').mkdir(parents=True)
    with pytest.raises(AnsibleFilterError, match=r'_dir\.py is not a file of the collection'):
        script_libraries.script_libraries(['_dir.py'], '/opt/t', root=str(tmp_path))


@pytest.mark.parametrize('script_dir, fragment', [
    (None, 'must be an absolute path as a string, got NoneType'),
    (1, 'must be an absolute path as a string, got int'),
    (['/opt/t'], 'must be an absolute path as a string, got list'),
    ('', 'absolute, normalised path'),
    ('/', 'absolute, normalised path other than /'),
    ('//opt/t', 'absolute, normalised path'),
    ('opt/t', 'absolute, normalised path'),
    ('/opt/t/', 'absolute, normalised path'),
    ('/opt/./t', 'absolute, normalised path'),
    ('/opt/../etc', 'absolute, normalised path'),
    ('/opt//t', 'absolute, normalised path'),
    ('/opt/t\n', 'a blank or a control character'),
    ('/opt/t\r', 'a blank or a control character'),
    ('/opt/my tool', 'a blank or a control character'),
    ('/opt/t\u00a0', 'a blank or a control character'),
])
def test_bad_script_directories_are_refused(script_dir, fragment):
    with pytest.raises(AnsibleFilterError) as e:
        FILTER(['_command.py'], script_dir)
    assert 'common_script_dir' in str(e.value) and fragment in str(e.value)
