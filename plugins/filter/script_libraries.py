# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter script_libraries (documented in script_libraries.yml): the entries of gpuops.gpu_server.config_files that put
the collection's module_utils beside a host script, in their package layout (common's tasks_from=script_libraries)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter.collection_path import COLLECTION_ROOT

# The package layout the scripts import from: <script dir>/ansible_collections/gpuops/gpu_server/plugins/module_utils.
PACKAGE_DIRS = ('ansible_collections', 'gpuops', 'gpu_server', 'plugins', 'module_utils')
# A module_utils file of this collection: private (leading underscore), lower-case ASCII, .py.
_NAME = re.compile(r'_[a-z0-9_]+\.py\Z', re.ASCII)
# What each shipped directory and file gets (root's, readable by the users the scripts run as, SlurmUser included).
OWNER = 'root'
GROUP = 'root'
DIR_MODE = '0755'
FILE_MODE = '0644'


def _kind(value):
    """The plain type name of VALUE (Ansible hands over its own subclasses of str, list and dict)."""
    for kind in (bool, int, float, str, bytes, list, tuple, dict):
        if isinstance(value, kind):
            return kind.__name__
    return type(value).__name__


def _fail(message):
    raise AnsibleFilterError('script_libraries: ' + message)


def _script_dir(value):
    if not isinstance(value, str):
        _fail('the script directory (common_script_dir) must be an absolute path as a string, got %s %r'
              % (_kind(value), value))
    value = str(value)
    if not value.startswith('/') or value != os.path.normpath(value) or value == '/' or value.startswith('//'):
        _fail('the script directory (common_script_dir) must be an absolute, normalised path other than / '
              '(no "..", ".", "//" or trailing "/"), got %r' % (value,))
    if any(not char.isprintable() or char.isspace() for char in value):
        _fail('the script directory (common_script_dir) %r holds a blank or a control character (a line break?)'
              % (value,))
    return value


def _names(value, source):
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple)):
        _fail('the module_utils files (common_script_module_utils) must be a list of file names such as '
              '["_command.py"], got %s %r' % (_kind(value), value))
    if not value:
        _fail('the module_utils files (common_script_module_utils) are empty: a script that imports nothing of '
              'module_utils needs no call')
    seen = set()
    for index, name in enumerate(value):
        name = str(name) if isinstance(name, str) else name
        where = 'common_script_module_utils[%d]' % index
        if not isinstance(name, str) or not _NAME.match(name):
            _fail('%s is %r: expected the name of a file of the collection\'s plugins/module_utils, such as '
                  '"_command.py" (no directory, lower-case ASCII)' % (where, name))
        if name in seen:
            _fail('%s lists %s a second time' % (where, name))
        seen.add(name)
        path = os.path.join(source, name)
        if not os.path.isfile(path):
            _fail('%s: %s is not a file of the collection installed at %s: correct the name, or install the whole '
                  'gpuops.gpu_server collection, not a role alone' % (where, name, os.path.dirname(source)))
    return [str(name) for name in value]


def script_libraries(names, script_dir, root=COLLECTION_ROOT):
    """The config_files entries that copy NAMES (file names in ROOT/plugins/module_utils) to SCRIPT_DIR in their package
    layout: each directory from SCRIPT_DIR down to module_utils, then each file with its content, in NAMES' order."""
    script_dir = _script_dir(script_dir)
    source = os.path.join(root, 'plugins', 'module_utils')
    names = _names(names, source)
    entries, path = [], script_dir
    for part in ('',) + PACKAGE_DIRS:
        path = os.path.join(path, part) if part else path
        entries.append({'path': path, 'state': 'directory', 'owner': OWNER, 'group': GROUP, 'mode': DIR_MODE})
    for name in names:
        try:
            with open(os.path.join(source, name), encoding='utf-8', newline='') as handle:
                content = handle.read()
        except (OSError, UnicodeDecodeError) as e:
            _fail('cannot read %s of the collection as UTF-8 text: %s' % (os.path.join(source, name), e))
        entries.append({'path': os.path.join(path, name), 'content': content,
                        'owner': OWNER, 'group': GROUP, 'mode': FILE_MODE})
    return entries


class FilterModule(object):
    def filters(self):
        return {'script_libraries': script_libraries}
