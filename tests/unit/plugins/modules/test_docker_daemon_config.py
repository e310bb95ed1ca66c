# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""docker_daemon_config: merge cases as data (merge_cases.yml), then check mode, diff, backup, errors."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import errno
import fcntl
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _json_merge
from ansible_collections.gpuops.gpu_server.plugins.modules import docker_daemon_config
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path, load_yaml, make_executable, snapshot

CASES = load_yaml('docker_daemon_config', 'merge_cases.yml')
LOG_SETTINGS = {'log-driver': 'json-file', 'log-opts': {'max-size': '100m', 'max-file': '3'}}


def place(tmp_path, fixture, name='daemon.json'):
    """Copy a fixture into a fresh directory; return the path the module will manage."""
    path = tmp_path / 'etc' / 'docker' / name
    if fixture is not None:
        path.parent.mkdir(parents=True)
        shutil.copy(fixture_path('docker_daemon_config', fixture), str(path))
    return path


@pytest.fixture
def run(run_module):
    def runner(**args):
        return run_module(docker_daemon_config.main, args)
    return runner


@pytest.mark.parametrize('case', CASES, ids=[c['id'] for c in CASES])
def test_merge_case(tmp_path, run, case):
    path = place(tmp_path, case['existing'])
    before = snapshot(path) if case['existing'] else None
    expected = case.get('config')
    if expected is None:   # no change expected: the file's object stays what it was
        expected = _json_merge.loads(path.read_text())

    result = run(path=str(path), settings=case.get('settings', {}), remove=case.get('remove', []))

    assert not result.failed, result
    assert result['changed'] is case['changed']
    assert result['config'] == expected
    on_disk = json.loads(path.read_text())
    assert on_disk == expected
    # Keys the module did not add keep their place: the user's order is not shuffled.
    assert list(on_disk) == list(expected)
    if not case['changed']:
        assert snapshot(path) == before, 'an unchanged file must not be rewritten (formatting kept)'
    # Second run with the same arguments: nothing left to do.
    again = run(path=str(path), settings=case.get('settings', {}), remove=case.get('remove', []))
    assert again['changed'] is False


def test_absent_file_created_with_parent_dir_and_mode(tmp_path, run):
    path = place(tmp_path, None)
    assert not path.parent.exists()
    result = run(path=str(path), settings=LOG_SETTINGS)
    assert result['changed'] and result['created']
    assert stat.S_IMODE(os.stat(str(path)).st_mode) == 0o644
    assert stat.S_IMODE(os.stat(str(path.parent)).st_mode) & 0o755 == 0o755
    text = path.read_text()
    assert text.endswith('}\n') and json.loads(text) == LOG_SETTINGS
    # No temporary files left next to it.
    assert os.listdir(str(path.parent)) == ['daemon.json']


