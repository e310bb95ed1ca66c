# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""docker_daemon_config, property-based (issue 29): whatever the existing file and the settings hold, the module
either fails with a message and leaves the file as it was, or writes a file that strict JSON reads back as the
configuration it returns. Never a traceback, never Infinity or NaN on disk.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import contextlib
import io
import json
import math
import os
import tempfile

from hypothesis import given, settings, strategies as st

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _json_merge
from ansible_collections.gpuops.gpu_server.plugins.modules import docker_daemon_config
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import _module_args


# ---------------------------------------------------------------------------------------------------------------
# Strategies

KEYS = st.one_of(st.sampled_from(['log-driver', 'log-opts', 'max-size', 'runtimes', 'nvidia', 'a', 'a.b', '']),
                 st.text(max_size=8))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=-10 ** 30, max_value=10 ** 30),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=10)
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=5)


def _nest(depth, leaf, kind):
    for _level in range(depth):
        leaf = [leaf] if kind == 'list' else {'k': leaf}
    return leaf


# Settings: ordinary objects; some with a value JSON cannot hold; some nested near and past MAX_DEPTH.
SETTINGS = st.one_of(
    OBJECTS, OBJECTS,
    st.builds(lambda obj, bad: dict(obj, bad=bad), OBJECTS, st.sampled_from([float('nan'), float('inf'), -float('inf')])),
    st.builds(lambda depth, kind: {'deep': _nest(depth, 1, kind)}, st.integers(min_value=1, max_value=120),
              st.sampled_from(['list', 'dict'])))
# Remove: mostly key paths, sometimes anything at all.
REMOVE = st.one_of(
    st.just([]), st.lists(st.sampled_from(['log-opts', 'log-opts.max-size', 'a', ['a.b'], 'runtimes.nvidia']), max_size=2),
    st.lists(st.one_of(KEYS, st.lists(KEYS, max_size=3), VALUES), max_size=2))

NUMBERS = st.one_of(
    st.sampled_from(['1e400', '-1e400', '1E+309', '1e308', '1e-400', '-0', '0.0', 'NaN', 'Infinity', '-Infinity',
                     '012', '1.', '.5', '0x10', '1_000']),
    st.builds(lambda m, e: '%de%d' % (m, e), st.integers(-99, 99), st.integers(-1000, 1000)),
    st.integers(min_value=-10 ** 60, max_value=10 ** 60).map(str))


def _deep_text(depth, opener, closer, closed):
    return '{"x": ' + opener * depth + '1' + (closer * depth if closed else '') + '}'


# The existing file's text: JSON objects, JSON that is not an object, JSON-ish text, junk.
TEXTS = st.one_of(
    OBJECTS.map(json.dumps), OBJECTS.map(lambda o: json.dumps(o, indent=4, ensure_ascii=False)),
    VALUES.map(json.dumps),
    st.builds(lambda k, n: '{"%s": %s}' % (k, n), st.sampled_from(['a', 'max-concurrent-downloads']), NUMBERS),
    st.builds(lambda k, v, w: '{%s: %s, %s: %s}' % (json.dumps(k), json.dumps(v), json.dumps(k), json.dumps(w)),
              KEYS, VALUES, VALUES),
    st.builds(_deep_text, st.integers(min_value=1, max_value=5000), st.sampled_from(['[', '{"a": ', '[{"b": ']),
              st.sampled_from([']', '}', '}]']), st.booleans()),
    st.sampled_from(['', ' \n', '\u00a0', '\u2028', '\x0b', '\ufeff{}', '{"a": "\\ud800"}', '{"a": "\\udc00\\ud800"}',
                     '{"a": "\\ud83d\\ude00"}', '{"a": 1} {"b": 2}', '{"a": 1,}', '[]', 'null', '"{}"']),
    st.text(max_size=60))
CONTENTS = st.one_of(TEXTS.map(lambda t: t.encode('utf-8')), TEXTS.map(lambda t: t.encode('utf-8')),
                     st.binary(max_size=60))


# ---------------------------------------------------------------------------------------------------------------
# Running the module

