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

What is read is strict JSON (RFC 8259) as Docker reads it, so that what is written back is too: no ``NaN`` or
``Infinity``, no number too large for a double (``1e400``), no key twice in one object, no nesting deeper than
MAX_DEPTH. Every function here recurses once per level of nesting, so that bound also keeps them far from Python's
recursion limit.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json
import math
import re
import reprlib

from ansible_collections.gpuops.gpu_server.plugins.module_utils._json_text import too_deep

# No daemon.json nests more than a few levels (daemon.json's deepest keys, such as runtimes.nvidia.args, are at 3).
MAX_DEPTH = 64

# JSON whitespace (RFC 8259): str.strip() would also take away characters such as U+00A0 or U+2028.
_JSON_WHITESPACE = ' \t\n\r'
# Unpaired surrogates, which json.loads makes of escapes such as "\ud800" and UTF-8 cannot encode.
_SURROGATE = re.compile('[\ud800-\udfff]')


class JsonDocumentError(ValueError):
    """The existing document is not a JSON object."""


def loads(text, source='the file'):
    """Parse a document that must hold a JSON object. Empty (or only JSON whitespace) text is an empty object.

    Raises JsonDocumentError naming ``source``, the line and the column of the first error; also for nesting deeper
    than MAX_DEPTH, and for numbers that are not finite doubles (``NaN``, ``Infinity``, ``1e400``).
    """
    if not text.strip(_JSON_WHITESPACE):
        return {}
    _check_nesting(text, source)
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant,
                          parse_float=_finite_float)
    except _StrictJsonError as e:
        raise JsonDocumentError('%s is not valid JSON: %s' % (source, e))
    except RecursionError:   # not reached: _check_nesting() bounds the depth first
        raise JsonDocumentError('%s nests too deep to be read' % (source,))
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


class _StrictJsonError(ValueError):
    """Text that Python's json module reads but JSON (RFC 8259) and Docker do not accept."""


def _no_duplicate_keys(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            raise _StrictJsonError('the key %s appears twice in one object (Docker refuses duplicate keys)'
                                   % json.dumps(key))
        result[key] = value
    return result


def _no_constant(name):
    raise _StrictJsonError('%s is not a JSON value (JSON numbers are finite)' % name)


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise _StrictJsonError('the number %s is out of range for a double (Docker refuses it, and it would be '
                               'written back as %s, which is not JSON)' % (text[:40], 'Infinity' if value > 0 else '-Infinity'))
    return value


def _check_nesting(text, source):
    """JsonDocumentError when brackets (outside strings) nest deeper than MAX_DEPTH; linear, no recursion."""
    pos = too_deep(text, MAX_DEPTH)
    if pos is not None:
        raise JsonDocumentError('%s nests arrays and objects deeper than %d levels (line %d, column %d)'
                                % (source, MAX_DEPTH, text.count('\n', 0, pos) + 1, pos - text.rfind('\n', 0, pos)))


def nesting_depth(value, limit=MAX_DEPTH):
    """How deeply ``value`` nests dicts and lists (a scalar is 0), counted without recursion; stops at ``limit`` + 1."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if level > deepest:
                deepest = level
                if deepest > limit:
                    break
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def check_json(value, what='settings'):
    """Raise ValueError when ``value`` cannot be written as JSON (NaN, Infinity, a non-string key, a set ...) or
    nests dicts and lists deeper than MAX_DEPTH."""
    if nesting_depth(value) > MAX_DEPTH:
        raise ValueError('%s nest dicts and lists deeper than %d levels' % (what, MAX_DEPTH))
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        raise ValueError('%s cannot be written as JSON: %s' % (what, e))
    _check_keys(value, what)


def _check_keys(value, what):
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError('%s cannot be written as JSON: the key %r is not a string' % (what, key))
            _check_keys(item, what)
    elif isinstance(value, list):
        for item in value:
            _check_keys(item, what)


def json_kind(value):
    """The JSON type of a value, telling booleans, integers and other numbers apart (``1`` is not ``true``)."""
    if isinstance(value, bool):
        return 'boolean'
    if isinstance(value, int):
        return 'integer'
    if isinstance(value, float):
        return 'float'
    return _json_type(value) if not isinstance(value, dict) else 'object'


def json_equal(a, b):
    """Equality of two JSON values by JSON type and value: ``1`` differs from ``true`` and ``3.0`` from ``3``.

    Python's ``==`` says ``1 == True`` and ``3.0 == 3``, but Docker reads them as different values (and
    refuses some). Object key order does not matter; array order does.
    """
    kind = json_kind(a)
    if kind != json_kind(b):
        return False
    if kind == 'object':
        return len(a) == len(b) and all(k in b and json_equal(v, b[k]) for k, v in a.items())
    if kind == 'array':
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return a == b


def dumps(data):
    """The text written to disk: two-space indentation, keys in their order, a final newline.

    Always valid JSON and valid UTF-8: ValueError for NaN or Infinity; an unpaired surrogate (read from an escape such
    as ``"\\ud800"``) is written as that escape again.
    """
    text = json.dumps(data, indent=2, ensure_ascii=False, separators=(',', ': '), allow_nan=False) + '\n'
    return _SURROGATE.sub(lambda m: '\\u%04x' % ord(m.group()), text)


def parse_path(path):
    """A key path: a list of keys, or a string whose keys are separated by dots (``log-opts.max-size``).

    Use the list form for a key that itself contains a dot.
    """
    if isinstance(path, (list, tuple)):
        keys = list(path)
    elif isinstance(path, str):
        keys = path.split('.')
    else:
        raise ValueError('a key path must be a string ("log-opts.max-size") or a list of keys, got %s'
                         % (reprlib.repr(path),))
    if not keys or any(not isinstance(k, str) or k == '' for k in keys):
        raise ValueError('key path %s has an empty or non-string key' % (reprlib.repr(path),))
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