def test_mode_option_applies_to_existing_file(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    os.chmod(str(path), 0o600)
    result = run(path=str(path), mode='0644')
    assert result['changed']
    assert stat.S_IMODE(os.stat(str(path)).st_mode) == 0o644


@pytest.mark.parametrize('fixture, message', [
    ('invalid_trailing_comma.json', r'is not valid JSON \(line 3, column 34\)'),
    ('array_document.json', r'holds a JSON array, not an object'),
])
def test_invalid_existing_file_fails_and_stays_untouched(tmp_path, run, fixture, message):
    path = place(tmp_path, fixture)
    before = snapshot(path)
    result = run(path=str(path), settings=LOG_SETTINGS, backup=True)
    assert result.failed
    assert str(path) in result['msg']
    assert 'left untouched' in result['msg']
    assert re.search(message, result['msg']), result['msg']
    assert snapshot(path) == before
    assert os.listdir(str(path.parent)) == [path.name], 'no backup or temporary file for a refused run'


def test_check_mode_reports_but_writes_nothing(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    before = snapshot(path)
    result = run(path=str(path), settings=LOG_SETTINGS, remove=['data-root'], _ansible_check_mode=True)
    assert result['changed'] is True
    assert result['removed'] == ['data-root']
    assert 'data-root' not in result['config'] and result['config']['log-driver'] == 'json-file'
    assert snapshot(path) == before


def test_check_mode_on_absent_file_creates_nothing(tmp_path, run):
    path = place(tmp_path, None)
    result = run(path=str(path), settings=LOG_SETTINGS, _ansible_check_mode=True)
    assert result['changed'] is True and result['created'] is True
    assert not path.parent.exists(), 'check mode must not create the directory'


def test_check_mode_unchanged(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    result = run(path=str(path), settings={'data-root': '/srv/docker'}, _ansible_check_mode=True)
    assert result['changed'] is False


def test_diff_shows_before_and_after_text(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    original = path.read_text()
    result = run(path=str(path), settings={'default-shm-size': '8G'}, _ansible_diff=True)
    diff = result['diff']
    assert diff['before'] == original
    assert diff['after'] == path.read_text()
    assert '"default-shm-size": "8G"' in diff['after'] and 'default-shm-size' not in diff['before']
    assert diff['after_header'] == str(path)


def test_diff_in_check_mode_for_absent_file(tmp_path, run):
    path = place(tmp_path, None)
    result = run(path=str(path), settings=LOG_SETTINGS, _ansible_diff=True, _ansible_check_mode=True)
    assert result['diff']['before'] == ''
    assert json.loads(result['diff']['after']) == LOG_SETTINGS
    assert 'absent' in result['diff']['before_header']


def test_backup_keeps_the_previous_file(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    original = path.read_bytes()
    result = run(path=str(path), settings=LOG_SETTINGS, backup=True)
    assert result['changed']
    backup = result['backup_file']
    assert os.path.dirname(backup) == str(path.parent)
    with open(backup, 'rb') as f:
        assert f.read() == original
    # No change, no new backup.
    again = run(path=str(path), settings=LOG_SETTINGS, backup=True)
    assert again['changed'] is False and 'backup_file' not in again
    assert len(os.listdir(str(path.parent))) == 2


def test_validate_failure_leaves_file_untouched(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    before = snapshot(path)
    checker = make_executable(tmp_path, 'fake-dockerd', stderr='unknown key "log-driverr"', rc=1)
    result = run(path=str(path), settings={'log-driverr': 'x'}, validate=checker + ' --validate %s', backup=True)
    assert result.failed
    assert 'unknown key "log-driverr"' in result['msg'] and 'exit code 1' in result['msg']
    assert snapshot(path) == before
    assert os.listdir(str(path.parent)) == ['daemon.json']


def test_validate_success_writes(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    checker = make_executable(tmp_path, 'fake-dockerd', rc=0)
    result = run(path=str(path), settings={'log-driver': 'local'}, validate=checker + ' %s')
    assert result['changed'] and json.loads(path.read_text())['log-driver'] == 'local'


def test_bad_remove_path_fails_before_reading(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    result = run(path=str(path), remove=['log-opts..max-size'])
    assert result.failed and 'empty or non-string key' in result['msg']


def test_directory_as_path_fails(tmp_path, run):
    result = run(path=str(tmp_path), settings=LOG_SETTINGS)
    assert result.failed and 'is a directory' in result['msg']


def test_pure_merge_does_not_mutate_inputs():
    base = {'a': {'b': [1]}, 'c': 1}
    settings = {'a': {'d': 2}}
    merged, removed = _json_merge.apply(base, settings, ['c'])
    assert merged == {'a': {'b': [1], 'd': 2}}
    assert removed == ['c']
    assert base == {'a': {'b': [1]}, 'c': 1} and settings == {'a': {'d': 2}}
    merged['a']['b'].append(2)
    assert base['a']['b'] == [1]


# Issue 17: hostile input. Compare JSON types, write through links, no lost updates, clean errors.

@pytest.mark.parametrize('existing,settings,written', [
    ('{"live-restore": 1}', {'live-restore': True}, {'live-restore': True}),
    ('{"live-restore": true}', {'live-restore': 1}, {'live-restore': 1}),
    ('{"max-concurrent-downloads": 3.0}', {'max-concurrent-downloads': 3}, {'max-concurrent-downloads': 3}),
    ('{"a": {"b": [0, 1]}}', {'a': {'b': [False, True]}}, {'a': {'b': [False, True]}}),
])
def test_values_are_compared_by_json_type(tmp_path, run, existing, settings, written):
    path = place(tmp_path, None)
    path.parent.mkdir(parents=True)
    path.write_text(existing)
    result = run(path=str(path), settings=settings)
    assert result['changed'] is True
    on_disk = path.read_text()
    assert on_disk == json.dumps(written, indent=2, separators=(',', ': ')) + '\n'
    assert json.dumps(result['config']) == json.dumps(written)
    assert run(path=str(path), settings=settings)['changed'] is False


def test_json_equal():
    assert _json_merge.json_equal({'a': [1, {'b': None}]}, {'a': [1, {'b': None}]})
    assert _json_merge.json_equal({'a': 1, 'b': 2}, {'b': 2, 'a': 1})
    for a, b in [(1, True), (0, False), (3, 3.0), ([1], [True]), ({'a': 1}, {'a': 1.0}), ('1', 1), (None, False)]:
        assert not _json_merge.json_equal(a, b), (a, b)


def test_symlink_is_written_through(tmp_path, run):
    real = tmp_path / 'srv' / 'daemon.json'
    real.parent.mkdir()
    real.write_text('{"data-root": "/srv/docker"}\n')
    link = tmp_path / 'etc' / 'docker' / 'daemon.json'
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    result = run(path=str(link), settings=LOG_SETTINGS)
    assert result['changed'] and result['target'] == str(real) and result['path'] == str(link)
    assert os.path.islink(str(link)) and os.readlink(str(link)) == str(real)
    assert json.loads(real.read_text()) == dict({'data-root': '/srv/docker'}, **LOG_SETTINGS)
    assert os.listdir(str(link.parent)) == ['daemon.json'] and os.listdir(str(real.parent)) == ['daemon.json']
    assert run(path=str(link), settings=LOG_SETTINGS)['changed'] is False


def test_dangling_symlink_creates_the_target(tmp_path, run):
    real = tmp_path / 'srv' / 'daemon.json'
    link = tmp_path / 'daemon.json'
    link.symlink_to(real)
    result = run(path=str(link), settings=LOG_SETTINGS)
    assert result['changed'] and result['created']
    assert os.path.islink(str(link)) and json.loads(real.read_text()) == LOG_SETTINGS


CONCURRENT_RUN = '''
import json, sys
sys.argv = [sys.argv[0], sys.argv[1]]
from ansible_collections.gpuops.gpu_server.plugins.modules import docker_daemon_config
docker_daemon_config.main()
'''


def _run_at_once(tmp_path, path, settings_list):
    """Run the module in one real process per settings, all at once; validate sleeps between read and rename."""
    slow = tmp_path / 'slow-validate'
    slow.write_text('#!/bin/sh\nsleep 0.5\nexit 0\n')
    slow.chmod(0o755)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = []
    for i, settings in enumerate(settings_list):
        args = tmp_path / ('args%d.json' % i)
        args.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': {
            'path': str(path), 'settings': settings, 'validate': '%s %%s' % slow}}))
        procs.append(subprocess.Popen([sys.executable, '-c', CONCURRENT_RUN, str(args)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, (out, err)
        results.append(json.loads(out))
    return results


def test_concurrent_runs_lose_no_update(tmp_path):
    path = place(tmp_path, 'user_daemon.json')
    original = json.loads(path.read_text())
    results = _run_at_once(tmp_path, path, [{'key-%d' % i: i} for i in range(4)])
    assert json.loads(path.read_text()) == dict(original, **dict(('key-%d' % i, i) for i in range(4)))
    assert all(r['changed'] for r in results)
    assert os.listdir(str(path.parent)) == ['daemon.json']


def test_concurrent_runs_of_the_same_change_report_it_once(tmp_path):
    path = place(tmp_path, 'user_daemon.json')
    results = _run_at_once(tmp_path, path, [{'live-restore': True}] * 3)
    assert sorted(r['changed'] for r in results) == [False, False, True]
    assert json.loads(path.read_text())['live-restore'] is True


def test_lock_timeout_fails_and_writes_nothing(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    before = snapshot(path)
    fd = os.open(str(path.parent), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        start = time.monotonic()
        result = run(path=str(path), settings=LOG_SETTINGS, lock_timeout=1)
        assert time.monotonic() - start < 5
    finally:
        os.close(fd)
    assert result.failed and 'still held the lock' in result['msg'] and 'lock_timeout' in result['msg']
    assert snapshot(path) == before


def test_unwritable_directory_fails_cleanly(tmp_path, run, monkeypatch):
    path = place(tmp_path, 'user_daemon.json')
    before = snapshot(path)

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, 'Read-only file system')
    monkeypatch.setattr(docker_daemon_config.tempfile, 'mkstemp', read_only)
    result = run(path=str(path), settings=LOG_SETTINGS)
    assert result.failed
    assert result['msg'] == 'Could not write %s: [Errno 30] Read-only file system; the file was left untouched' % path
    assert snapshot(path) == before


@pytest.mark.skipif(os.geteuid() == 0, reason='root writes into a read-only directory')
def test_read_only_directory_fails_cleanly(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    before = snapshot(path)
    os.chmod(str(path.parent), 0o555)
    try:
        result = run(path=str(path), settings=LOG_SETTINGS)
    finally:
        os.chmod(str(path.parent), 0o755)
    assert result.failed and 'Could not write %s' % path in result['msg']
    assert snapshot(path) == before


@pytest.mark.parametrize('validate', ['true %s %d', 'true %s %s', 'true %(x)s %s', 'true 100% %s'])
def test_validate_with_another_conversion_fails_cleanly(tmp_path, run, validate):
    path = place(tmp_path, 'user_daemon.json')
    before = snapshot(path)
    result = run(path=str(path), settings=LOG_SETTINGS, validate=validate)
    assert result.failed
    assert 'validate must contain exactly one %s and no other % conversion' in result['msg']
    assert str(path) in result['msg'] and 'left untouched' in result['msg']
    assert snapshot(path) == before
    assert os.listdir(str(path.parent)) == ['daemon.json']


def test_validate_with_a_literal_percent(tmp_path, run):
    path = place(tmp_path, 'user_daemon.json')
    result = run(path=str(path), settings=LOG_SETTINGS, validate='sh -c "test 100%% = 100%%" %s')
    assert not result.failed and result['changed']


@pytest.mark.parametrize('content,message', [
    (b'{"data-root": "/srv/d\xe9j\xe0"}\n', 'is not UTF-8 text'),
    (b'{"max-concurrent-downloads": NaN}\n', 'NaN is not a JSON value'),
    (b'{"a": Infinity}\n', 'Infinity is not a JSON value'),
    (b'{"a": -Infinity}\n', '-Infinity is not a JSON value'),
    (b'{"log-driver": "json-file", "log-driver": "local"}\n', 'the key "log-driver" appears twice'),
    (b'{"log-opts": {"max-size": "1m", "max-size": "2m"}}\n', 'the key "max-size" appears twice'),
])
def test_hostile_existing_file_fails_and_stays_untouched(tmp_path, run, content, message):
    path = place(tmp_path, None)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    before = snapshot(path)
    result = run(path=str(path), settings=LOG_SETTINGS)
    assert result.failed
    assert str(path) in result['msg'] and message in result['msg'] and 'untouched' in result['msg']
    assert snapshot(path) == before


@pytest.mark.parametrize('value', [float('nan'), float('inf')])
def test_settings_that_are_not_json_fail(tmp_path, run, value):
    path = place(tmp_path, 'user_daemon.json')
    before = snapshot(path)
    result = run(path=str(path), settings={'max-concurrent-downloads': value})
    assert result.failed and 'settings cannot be written as JSON' in result['msg']
    assert snapshot(path) == before


def test_negative_lock_timeout_fails(tmp_path, run):
    result = run(path=str(place(tmp_path, 'user_daemon.json')), settings=LOG_SETTINGS, lock_timeout=-1)
    assert result.failed and result['msg'] == 'lock_timeout must be 0 or more seconds, got -1'


# ---------------------------------------------------------------------------------------------------------------
# Issue 29: no parser raises past its boundary, and what is written is always strict JSON.

def _existing(tmp_path, content):
    path = place(tmp_path, None)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    return path


def _strict_loads(text):
    def refuse(name):
        raise ValueError('%s is not JSON' % name)
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize('number', [b'1e400', b'-1e400', b'1E+999', b'123456789e999'])
def test_issue29_a_number_out_of_range_in_the_file_is_refused_untouched(tmp_path, run, number):
    """1e400 was read as inf and written back as Infinity, which neither JSON nor Docker accepts."""
    path = _existing(tmp_path, b'{"max-concurrent-downloads": ' + number + b', "debug": false}\n')
    before = snapshot(path)
    result = run(path=str(path), settings=LOG_SETTINGS)
    assert result.failed
    assert str(path) in result['msg'] and 'out of range for a double' in result['msg'] and 'untouched' in result['msg']
    assert number.decode() in result['msg']
    assert snapshot(path) == before


@pytest.mark.parametrize('opener, closer', [(b'{"a": ', b'}'), (b'[', b']')])
def test_issue29_deep_nesting_in_the_file_is_refused_untouched(tmp_path, run, opener, closer):
    """Nesting 3,000 deep ended the module in a RecursionError traceback."""
    path = _existing(tmp_path, b'{"x": ' + opener * 3000 + b'1' + closer * 3000 + b'}\n')
    before = snapshot(path)
    result = run(path=str(path), settings=LOG_SETTINGS)
    assert result.failed
    assert 'nests arrays and objects deeper than 64 levels (line 1, column ' in result['msg'], result['msg']
    assert str(path) in result['msg'] and 'untouched' in result['msg']
    assert snapshot(path) == before


def test_nesting_up_to_the_bound_is_merged(tmp_path, run):
    assert _json_merge.MAX_DEPTH == 64       # as DOCUMENTATION says
    deep = 'leaf'
    for _level in range(63):
        deep = {'k': deep}
    path = _existing(tmp_path, json.dumps({'deep': deep}).encode())
    result = run(path=str(path), settings={'deep': deep, 'debug': True})
    assert not result.failed and result['changed']
    assert _strict_loads(path.read_text()) == {'deep': deep, 'debug': True}


@pytest.mark.parametrize('levels', [65, 150])
def test_settings_nested_too_deep_fail_cleanly(tmp_path, run, levels):
    deep = []
    for _level in range(levels - 2):
        deep = [deep]
    path = place(tmp_path, 'user_daemon.json')
    before = snapshot(path)
    result = run(path=str(path), settings={'x': deep})
    assert result.failed and result['msg'].startswith('settings nest dicts and lists deeper than 64 levels'), result['msg']
    assert snapshot(path) == before


def test_a_lone_surrogate_escape_is_written_back_as_an_escape(tmp_path, run):
    """json.loads reads "\\ud800" as an unpaired surrogate, which UTF-8 cannot encode: writing it crashed."""
    path = _existing(tmp_path, b'{"labels": ["a\\ud800b", "\\udfff"], "pair": "\\ud83d\\ude00"}\n')
    result = run(path=str(path), settings=LOG_SETTINGS)
    assert not result.failed and result['changed'], result
    raw = path.read_bytes()
    text = raw.decode('utf-8')              # strict: valid UTF-8
    assert '"a\\ud800b"' in text and '"\\udfff"' in text and '"\U0001F600"' in text
    assert _strict_loads(text)['labels'] == ['a\ud800b', '\udfff']


@pytest.mark.parametrize('content', [b'\xc2\xa0\n', '\u2028'.encode('utf-8'), b'\x0b'])
def test_whitespace_that_json_does_not_allow_is_not_an_empty_file(tmp_path, run, content):
    """str.strip() took U+00A0, U+2028 and vertical tab for blank, so such a file was overwritten as if empty."""
    path = _existing(tmp_path, content)
    before = snapshot(path)
    result = run(path=str(path), settings=LOG_SETTINGS)
    assert result.failed and 'is not valid JSON' in result['msg'] and 'untouched' in result['msg']
    assert snapshot(path) == before


def test_a_fifo_is_refused_without_waiting(tmp_path, run):
    path = place(tmp_path, None)
    path.parent.mkdir(parents=True)
    os.mkfifo(str(path))
    result = run(path=str(path), settings=LOG_SETTINGS)
    assert result.failed and 'is not a regular file' in result['msg']
    assert stat.S_ISFIFO(os.stat(str(path)).st_mode)


def test_a_file_over_the_size_cap_is_refused_untouched(tmp_path, run):
    path = _existing(tmp_path, b'{"a": "' + b'x' * docker_daemon_config.MAX_FILE_BYTES + b'"}')
    before = snapshot(path)
    result = run(path=str(path), settings=LOG_SETTINGS)
    assert result.failed and 'is larger than 4194304 bytes' in result['msg']
    assert snapshot(path) == before


def test_dumps_refuses_what_json_cannot_hold():
    for value in (float('nan'), float('inf'), -float('inf')):
        with pytest.raises(ValueError):
            _json_merge.dumps({'a': value})
