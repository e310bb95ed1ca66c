# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checkpoints of a spot GPU server: sync to object storage, stop cleanly on an interruption notice, resume.

Subcommands (one configuration file, written by gpuops.gpu_server.spot; do not edit on the host):
  sync     upload the complete checkpoint files to the remote (rclone copy: never deletes remote files except
           through the retention policy); skips temporary names, files modified within the settle time and files
           some process holds open for writing; writes textfile metrics of the outcome.
  watch    poll the cloud's metadata service for the interruption notice; on one, signal the training units,
           wait a bounded time for them to save and exit, then run a final sync that must end before the deadline.
  restore  copy the remote checkpoints that are missing or newer into the checkpoint directory (before a
           training unit starts on a replacement instance).
  check    check the configuration and that the remote answers (the role's verify step).
  rclone   run rclone with the remotes set up (gpuops_spot:, and gpuops_spot_crypt: with encryption), e.g.
           `gpuops-spot rclone lsl gpuops_spot_crypt:` to see what the bucket holds.

The interruption-notice parsing, the command runner and the open-files scan are the collection's own
(plugins/module_utils/_spot.py, _command.py, _open_files.py), copied next to this script in their package layout
by the role. rclone's remote comes from the environment (RCLONE_CONFIG_GPUOPS_SPOT_*,
read from a root-only file in systemd's EnvironmentFile syntax), so no credential is on a command line or in a log.
"""

from __future__ import (absolute_import, division, print_function)

import argparse
import fcntl
import fnmatch
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from urllib.request import Request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _open_files  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _spot  # noqa: E402 pylint: disable=wrong-import-position

DEFAULT_CONFIG = '/etc/gpuops-spot/config.json'
LOCK_FILE = '/run/gpuops-spot.lock'
REMOTE = 'gpuops_spot'
CRYPT_REMOTE = 'gpuops_spot_crypt'
METRICS_FILE = 'gpuops_spot.prom'


def log(msg):
    print(msg, flush=True)


class Failure(Exception):
    """A step failed in a way the operator must hear about; the message says what and how to fix it."""


def load_config(path):
    try:
        with open(path) as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        raise Failure('cannot read the configuration %s: %s' % (path, e))
    for key in ('checkpoint_dir', 'remote_path', 'state_dir'):
        if not cfg.get(key):
            raise Failure('%s has no %s' % (path, key))
    return cfg


# ---------------------------------------------------------------------------------------------------------------
# rclone
def rclone_env(cfg):
    """The environment for rclone: the remote comes from RCLONE_CONFIG_* variables (systemd's EnvironmentFile);
    the crypt remote's password is obscured here from its root-only key file, through stdin."""
    env = dict(os.environ)
    env.update(read_env_file(cfg.get('remote_env_file')))
    env['RCLONE_CONFIG'] = '/dev/null'
    env.pop('AWS_CA_BUNDLE', None)
    key_file = cfg.get('crypt_key_file')
    if key_file:
        try:
            with open(key_file, 'rb') as f:
                lines = f.read().decode('utf-8').splitlines()
        except OSError as e:
            raise Failure('cannot read the crypt key file %s: %s' % (key_file, e))
        if not lines or not lines[0]:
            raise Failure('the crypt key file %s is empty' % key_file)
        prefix = 'RCLONE_CONFIG_%s_' % CRYPT_REMOTE.upper()
        env[prefix + 'TYPE'] = 'crypt'
        env[prefix + 'REMOTE'] = '%s:%s' % (REMOTE, cfg['remote_path'])
        env[prefix + 'PASSWORD'] = obscure(lines[0])
        if len(lines) > 1 and lines[1]:
            env[prefix + 'PASSWORD2'] = obscure(lines[1])
    return env


def read_env_file(path):
    """KEY="value" lines (systemd EnvironmentFile syntax, with \\ and \" escapes) as a dict."""
    out = {}
    if not path:
        return out
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Failure('cannot read the remote\'s settings %s: %s' % (path, e))
    for line in lines:
        line = line.strip()
        if not line or line.startswith('#') or '=' not in line:
            continue
        key, value = line.split('=', 1)
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = re.sub(r'\\(.)', r'\1', value[1:-1])
        out[key.strip()] = value
    return out


def obscure(secret):
    """rclone's obscured form of ``secret``, which reaches rclone on stdin (never in argv), in an environment of
    PATH alone."""
    try:
        rc, out, err = _command.run([rclone_bin(), 'obscure', '-'], timeout=30, stdin=secret, inherit_env=False,
                                    env={'PATH': os.environ.get('PATH', '/usr/bin:/bin')})
    except _command.CommandError as e:
        raise Failure('rclone obscure failed: %s' % e)
    if rc != 0:
        raise Failure('rclone obscure failed: %s' % err.strip())
    return out.strip()


def rclone_bin():
    return os.environ.get('GPUOPS_SPOT_RCLONE', '/usr/bin/rclone')


def remote_root(cfg):
    if cfg.get('crypt_key_file'):
        return '%s:' % CRYPT_REMOTE
    return '%s:%s' % (REMOTE, cfg['remote_path'])


def run_rclone(cfg, args, timeout, env=None):
    """Run rclone with JSON logs; return (rc, stats dict, error lines). Killed at the timeout (rc 124); rc 127 when
    rclone cannot be started."""
    argv = [rclone_bin()] + args + ['--use-json-log', '--stats', '24h', '--stats-log-level', 'NOTICE',
                                    '--log-level', 'NOTICE']
    env = env or rclone_env(cfg)
    try:
        rc, _out, err = _command.run(argv, timeout=max(timeout, 1), env=env, inherit_env=False)
    except _command.CommandTimeout:
        return 124, {}, ['rclone did not finish within %d s and was killed' % timeout]
    except _command.CommandError as e:
        return 127 if isinstance(e, _command.CommandNotFound) else 1, {}, [str(e)]
    stats, errors = {}, []
    for line in err.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            if line.strip():
                errors.append(line.strip())
            continue
        if 'stats' in entry:
            stats = entry['stats']
        elif entry.get('level') in ('error', 'critical'):
            errors.append(entry.get('msg', line))
    return rc, stats, errors


# ---------------------------------------------------------------------------------------------------------------
# Which files are complete
def complete_files(cfg, settle, now=None):
    """(relative paths to send, {reason: count} of the files left out) under the checkpoint directory."""
    now = time.time() if now is None else now
    root = cfg['checkpoint_dir']
    patterns = cfg.get('exclude', [])
    busy = _open_files.open_for_writing(root)
    chosen, skipped = [], {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            reason = None
            if any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in patterns):
                reason = 'temporary name'
            elif path in busy:
                reason = 'open for writing'
            else:
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if not os.path.isfile(path) or os.path.islink(path):
                    reason = 'not a regular file'
                elif now - st.st_mtime < settle:
                    reason = 'modified within %d s' % settle
            if reason:
                skipped[reason] = skipped.get(reason, 0) + 1
            else:
                chosen.append(rel)
    return chosen, skipped


# ---------------------------------------------------------------------------------------------------------------
# State and metrics
def state_path(cfg):
    return os.path.join(cfg['state_dir'], 'state.json')


def load_state(cfg):
    """The numbers save_state() wrote; a missing, unreadable or damaged file (any other content) counts as empty."""
    try:
        with open(state_path(cfg)) as f:
            state = json.load(f)
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(state, dict):
        return {}
    return {k: v for k, v in state.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


def atomic_write(path, text, mode=0o644):
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.%s.' % os.path.basename(path))
    try:
        with os.fdopen(fd, 'w') as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save_state(cfg, state):
    os.makedirs(cfg['state_dir'], mode=0o700, exist_ok=True)
    atomic_write(state_path(cfg), json.dumps(state, indent=1, sort_keys=True) + '\n', 0o600)
    write_metrics(cfg, state)


METRICS = [
    ('gpuops_spot_sync_interval_seconds', 'Configured interval between checkpoint syncs.', 'interval'),
    ('gpuops_spot_sync_since_timestamp_seconds', 'When this host first attempted a checkpoint sync.', 'since'),
    ('gpuops_spot_last_sync_success_timestamp_seconds', 'End of the last successful checkpoint sync (0: none yet).',
     'last_success'),
    ('gpuops_spot_last_sync_bytes', 'Bytes sent by the last successful checkpoint sync.', 'last_bytes'),
    ('gpuops_spot_last_sync_duration_seconds', 'Duration of the last checkpoint sync attempt.', 'last_duration'),
    ('gpuops_spot_last_sync_failed', '1 when the last checkpoint sync attempt failed.', 'last_failed'),
    ('gpuops_spot_interruption_notice_timestamp_seconds', 'When the last interruption notice was seen (0: none).',
     'notice'),
]


def write_metrics(cfg, state):
    directory = cfg.get('textfile_dir')
    if not directory or not os.path.isdir(directory):
        return
    lines = []
    for name, text, key in METRICS:
        value = state.get(key, cfg.get('interval_seconds', 0) if key == 'interval' else 0)
        lines += ['# HELP %s %s' % (name, text), '# TYPE %s gauge' % name, '%s %s' % (name, _num(value))]
    atomic_write(os.path.join(directory, METRICS_FILE), '\n'.join(lines) + '\n')


def _num(value):
    return ('%.3f' % value).rstrip('0').rstrip('.') if isinstance(value, float) else str(int(value))


class Lock(object):
    """One sync or restore at a time on a host; waits up to `timeout` seconds for the holder."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.fd = None

    def __enter__(self):
        self.fd = os.open(LOCK_FILE, os.O_CREAT | os.O_RDWR, 0o600)
        deadline = time.time() + self.timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except (IOError, OSError):
                if time.time() >= deadline:
                    os.close(self.fd)
                    raise Failure('another sync or restore holds %s' % LOCK_FILE)
                time.sleep(0.2)

    def __exit__(self, *exc):
        os.close(self.fd)


# ---------------------------------------------------------------------------------------------------------------
# Subcommands
def do_sync(cfg, settle=None, timeout=None, bwlimit=None, final=False):
    """One sync; returns True on success. Never raises for a failed upload: the failure is logged and counted."""
    settle = cfg.get('settle_seconds', 60) if settle is None else settle
    timeout = cfg.get('sync_timeout_seconds', 3600) if timeout is None else timeout
    bwlimit = cfg.get('bwlimit', '') if bwlimit is None else bwlimit
    started = time.time()
    state = load_state(cfg)
    state.setdefault('since', int(started))
    state['interval'] = cfg.get('interval_seconds', 900)
    if not os.path.isdir(cfg['checkpoint_dir']):
        log('sync: the checkpoint directory %s does not exist: nothing to send' % cfg['checkpoint_dir'])
        files, skipped = [], {}
    else:
        files, skipped = complete_files(cfg, settle, started)
    left_out = ', '.join('%d %s' % (n, why) for why, n in sorted(skipped.items())) or 'none'
    ok, sent = True, 0
    if files:
        fd, listing = tempfile.mkstemp(prefix='gpuops-spot-files.')
        with os.fdopen(fd, 'w') as f:
            f.write('\n'.join(files) + '\n')
        try:
            args = ['copy', cfg['checkpoint_dir'], remote_root(cfg), '--files-from-raw', listing, '--no-traverse']
            if bwlimit:
                args += ['--bwlimit', str(bwlimit)]
            rc, stats, errors = run_rclone(cfg, args, timeout)
        finally:
            os.unlink(listing)
        sent = int(stats.get('bytes', 0))
        if rc != 0:
            ok = False
            log('sync%s FAILED (rclone exit %d) after %.1f s: %s' % (
                ' (final)' if final else '', rc, time.time() - started, '; '.join(errors[-3:]) or 'no message'))
    if ok and cfg.get('retention_keep', 0) and not final:
        ok = apply_retention(cfg, set(files))
    duration = time.time() - started
    state['last_duration'] = round(duration, 3)
    state['last_failed'] = 0 if ok else 1
    if ok:
        state['last_success'] = int(time.time())
        state['last_bytes'] = sent
        log('sync%s: %d file(s) complete, %d bytes sent in %.1f s; left out: %s' % (
            ' (final)' if final else '', len(files), sent, duration, left_out))
    save_state(cfg, state)
    return ok


def apply_retention(cfg, local):
    """Keep the newest `retention_keep` files of the remote; never delete a file that is still local."""
    keep = int(cfg['retention_keep'])
    env = rclone_env(cfg)
    try:
        rc, out, _err = _command.run([rclone_bin(), 'lsjson', '-R', '--files-only', remote_root(cfg)], timeout=300,
                                     env=env, inherit_env=False)
        entries = json.loads(out or '[]') if rc == 0 else None
    except (_command.CommandError, ValueError):
        entries = None
    if entries is None:
        log('retention: cannot list the remote; nothing deleted')
        return False
    entries.sort(key=lambda e: e.get('ModTime', ''), reverse=True)
    doomed = [e['Path'] for e in entries[keep:] if e['Path'] not in local]
    if not doomed:
        return True
    fd, listing = tempfile.mkstemp(prefix='gpuops-spot-delete.')
    with os.fdopen(fd, 'w') as f:
        f.write('\n'.join(doomed) + '\n')
    try:
        rc, _stats, errors = run_rclone(cfg, ['delete', remote_root(cfg), '--files-from-raw', listing], 600, env)
    finally:
        os.unlink(listing)
    log('retention: kept the newest %d remote file(s), deleted %d%s' % (
        keep, len(doomed), '' if rc == 0 else ' (FAILED: %s)' % '; '.join(errors[-3:])))
    return rc == 0


def do_restore(cfg):
    started = time.time()
    os.makedirs(cfg['checkpoint_dir'], exist_ok=True)
    args = ['copy', remote_root(cfg), cfg['checkpoint_dir'], '--update']
    for pattern in cfg.get('exclude', []):
        args += ['--exclude', pattern]
    rc, stats, errors = run_rclone(cfg, args, cfg.get('restore_timeout_seconds', 900))
    if rc != 0:
        log('restore FAILED (rclone exit %d) after %.1f s: %s' % (rc, time.time() - started, '; '.join(errors[-3:])))
        return False
    owner = cfg.get('owner')
    if owner:
        chown_tree(cfg['checkpoint_dir'], owner)
    log('restore: %d file(s), %d bytes from %s into %s in %.1f s' % (
        int(stats.get('transfers', 0)), int(stats.get('bytes', 0)), remote_root(cfg) if not cfg.get('crypt_key_file')
        else 'the encrypted remote', cfg['checkpoint_dir'], time.time() - started))
    return True


def chown_tree(root, owner):
    import grp
    import pwd
    try:
        uid = pwd.getpwnam(owner['user']).pw_uid
        gid = grp.getgrnam(owner['group']).gr_gid
    except KeyError as e:
        log('restore: cannot give the files to %s: %s' % (owner, e))
        return
    for dirpath, _dirs, files in os.walk(root):
        for name in [dirpath] + [os.path.join(dirpath, n) for n in files]:
            os.lchown(name, uid, gid)


def do_check(cfg):
    rc, _stats, errors = run_rclone(cfg, ['lsjson', '--max-depth', '1', remote_root(cfg)], 60)
    if rc not in (0, 3):  # 3: directory not found, a fresh bucket or prefix
        raise Failure('the remote %s does not answer (rclone exit %d): %s' % (
            remote_root(cfg) if not cfg.get('crypt_key_file') else 'behind ' + CRYPT_REMOTE, rc,
            '; '.join(errors[-3:]) or 'no message'))
    log('check: the remote answers; the checkpoint directory is %s' % cfg['checkpoint_dir'])


def systemctl(args, timeout):
    """``(rc, what it printed)`` of ``systemctl ARGS``; rc 124 when it does not answer in time, 127 when missing."""
    try:
        rc, out, err = _command.run(['systemctl'] + args, timeout=timeout)
    except _command.CommandTimeout:
        return 124, 'systemctl %s did not answer within %d s' % (' '.join(args), timeout)
    except _command.CommandError as e:
        return 127, str(e)
    return rc, '\n'.join(text.strip() for text in (out, err) if text.strip())


def handle_notice(cfg, notice):
    """Signal the trainers, wait for them (bounded), final sync before the deadline. Every step is logged."""
    t0 = time.time()
    deadline = notice.deadline or (t0 + _spot.NOTICE_WINDOW_SECONDS.get(notice.provider, 30))
    window = max(deadline - t0, 1)
    save_budget = cfg.get('save_timeout_seconds') or window * 0.4
    save_budget = min(save_budget, max(window - cfg.get('deadline_margin_seconds', 5), 1))
    log('notice: %s (%s): reclaimed in %.0f s; saving gets %.0f s, then the final sync' % (
        notice.provider, notice.detail, window, save_budget))
    state = load_state(cfg)
    state['notice'] = int(t0)
    save_state(cfg, state)

    units = cfg.get('training_units', [])
    sig = cfg.get('signal', 'SIGUSR1')
    for unit in units:
        rc, out = systemctl(['kill', '--kill-whom=main', '--signal=%s' % sig, unit], 10)
        log('notice: sent %s to %s%s' % (sig, unit, '' if rc == 0 else ' (FAILED: %s)' % out))
    hook = cfg.get('hook_command')
    if hook:
        # The operator's own shell command: its output goes to the journal as it runs, in the operator's locale.
        try:
            proc = subprocess.run(check=False, args=hook, shell=True, timeout=max(save_budget - (time.time() - t0), 1))
            log('notice: hook %r exited %d' % (hook, proc.returncode))
        except subprocess.TimeoutExpired:
            log('notice: hook %r still ran after the save budget and was killed' % hook)
    # Wait until no training unit is active (they save on the signal and exit), within the save budget.
    pending = list(units)
    while pending and time.time() - t0 < save_budget:
        pending = [u for u in pending if systemctl(['is-active', '--quiet', u], 5)[0] == 0]
        if pending:
            time.sleep(0.5)
    if pending:
        log('notice: %s still running after %.0f s; syncing what is complete' % (', '.join(pending), save_budget))
    else:
        log('notice: training units stopped after %.1f s' % (time.time() - t0))

    # A timer-started sync would hold the lock (and send settle-time-old files only): stop it first.
    systemctl(['stop', 'gpuops-spot-sync.service'], 10)
    remaining = deadline - time.time() - cfg.get('deadline_margin_seconds', 5)
    with Lock(5):
        ok = do_sync(cfg, settle=0, timeout=max(int(remaining), 1), bwlimit='', final=True)
    log('notice: final sync %s %.1f s after the notice, %.0f s before the deadline' % (
        'done' if ok else 'FAILED', time.time() - t0, deadline - time.time()))
    return ok


def azure_vm_name(base_url):
    """This VM's name: Azure sends a group's scheduled events to every VM in it, only ours count."""
    url = (base_url or _spot.DEFAULT_BASE_URLS['azure']).rstrip('/') + \
        '/metadata/instance/compute/name?api-version=2021-02-01&format=text'
    request = Request(url, headers={'Metadata': 'true'})
    error = None
    for _attempt in range(3):
        try:
            with _spot.build_opener().open(request, timeout=10) as response:
                return response.read(256).decode('utf-8').strip() or None
        except (OSError, ValueError) as e:
            error = e
            time.sleep(2)
    log('watch: cannot read this VM\'s name from %s (%s): every Preempt event of the group counts' % (url, error))
    return None


def do_watch(cfg):
    provider = cfg.get('provider', 'auto')
    if provider == 'auto':
        dmi = _spot.read_dmi()
        provider = _spot.detect_provider(dmi)
        if provider is None:
            log('watch: this host is not on a cloud the watcher knows (DMI vendor %r, product %r); set spot_provider '
                'to aws, gcp, azure, alibaba or tencent if it is one. The watcher stops here.' % (
                    dmi.get('sys_vendor'), dmi.get('product_name')))
            return 0
    base_url = cfg.get('metadata_url') or None
    vm_name = azure_vm_name(base_url) if provider == 'azure' else None
    poller = _spot.Poller(provider, base_url=base_url, timeout=cfg.get('metadata_timeout_seconds', 2), vm_name=vm_name)
    interval = cfg.get('poll_seconds', 5)
    log('watch: polling %s\'s metadata service at %s every %s s' % (
        provider, base_url or _spot.DEFAULT_BASE_URLS[provider], interval))
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    # Nothing the metadata service answers ends this loop: the minutes after a notice are the ones that matter, and
    # systemd's restart would lose them. Each kind of trouble is logged once, until it changes or the service answers.
    trouble = None
    while not stop:
        notice = None
        try:
            notice = poller.check()
        except _spot.MalformedResponse as e:
            if trouble != str(e):
                log('watch: the metadata service answered something that is not a notice, ignored: %s; still polling '
                    'every %s s (logged again when it changes)' % (e, interval))
            trouble = str(e)
        except _spot.MetadataUnreachable as e:
            if trouble != 'unreachable':
                log('watch: metadata service unreachable: %s; retrying every %s s (logged again when it answers)' % (
                    e, interval))
            trouble = 'unreachable'
        except Exception as e:  # a bug here, not the service: it must not stop the watch either
            if trouble != repr(e):
                log('watch: checking for a notice failed unexpectedly (%s: %s); still polling every %s s' % (
                    type(e).__name__, e, interval))
            trouble = repr(e)
        else:
            if trouble is not None:
                log('watch: metadata service answers again')
            trouble = None
        if notice is not None:
            handle_notice(cfg, notice)
            log('watch: interruption handled; waiting for the instance to go away')
            while not stop:
                time.sleep(interval)
            break
        time.sleep(interval)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--config', default=DEFAULT_CONFIG)
    sub = parser.add_subparsers(dest='command')
    p_sync = sub.add_parser('sync', help='upload the complete checkpoint files')
    p_sync.add_argument('--settle', type=int, help='override the settle time (seconds)')
    p_sync.add_argument('--bwlimit', help='override the bandwidth limit (rclone --bwlimit)')
    sub.add_parser('watch', help='wait for the interruption notice, then stop cleanly')
    sub.add_parser('restore', help='copy the remote checkpoints into the checkpoint directory')
    sub.add_parser('check', help='check the configuration and the remote')
    p_rclone = sub.add_parser('rclone', help='run rclone with the remotes set up')
    p_rclone.add_argument('args', nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if not args.command:
        parser.error('choose a subcommand')
    try:
        cfg = load_config(args.config)
        if args.command == 'sync':
            with Lock(cfg.get('sync_timeout_seconds', 3600)):
                return 0 if do_sync(cfg, settle=args.settle, bwlimit=args.bwlimit) else 1
        if args.command == 'restore':
            with Lock(cfg.get('restore_timeout_seconds', 900)):
                return 0 if do_restore(cfg) else 1
        if args.command == 'rclone':
            env = rclone_env(cfg)
            os.execve(rclone_bin(), [rclone_bin()] + args.args, env)
        if args.command == 'check':
            do_check(cfg)
            return 0
        return do_watch(cfg)
    except Failure as e:
        log('%s: %s' % (args.command, e))
        return 2


if __name__ == '__main__':
    sys.exit(main())
