# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The hardening role's ssh-guard.py `prove` writes the admin's AuthorizedKeysFile as root (issue 52, item 4): a link
that the admin planted in the file's place, in ~/.ssh's place or in any directory the admin can change must not make
root create, chmod or chown anything outside; links that only root can have put there are followed.

The tests run as root (as the role's script does) with a home owned by a made-up user, and compare a snapshot of a
directory "outside" (what the links point to) before and after. The negative control runs the same attacks against the
earlier naive open()/chmod()/chown() code and shows that the snapshot comparison catches what it did."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import contextlib
import json
import os
import stat

import pytest

from ansible_collections.gpuops.gpu_server.tests.unit.conftest import load_script

ADMIN_UID, ADMIN_GID = 54321, 54322
LINE = b'from="127.0.0.1",restrict ssh-ed25519 AAAAprobe gpuops-ssh-guard-probe\n'

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='ssh-guard runs as root; the tests chown to another user')


@pytest.fixture
def guard():
    return load_script('gpuops_ssh_guard', 'roles', 'hardening', 'files', 'ssh-guard.py')


def snapshot(top):
    """Every path under top with its type, mode, owner, link target or content: what a write would change."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(str(top)):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            what = os.readlink(p) if stat.S_ISLNK(st.st_mode) else (
                open(p, 'rb').read() if stat.S_ISREG(st.st_mode) else None)
            seen[os.path.relpath(p, str(top))] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid,
                                                  st.st_gid, st.st_ino, what)
    return seen


class Host(object):
    """A home owned by the admin (ADMIN_UID) with ~/.ssh, in a root-owned /home-like directory, and a root-owned
    directory `outside` with one file: what a planted link would point root at."""

    def __init__(self, tmp_path):
        self.root = tmp_path
        os.chmod(str(tmp_path), 0o755)
        self.homes = tmp_path / 'home'
        self.homes.mkdir(mode=0o755)
        self.home = self.homes / 'admin'
        self.home.mkdir(mode=0o750)
        self.ssh = self.home / '.ssh'
        self.ssh.mkdir(mode=0o700)
        for p in (self.home, self.ssh):
            os.chown(str(p), ADMIN_UID, ADMIN_GID)
        self.keys = self.ssh / 'authorized_keys'
        self.outside = tmp_path / 'etc'
        self.outside.mkdir(mode=0o755)
        (self.outside / 'shadow').write_bytes(b'root:$6$secret:19000::::::\n')
        os.chmod(str(self.outside / 'shadow'), 0o640)
        (self.outside / 'cron.d').mkdir(mode=0o755)


def plant(host, how):
    """Plant one attack; returns the AuthorizedKeysFile path that sshd would name."""
    if how == 'file-link-to-new-file':
        host.keys.symlink_to(host.outside / 'cron.d' / 'gpuops')
    elif how == 'file-link-to-existing-file':
        host.keys.symlink_to(host.outside / 'shadow')
    elif how == 'relative-file-link':
        host.keys.symlink_to(os.path.join('..', '..', '..', 'etc', 'cron.d', 'gpuops'))
    elif how == 'dot-ssh-link':
        host.ssh.rmdir()
        host.ssh.symlink_to(host.outside / 'cron.d')
    elif how == 'dot-ssh-link-missing-target':
        host.ssh.rmdir()
        host.ssh.symlink_to(host.outside / 'new')
    elif how == 'deeper-link':
        # AuthorizedKeysFile .config/ssh/keys: a link in a directory the admin owns, below home.
        config = host.home / '.config'
        config.mkdir()
        os.chown(str(config), ADMIN_UID, ADMIN_GID)
        (config / 'ssh').symlink_to(host.outside)
        return str(config / 'ssh' / 'keys')
    elif how == 'hard-link':
        os.link(str(host.outside / 'shadow'), str(host.keys))
    else:
        raise AssertionError(how)
    for p in (host.keys, host.ssh):
        if os.path.islink(str(p)):
            os.lchown(str(p), ADMIN_UID, ADMIN_GID)
    return str(host.keys)


ATTACKS = ['file-link-to-new-file', 'file-link-to-existing-file', 'relative-file-link', 'dot-ssh-link',
           'dot-ssh-link-missing-target', 'deeper-link', 'hard-link']


def attack(host, how, add_key):
    """Plant the attack, run add_key over it; returns (what changed outside, the error if refused)."""
    path = plant(host, how)
    before = snapshot(host.outside)
    error = None
    try:
        with add_key(path, LINE, ADMIN_UID, ADMIN_GID):
            during = snapshot(host.outside)
    except Exception as exc:   # the refusal (GuardError), or whatever the naive code hit
        error, during = exc, snapshot(host.outside)
    after = snapshot(host.outside)
    changed = sorted(k for k in set(before) | set(during) | set(after)
                     if not (before.get(k) == during.get(k) == after.get(k)))
    return changed, error


@contextlib.contextmanager
def naive_add_key(path, line, uid, gid):
    """The earlier prove(): path-based, following every link (the negative control)."""
    existed = os.path.exists(path)
    before = open(path, 'rb').read() if existed else None
    if existed:
        with open(path, 'wb') as f:
            f.write(before + line)
    else:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, 'wb') as f:
            f.write(line)
        os.chmod(path, 0o600)
        os.chown(path, uid, gid)
    try:
        yield
    finally:
        if existed:
            with open(path, 'wb') as f:
                f.write(before)
        elif os.path.exists(path):
            os.unlink(path)


@pytest.mark.parametrize('how', ATTACKS)
def test_a_planted_link_is_refused_and_nothing_outside_changes(tmp_path, guard, how):
    host = Host(tmp_path)
    changed, error = attack(host, how, guard.probe_key)
    assert changed == []
    assert isinstance(error, guard.GuardError), error
    assert 'refusing' in str(error) and 'Nothing was written' in str(error)
    assert not (host.outside / 'cron.d' / 'gpuops').exists() and not (host.outside / 'new').exists()


@pytest.mark.parametrize('how', ['file-link-to-new-file', 'relative-file-link', 'dot-ssh-link', 'deeper-link'])
def test_negative_control_the_snapshot_catches_the_naive_code(tmp_path, how):
    """The same attacks against the old code: root created a file outside, owned by the admin. The comparison used
    above must see it, or the refusal test proves nothing."""
    host = Host(tmp_path)
    changed, error = attack(host, how, naive_add_key)
    assert error is None
    assert changed, 'the naive code changed nothing outside: the attack or the snapshot is broken'
    created = [k for k in changed if k.endswith(('gpuops', 'keys', 'authorized_keys'))]
    assert created, changed


def test_negative_control_the_naive_code_chowns_a_file_outside_to_the_admin(tmp_path):
    host = Host(tmp_path)
    plant(host, 'dot-ssh-link')
    with naive_add_key(str(host.keys), LINE, ADMIN_UID, ADMIN_GID):
        st = os.lstat(str(host.outside / 'cron.d' / 'authorized_keys'))
        assert st.st_uid == ADMIN_UID and stat.S_ISREG(st.st_mode)


def test_a_new_key_file_is_the_admins_and_goes_again(tmp_path, guard):
    host = Host(tmp_path)
    with guard.probe_key(str(host.keys), LINE, ADMIN_UID, ADMIN_GID):
        st = os.lstat(str(host.keys))
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
        assert (st.st_uid, st.st_gid) == (ADMIN_UID, ADMIN_GID)
        assert host.keys.read_bytes() == LINE
    assert not os.path.lexists(str(host.keys))
    assert sorted(os.listdir(str(host.ssh))) == []


def test_an_existing_key_file_gets_the_line_and_is_put_back_as_it_was(tmp_path, guard):
    host = Host(tmp_path)
    host.keys.write_bytes(b'ssh-ed25519 AAAAadmin admin@laptop')   # no final newline
    os.chown(str(host.keys), ADMIN_UID, ADMIN_GID)
    os.chmod(str(host.keys), 0o640)
    with guard.probe_key(str(host.keys), LINE, ADMIN_UID, ADMIN_GID):
        assert host.keys.read_bytes() == b'ssh-ed25519 AAAAadmin admin@laptop\n' + LINE
        st = os.lstat(str(host.keys))
        assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o640, ADMIN_UID, ADMIN_GID)
    st = os.lstat(str(host.keys))
    assert host.keys.read_bytes() == b'ssh-ed25519 AAAAadmin admin@laptop'
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o640, ADMIN_UID, ADMIN_GID)
    assert os.listdir(str(host.ssh)) == ['authorized_keys']   # no temporary file left


def test_a_missing_ssh_directory_is_made_for_the_login_and_removed(tmp_path, guard):
    host = Host(tmp_path)
    host.ssh.rmdir()
    with guard.probe_key(str(host.keys), LINE, ADMIN_UID, ADMIN_GID):
        st = os.lstat(str(host.ssh))
        assert stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o755
        assert host.keys.read_bytes() == LINE and os.lstat(str(host.keys)).st_uid == ADMIN_UID
    assert not os.path.lexists(str(host.ssh))


def test_the_line_is_taken_out_when_the_login_fails(tmp_path, guard):
    host = Host(tmp_path)
    with pytest.raises(RuntimeError):
        with guard.probe_key(str(host.keys), LINE, ADMIN_UID, ADMIN_GID):
            raise RuntimeError('login failed')
    assert not os.path.lexists(str(host.keys))


def test_links_only_root_can_have_put_there_are_followed(tmp_path, guard):
    """AuthorizedKeysFile /etc/ssh/keys/%u with /etc/ssh/keys a link made by root (a root-owned directory that nobody
    else may write): followed, as the kernel would."""
    host = Host(tmp_path)
    real = host.outside / 'keys-real'
    real.mkdir(mode=0o755)
    (host.outside / 'keys').symlink_to('keys-real')          # relative, in root's 0755 directory
    (host.homes / 'admin-alias').symlink_to(host.home)        # absolute, in the root-owned /home
    with guard.probe_key(str(host.outside / 'keys' / 'admin'), LINE, ADMIN_UID, ADMIN_GID):
        assert (real / 'admin').read_bytes() == LINE
    assert os.listdir(str(real)) == []
    with guard.probe_key(str(host.homes / 'admin-alias' / '.ssh' / 'authorized_keys'), LINE, ADMIN_UID, ADMIN_GID):
        assert host.keys.read_bytes() == LINE


@pytest.mark.parametrize('mode, uid', [(0o775, 0), (0o757, 0), (0o1777, 0), (0o755, ADMIN_UID)])
def test_a_link_in_a_directory_others_can_change_is_refused(tmp_path, guard, mode, uid):
    host = Host(tmp_path)
    shared = tmp_path / 'shared'
    shared.mkdir()
    os.chmod(str(shared), mode)
    os.chown(str(shared), uid, 0)
    (shared / 'keys').symlink_to(host.outside)
    before = snapshot(host.outside)
    with pytest.raises(guard.GuardError, match='is a symbolic link .* in a directory that someone other than root'):
        with guard.probe_key(str(shared / 'keys' / 'admin'), LINE, ADMIN_UID, ADMIN_GID):
            pass
    assert snapshot(host.outside) == before


@pytest.mark.parametrize('path', ['relative/keys', '/', '/home/../etc/shadow'])
def test_paths_that_name_no_file_of_their_own_are_refused(guard, path):
    with pytest.raises(guard.GuardError, match='AuthorizedKeysFile'):
        with guard.probe_key(path, LINE, ADMIN_UID, ADMIN_GID):
            pass


def test_a_fifo_or_directory_in_the_files_place_is_refused_without_hanging(tmp_path, guard):
    host = Host(tmp_path)
    os.mkfifo(str(host.keys))
    with pytest.raises(guard.GuardError, match='not a regular file'):
        with guard.probe_key(str(host.keys), LINE, ADMIN_UID, ADMIN_GID):
            pass


def test_prove_reports_the_refusal_as_its_json_message_not_a_traceback(tmp_path, guard, monkeypatch, capsys):
    """What the role's rescue shows (stderr and the JSON object's msg): the refusal, exit 1."""
    host = Host(tmp_path)
    path = plant(host, 'dot-ssh-link')
    before = snapshot(host.outside)
    monkeypatch.setattr(guard, 'listeners', lambda socket_unit: ['127.0.0.1:22'])
    monkeypatch.setattr(guard, 'banner', lambda host, port, timeout=10.0: None)
    monkeypatch.setattr(guard, 'authorized_keys_file', lambda user, home, uid: path)
    logins = []
    real_run = guard.run
    monkeypatch.setattr(guard, 'run', lambda cmd, **kw: logins.append(cmd) if cmd[0] == 'ssh' else real_run(cmd, **kw))
    assert guard.main(['prove', '--user', 'root']) == 1
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert result['failed'] is True
    assert result['msg'].startswith('ssh-guard prove: refusing to write the AuthorizedKeysFile %s as root' % path)
    assert 'Traceback' not in err and result['msg'] in err
    assert logins == [] and snapshot(host.outside) == before
