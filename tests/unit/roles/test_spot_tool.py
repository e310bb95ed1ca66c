# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The spot role's tool (roles/spot/files/gpuops-spot.py): which files a sync sends, the credentials file, metrics.

rclone is a stand-in script here; the Molecule scenario `spot` runs the tool against a real S3 server.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import re
import time

import jinja2

from ansible_collections.gpuops.gpu_server.tests.unit.conftest import load_script, make_executable

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

TOOL = os.path.join(ROOT, 'roles', 'spot', 'files', 'gpuops-spot.py')
ENV_TEMPLATE = os.path.join(ROOT, 'roles', 'spot', 'templates', 'remote.env.j2')


def load_tool():
    return load_script('gpuops_spot', 'roles', 'spot', 'files', 'gpuops-spot.py')


def config(tmp_path, **extra):
    ckpt = tmp_path / 'ckpt'
    ckpt.mkdir(exist_ok=True)
    (tmp_path / 'textfile').mkdir(exist_ok=True)
    cfg = {'checkpoint_dir': str(ckpt), 'remote_path': 'bucket/job', 'state_dir': str(tmp_path / 'state'),
           'textfile_dir': str(tmp_path / 'textfile'), 'interval_seconds': 900, 'settle_seconds': 60,
           'exclude': ['*.tmp', '*.partial', '.*'], 'remote_env_file': ''}
    cfg.update(extra)
    return cfg


def write(path, age=0, size=16):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'x' * size)
    t = time.time() - age
    os.utime(str(path), (t, t))


def test_the_tool_runs_rclone_and_systemctl_through_the_command_helper():
    """No subprocess of its own but for the operator's hook, which runs in the operator's shell."""
    with open(TOOL) as f:
        calls = re.findall(r'subprocess\.(?:run|Popen|call|check_output|check_call)\((.*)', f.read())
    assert len(calls) == 1 and 'args=hook, shell=True' in calls[0], calls


def test_a_sync_chooses_only_complete_files(tmp_path):
    tool = load_tool()
    cfg = config(tmp_path)
    ckpt = tmp_path / 'ckpt'
    write(ckpt / 'ckpt-1.pt', age=600)
    write(ckpt / 'sub' / 'ckpt-2.pt', age=600)
    write(ckpt / 'ckpt-3.pt.tmp', age=600)
    write(ckpt / 'sub' / 'shard.partial', age=600)
    write(ckpt / '.hidden', age=600)
    write(ckpt / 'ckpt-4.pt', age=5)
    write(ckpt / 'ckpt-5.pt', age=600)
    with open(str(ckpt / 'ckpt-5.pt'), 'ab'):   # still being written by someone (this test process)
        chosen, skipped = tool.complete_files(cfg, 60)
    assert chosen == ['ckpt-1.pt', 'sub/ckpt-2.pt']
    assert skipped == {'temporary name': 3, 'modified within 60 s': 1, 'open for writing': 1}
    # Open for reading only does not hold a file back; settle 0 (the final sync) sends a fresh file.
    with open(str(ckpt / 'ckpt-5.pt'), 'rb'):
        chosen, skipped = tool.complete_files(cfg, 0)
    assert chosen == ['ckpt-1.pt', 'ckpt-4.pt', 'ckpt-5.pt', 'sub/ckpt-2.pt']


