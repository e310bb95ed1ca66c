# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Merge settings into a JSON object document (Docker's daemon.json): pure functions, no Ansible objects.

Rules, in the order :func:`apply` uses them:

1. Removal: every key path in ``remove`` is deleted; a path that is not there is ignored.
2. Merge: objects merge key by key, recursively; everything else (strings, numbers, booleans, null and
   *arrays*) replaces the value that was there. Arrays are replaced, never concatenated: that is the only
   way a user can shrink a list such as ``registry-mirrors`` again.

Keys the settings do not name are kept as they were, in their order.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json


class JsonDocumentError(ValueError):
    """The existing document is not a JSON object."""


def loads(text, source='the file'):
    """Parse a document that must hold a JSON object. Empty (or only whitespace) text is an empty object.

    Raises JsonDocumentError naming ``source``, the line and the column of the first error.
    """
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as e:
        line = getattr(e, 'lineno', None)
        col = getattr(e, 'colno', None)
        where = ' (line %s, column %s)' % (line, col) if line is not None else ''
        reason = getattr(e, 'msg', None) or str(e)
        raise JsonDocumentError('%s is not valid JSON%s: %s' % (source, where, reason))
    if not isinstance(data, dict):
        raise JsonDocumentError('%s holds a JSON %s, not an object ({...}) as a daemon configuration must'
                                % (source, _json_type(data)))
    return data


def dumps(data):
    """The text written to disk: two-space indentation, keys in their order, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False, separators=(',', ': ')) + '\n'


def parse_path(path):
    """A key path: a list of keys, or a string whose keys are separated by dots (``log-opts.max-size``).

    Use the list form for a key that itself contains a dot.
    """
    if isinstance(path, (list, tuple)):
        keys = list(path)
    elif isinstance(path, str):
        keys = path.split('.')
    else:
        raise ValueError('a key path must be a string ("log-opts.max-size") or a list of keys, got %r' % (path,))
    if not keys or any(not isinstance(k, str) or k == '' for k in keys):
        raise ValueError('key path %r has an empty or non-string key' % (path,))
    return keys


def merge(base, settings):
    """Return a new object: ``settings`` merged into ``base`` (objects recursively, all else replaced)."""
    result = copy.deepcopy(base)
    for key, value in settings.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def remove(base, paths):
    """Return ``(new object, removed paths)``; every path is a list of keys (see :func:`parse_path`)."""
    result = copy.deepcopy(base)
    removed = []
    for keys in paths:
        parent = result
        for key in keys[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and keys[-1] in parent:
            del parent[keys[-1]]
            removed.append('.'.join(keys))
    return result, removed


def apply(base, settings=None, remove_paths=None):
    """Removal, then merge. Returns ``(new object, removed paths)``."""
    result, removed = remove(base, [parse_path(p) for p in (remove_paths or [])])
    return merge(result, settings or {}), removed


def _json_type(value):
    if isinstance(value, list):
        return 'array'
    if isinstance(value, str):
        return 'string'
    if isinstance(value, bool):
        return 'boolean'
    if value is None:
        return 'null'
    return 'number'
