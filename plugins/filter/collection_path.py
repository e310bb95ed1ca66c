# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter collection_path (documented in collection_path.yml)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

from ansible.errors import AnsibleFilterError

# Ansible loaded this file from the installed collection: <collection>/plugins/filter/collection_path.py.
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def collection_path(relative, root=COLLECTION_ROOT):
    """Absolute path on the controller of ``relative`` inside the installed gpuops.gpu_server collection."""
    if not isinstance(relative, str) or not relative.strip():
        raise AnsibleFilterError('collection_path: expected a path inside the collection such as '
                                 '"plugins/module_utils", got %r' % (relative,))
    normal = os.path.normpath(relative)
    if os.path.isabs(normal) or normal.split(os.sep)[0] == os.pardir:
        raise AnsibleFilterError('collection_path: %r is not a path inside the collection' % (relative,))
    path = os.path.join(root, normal)
    if not os.path.exists(path):
        raise AnsibleFilterError('collection_path: %s is not part of the gpuops.gpu_server collection installed at %s: '
                                 'install the whole collection, not a role alone' % (relative, root))
    return path


class FilterModule(object):
    def filters(self):
        return {'collection_path': collection_path}