def test_the_credentials_file_reads_back_what_the_role_wrote(tmp_path):
    """remote.env.j2 (systemd EnvironmentFile quoting) and the tool's reader agree, for hostile values too."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.dirname(ENV_TEMPLATE)), keep_trailing_newline=True)
    env.filters['combine'] = lambda a, b: dict(a, **b)
    secrets = {'access_key_id': 'AKIA123', 'secret_access_key': 'a"b\\c d=e$f#g'}
    text = env.get_template('remote.env.j2').render(
        spot_remote={'type': 's3', 'provider': 'AWS', 'env_auth': False, 'region': 'us-east-1'},
        spot_remote_secrets=secrets, _spot_marker='managed')
    path = tmp_path / 'remote.env'
    path.write_text(text)
    values = load_tool().read_env_file(str(path))
    assert values == {
        'RCLONE_CONFIG_GPUOPS_SPOT_TYPE': 's3',
        'RCLONE_CONFIG_GPUOPS_SPOT_PROVIDER': 'AWS',
        'RCLONE_CONFIG_GPUOPS_SPOT_ENV_AUTH': 'false',
        'RCLONE_CONFIG_GPUOPS_SPOT_REGION': 'us-east-1',
        'RCLONE_CONFIG_GPUOPS_SPOT_ACCESS_KEY_ID': 'AKIA123',
        'RCLONE_CONFIG_GPUOPS_SPOT_SECRET_ACCESS_KEY': 'a"b\\c d=e$f#g',
    }


def metrics(tmp_path):
    text = (tmp_path / 'textfile' / 'gpuops_spot.prom').read_text()
    return dict(line.split() for line in text.splitlines() if not line.startswith('#'))


def test_sync_metrics_on_success_then_failure(tmp_path, monkeypatch):
    tool = load_tool()
    cfg = config(tmp_path)
    write(tmp_path / 'ckpt' / 'ckpt-1.pt', age=600, size=1000)
    stats = json.dumps({'level': 'warning', 'msg': 'stats', 'stats': {'bytes': 1000, 'transfers': 1}})
    monkeypatch.setenv('GPUOPS_SPOT_RCLONE', make_executable(tmp_path, 'rclone-ok', stderr=stats + '\n'))
    assert tool.do_sync(cfg)
    first = metrics(tmp_path)
    assert first['gpuops_spot_sync_interval_seconds'] == '900'
    assert first['gpuops_spot_last_sync_bytes'] == '1000'
    assert first['gpuops_spot_last_sync_failed'] == '0'
    assert int(first['gpuops_spot_last_sync_success_timestamp_seconds']) >= int(time.time()) - 5
    # since is when the first attempt started, the success when it ended: equal unless the sync crossed a second.
    since = int(first['gpuops_spot_sync_since_timestamp_seconds'])
    assert int(time.time()) - 5 <= since <= int(first['gpuops_spot_last_sync_success_timestamp_seconds'])

    error = json.dumps({'level': 'error', 'msg': 'AccessDenied: bad key'})
    monkeypatch.setenv('GPUOPS_SPOT_RCLONE', make_executable(tmp_path, 'rclone-bad', stderr=error + '\n', rc=1))
    assert not tool.do_sync(cfg)
    second = metrics(tmp_path)
    assert second['gpuops_spot_last_sync_failed'] == '1'
    # The last success and the start stay what they were: the stale alert counts from them.
    assert second['gpuops_spot_last_sync_success_timestamp_seconds'] == first['gpuops_spot_last_sync_success_timestamp_seconds']
    assert second['gpuops_spot_sync_since_timestamp_seconds'] == first['gpuops_spot_sync_since_timestamp_seconds']
    assert oct(os.stat(str(tmp_path / 'state' / 'state.json')).st_mode & 0o777) == '0o600'


def test_a_crypt_key_becomes_the_crypt_remote_through_stdin(tmp_path, monkeypatch):
    tool = load_tool()
    key = tmp_path / 'crypt.key'
    key.write_text('pass word\nsalt\n')
    # A stand-in `rclone obscure -` that proves the secret came on stdin, not in argv.
    fake = tmp_path / 'rclone'
    fake.write_text('#!/bin/sh\n[ "$1 $2" = "obscure -" ] || exit 9\nread -r s\necho "obscured($s)"\n')
    fake.chmod(0o755)
    monkeypatch.setenv('GPUOPS_SPOT_RCLONE', str(fake))
    cfg = config(tmp_path, crypt_key_file=str(key))
    env = tool.rclone_env(cfg)
    assert env['RCLONE_CONFIG_GPUOPS_SPOT_CRYPT_TYPE'] == 'crypt'
    assert env['RCLONE_CONFIG_GPUOPS_SPOT_CRYPT_REMOTE'] == 'gpuops_spot:bucket/job'
    assert env['RCLONE_CONFIG_GPUOPS_SPOT_CRYPT_PASSWORD'] == 'obscured(pass word)'
    assert env['RCLONE_CONFIG_GPUOPS_SPOT_CRYPT_PASSWORD2'] == 'obscured(salt)'
    assert tool.remote_root(cfg) == 'gpuops_spot_crypt:'


def test_the_watcher_stops_with_one_line_on_a_host_that_is_no_cloud(tmp_path, monkeypatch, capsys):
    tool = load_tool()
    monkeypatch.setattr(tool._spot, 'read_dmi', lambda: {'sys_vendor': 'QEMU', 'product_name': 'Standard PC (Q35 + ICH9, 2009)'})
    assert tool.do_watch(config(tmp_path, provider='auto')) == 0
    out = capsys.readouterr().out
    assert out.count('\n') == 1 and "not on a cloud the watcher knows (DMI vendor 'QEMU'" in out and 'spot_provider' in out


def test_a_notice_is_handled_within_its_window_when_the_trainer_does_not_stop(tmp_path, monkeypatch, capsys):
    """The trainer ignores the signal (systemctl is-active keeps saying active): the wait ends at the save budget and
    the final sync still runs, with the settle time off, and ends before the deadline."""
    tool = load_tool()
    calls = tmp_path / 'systemctl.log'
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    fake = bin_dir / 'systemctl'
    fake.write_text('#!/bin/sh\necho "$*" >> %s\nexit 0\n' % calls)
    fake.chmod(0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (bin_dir, os.environ['PATH']))
    stats = json.dumps({'level': 'warning', 'msg': 'stats', 'stats': {'bytes': 16, 'transfers': 1}})
    monkeypatch.setenv('GPUOPS_SPOT_RCLONE', make_executable(tmp_path, 'rclone', stderr=stats + '\n'))
    monkeypatch.setattr(tool, 'LOCK_FILE', str(tmp_path / 'lock'))
    write(tmp_path / 'ckpt' / 'ckpt-9.pt', age=0)          # just written: only a settle-free sync sends it
    cfg = config(tmp_path, training_units=['train.service'], deadline_margin_seconds=1)
    notice = tool._spot.Notice('aws', 'terminate', time.time() + 6, 'test')
    start = time.time()
    assert tool.handle_notice(cfg, notice)
    assert time.time() - start < 5
    out = capsys.readouterr().out
    assert 'sent SIGUSR1 to train.service' in out
    assert 'train.service still running after 2 s' in out
    assert 'sync (final): 1 file(s) complete, 16 bytes sent' in out
    assert 'final sync done' in out
    log = calls.read_text().splitlines()
    assert log[0] == 'kill --kill-whom=main --signal=SIGUSR1 train.service'
    assert 'stop gpuops-spot-sync.service' in log
    assert metrics(tmp_path)['gpuops_spot_interruption_notice_timestamp_seconds'] != '0'


# ---------------------------------------------------------------------------------------------------------------
# The watch loop against the fake metadata service (tests/fixtures/spot/fake_metadata.py), serving malformed answers

def load_fake_metadata():
    return load_script('fake_metadata', 'tests', 'fixtures', 'spot', 'fake_metadata.py')


def _scheduled_events(**event):
    doc = {'DocumentIncarnation': 1, 'Events': []}
    if event:
        base = {'EventId': 'C7061BAC-AFDC-4513-B24B-AA5F13A16123', 'EventType': 'Preempt', 'ResourceType': 'VirtualMachine',
                'Resources': ['fake-vm-0'], 'EventStatus': 'Scheduled', 'NotBefore': 'Mon, 19 Sep 2016 18:29:47 GMT'}
        base.update(event)
        doc['Events'].append(base)
    return json.dumps(doc)


def test_the_watcher_logs_malformed_answers_and_keeps_polling(tmp_path, monkeypatch, capsys):
    """Issue 29: 60 KB of nested brackets (RecursionError), an EventType that is a list (TypeError) and a NotBefore
    out of datetime's range (OverflowError) each ended the watcher with a traceback. Now each is one log line, the
    loop keeps polling, and the eviction that follows is still handled."""
    tool = load_tool()
    fake = load_fake_metadata()
    deep = '{"Events": ' + '[' * 60000
    answers = [deep, deep,                                    # the same trouble twice: logged once
               _scheduled_events(EventType=['Preempt']),
               _scheduled_events(NotBefore='Mon, 19 Sep 99999999999 18:29:47 GMT'),
               _scheduled_events(),                           # nothing scheduled: "answers again"
               _scheduled_events(EventStatus='Scheduled')]    # the eviction
    served, sigterm = [], []

    def serve_azure(handler, parts, deadline):  # pylint: disable=unused-argument
        if len(served) == len(answers):         # the watcher missed the eviction: stop it, the asserts say the rest
            sigterm[0](15, None)
        served.append(answers[min(len(served), len(answers) - 1)])
        handler.reply(200, served[-1], 'application/json')

    monkeypatch.setattr(fake.Handler, 'serve_azure', serve_azure)
    server = fake.start_in_thread(str(tmp_path / 'state'), quiet=True)
    try:
        monkeypatch.setattr(tool.signal, 'signal', lambda signum, handler: sigterm.append(handler))
        monkeypatch.setattr(tool, 'azure_vm_name', lambda base_url: 'fake-vm-0')
        notices = []

        def handle_notice(cfg, notice):
            notices.append(notice)
            sigterm[0](15, None)                # systemd stops the unit as the instance goes
            return True

        monkeypatch.setattr(tool, 'handle_notice', handle_notice)
        cfg = config(tmp_path, provider='azure', metadata_url=server.base_url, poll_seconds=0.01)
        assert tool.do_watch(cfg) == 0
    finally:
        server.shutdown()
        server.server_close()

    assert len(served) == len(answers)
    assert [(n.provider, n.action) for n in notices] == [('azure', 'preempt')]
    lines = capsys.readouterr().out.splitlines()
    malformed = [line for line in lines if 'not a notice, ignored' in line]
    assert len(malformed) == 3, lines
    assert 'nests deeper than 32 levels' in malformed[0]
    assert 'EventType and EventStatus must be strings' in malformed[1]
    assert 'not an RFC 1123 time' in malformed[2]
    assert all('still polling' in line for line in malformed)
    assert sum('answers again' in line for line in lines) == 1
    assert lines[-1] == 'watch: interruption handled; waiting for the instance to go away'


def test_a_damaged_state_file_counts_as_empty(tmp_path):
    tool = load_tool()
    cfg = config(tmp_path)
    os.makedirs(cfg['state_dir'])
    for text in ('[' * 5000, '[1, 2]', '{"notice": "soon", "since": 5, "last_failed": true, "last_bytes": 1e400}', '\xff'):
        with open(tool.state_path(cfg), 'w', encoding='latin-1') as f:
            f.write(text)
        state = tool.load_state(cfg)
        assert state in ({}, {'since': 5})
        tool.save_state(cfg, dict(state, notice=1))   # and the metrics can be written from it