def run(args):
    """The module's result: exit_json's or fail_json's JSON (a traceback fails the test)."""
    out = io.StringIO()
    with _module_args(args), contextlib.redirect_stdout(out):
        try:
            docker_daemon_config.main()
        except SystemExit:
            pass
        else:
            raise AssertionError('the module returned without exit_json or fail_json')
    return json.loads(out.getvalue())


def _refuse_constant(name):
    raise AssertionError('%s written to the file' % name)


def _finite(text):
    value = float(text)
    assert math.isfinite(value), 'the number %s written to the file' % text
    return value


def strict_loads(raw):
    """What Docker would read: UTF-8, JSON without NaN, Infinity or numbers out of a double's range."""
    return json.loads(raw.decode('utf-8'), parse_constant=_refuse_constant, parse_float=_finite)


def check_outcome(path, before, result, settings_):
    """Failed with a message and the file as it was, or the file is strict JSON and equals the returned config."""
    if result.get('failed'):
        assert isinstance(result.get('msg'), str) and result['msg'].strip(), result
        assert 'Traceback' not in result['msg'] and 'exception' not in result, result
        if before is None:
            assert not os.path.exists(path)
        else:
            with open(path, 'rb') as f:
                assert f.read() == before
        assert sorted(os.listdir(os.path.dirname(path))) == ([os.path.basename(path)] if before is not None else [])
        return False
    with open(path, 'rb') as f:
        raw = f.read()
    if not result['changed']:
        assert raw == before, 'an unchanged file is not rewritten'
        if not raw.strip(b' \t\n\r'):
            assert result['config'] == {}, 'an empty file is an empty object, and is left as it is'
            return True
    on_disk = strict_loads(raw)
    assert isinstance(on_disk, dict)
    assert _json_merge.json_equal(on_disk, result['config'])
    for key, value in settings_.items():
        if not isinstance(value, dict):
            assert _json_merge.json_equal(on_disk[key], value), key
    assert os.listdir(os.path.dirname(path)) == [os.path.basename(path)]
    return True


# ---------------------------------------------------------------------------------------------------------------
# Properties

@settings(max_examples=120, deadline=None, database=None)
@given(content=st.one_of(st.none(), OBJECTS.map(lambda o: json.dumps(o).encode('utf-8')), CONTENTS), settings_=SETTINGS,
       remove=REMOVE)
def test_any_existing_file_and_settings_give_a_message_or_strict_json(content, settings_, remove):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'daemon.json')
        if content is not None:
            with open(path, 'wb') as f:
                f.write(content)
        result = run({'path': path, 'settings': settings_, 'remove': remove})
        if check_outcome(path, content, result, settings_):
            # Once written, the file is one the module reads again: the same arguments change nothing.
            again = run({'path': path, 'settings': settings_, 'remove': remove})
            assert not again.get('failed') and again['changed'] is False, again


@settings(max_examples=200, deadline=None, database=None)
@given(text=TEXTS)
def test_loads_gives_an_object_or_its_own_error_and_dumps_gives_strict_json(text):
    try:
        data = _json_merge.loads(text, source='daemon.json')
    except _json_merge.JsonDocumentError as e:
        assert str(e).startswith('daemon.json ')
        return
    assert isinstance(data, dict)
    assert _json_merge.nesting_depth(data) <= _json_merge.MAX_DEPTH
    written = _json_merge.dumps(data).encode('utf-8')
    assert _json_merge.json_equal(strict_loads(written), data)
    assert _json_merge.json_equal(_json_merge.loads(written.decode('utf-8')), data)


@settings(max_examples=200, deadline=None, database=None)
@given(value=st.one_of(SETTINGS, VALUES, st.builds(_nest, st.integers(0, 3000), SCALARS, st.sampled_from(['list', 'dict']))))
def test_check_json_gives_value_error_or_writable_json(value):
    try:
        _json_merge.check_json(value)
    except ValueError as e:
        assert str(e).startswith('settings ')
        return
    assert _json_merge.nesting_depth(value) <= _json_merge.MAX_DEPTH
    strict_loads(_json_merge.dumps(value).encode('utf-8'))
