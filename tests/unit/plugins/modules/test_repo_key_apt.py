# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""repo_key end to end with apt (issue 29): whatever key data repo_key is given, apt must never accept a repository
signed by a key other than the one expected.

gpg makes key A (the one the task expects) and key B (the intruder). Two flat ``file:`` repositories hold a
Packages file and an InRelease file clearsigned by A or by B. Each hostile input of test_repo_key_hostile.py is given
to repo_key with A's fingerprint; when repo_key writes a key file, ``apt-get update`` (all its state in a temporary
directory, the key file as the source's signed-by) must refuse the repository signed by B and accept the one
signed by A. Controls show that the check can fail: the raw inputs of defects 1 and 2 do make apt trust B, and a
key file that holds B does.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from ansible_collections.gpuops.gpu_server.plugins.modules import repo_key
from ansible_collections.gpuops.gpu_server.tests.unit.plugins.modules import test_repo_key_hostile as hostile

TOOLS = ('apt-get', 'gpg', 'gpgv', 'gpgconf')
pytestmark = pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS),
                                reason='needs %s' % ', '.join(TOOLS))

BEGIN = hostile.BEGIN


@pytest.fixture(scope='module')
def world():
    """Keys A and B (binary and armored, as gpg exports them), and a repository signed by each."""
    root = tempfile.mkdtemp(prefix='rk', dir='/tmp')   # short: gpg-agent's socket path is limited
    home = os.path.join(root, 'g')
    os.mkdir(home, 0o700)
    env = dict(os.environ, GNUPGHOME=home, LC_ALL='C')

    def gpg(*args):
        return subprocess.run(['gpg', '--batch', '--homedir', home, '--passphrase', ''] + list(args), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout

    try:
        keys = {}
        for name in ('A', 'B'):
            gpg('--quick-gen-key', 'repo_key test %s <%s@example.invalid>' % (name, name.lower()), 'ed25519', 'sign',
                'never')
            colons = gpg('--with-colons', '--list-keys', '%s@example.invalid' % name.lower()).decode().splitlines()
            fpr = [line.split(':')[9] for line in colons if line.startswith('fpr:')][0]
            repo = os.path.join(root, 'repo' + name)
            os.mkdir(repo)
            packages = ('Package: repo-key-test\nVersion: 1.0\nArchitecture: all\nMaintainer: gpuops <t@example.invalid>\n'
                        'Filename: repo-key-test_1.0_all.deb\nSize: 1\nDescription: repo_key test\n\n').encode()
            with open(os.path.join(repo, 'Packages'), 'wb') as f:
                f.write(packages)
            release = 'Origin: repo_key test %s\nDate: %s\nSHA256:\n %s %d Packages\n' % (
                name, time.strftime('%a, %d %b %Y %H:%M:%S +0000', time.gmtime()), hashlib.sha256(packages).hexdigest(),
                len(packages))
            with open(os.path.join(repo, 'Release'), 'w') as f:
                f.write(release)
            gpg('--local-user', fpr, '--clearsign', '--output', os.path.join(repo, 'InRelease'),
                os.path.join(repo, 'Release'))
            keys[name] = dict(fpr=fpr, binary=gpg('--export', fpr), armored=gpg('--armor', '--export', fpr).decode(),
                              repo=repo)
        yield dict(root=root, keys=keys)
    finally:
        subprocess.run(['gpgconf', '--homedir', home, '--kill', 'all'], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=False)
        shutil.rmtree(root, ignore_errors=True)


def apt_accepts(world, keyring, repo):
    """Whether ``apt-get update`` accepts the flat repository ``repo`` with ``keyring`` as its signed-by; the
    output when it does not must say why (the signature could not be verified)."""
    state = tempfile.mkdtemp(prefix='apt', dir=world['root'])
    for sub in ('lists/partial', 'cache/archives/partial', 'trusted.gpg.d', 'preferences.d'):
        os.makedirs(os.path.join(state, sub))
    with open(os.path.join(state, 'status'), 'w'):
        pass
    sources = os.path.join(state, 'sources.list')
    with open(sources, 'w') as f:
        f.write('deb [signed-by=%s] file:%s ./\n' % (keyring, repo))
    options = {
        'Dir::State': state, 'Dir::State::Lists': os.path.join(state, 'lists'),
        'Dir::State::status': os.path.join(state, 'status'), 'Dir::Cache': os.path.join(state, 'cache'),
        'Dir::Etc::sourcelist': sources, 'Dir::Etc::sourceparts': '-',
        'Dir::Etc::trusted': os.path.join(state, 'trusted.gpg'),
        'Dir::Etc::trustedparts': os.path.join(state, 'trusted.gpg.d'),
        'Dir::Etc::preferencesparts': os.path.join(state, 'preferences.d'),
        'Debug::NoLocking': '1', 'APT::Sandbox::User': 'root', 'Acquire::Languages': 'none',
    }
    command = ['apt-get', 'update']
    for key, value in options.items():
        command += ['-o', '%s=%s' % (key, value)]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ, LC_ALL='C'),
                          timeout=60, check=False)
    output = done.stdout.decode('utf-8', 'replace')
    if done.returncode == 0:
        assert 'NO_PUBKEY' not in output and 'not signed' not in output, output
        return True
    assert 'NO_PUBKEY' in output or 'is not signed' in output, output
    return False


@pytest.fixture
def install(world, run_module, tmp_path):
    """``install(content or url, dest name, fingerprints)`` -> (result, path of the key file or None)."""
    def installer(data, name='key.asc', fingerprints=None):
        dest = tmp_path / name
        args = dict(dest=str(dest), fingerprints=[world['keys']['A']['fpr']] if fingerprints is None else fingerprints)
        if isinstance(data, bytes):       # binary: through a file:// URL, as content is text
            source = tmp_path / 'source.bin'
            source.write_bytes(data)
            args['url'] = 'file://%s' % source
        else:
            args['content'] = data
        result = run_module(repo_key.main, args)
        assert result.failed or dest.exists(), result
        return result, str(dest) if dest.exists() else None
    return installer


@pytest.mark.parametrize('name', sorted(hostile.TRICKS) + ['b_as_subkey_of_a'])
def test_apt_never_trusts_b_when_a_is_expected(world, install, name):
    build = hostile.b_as_subkey_of_a if name == 'b_as_subkey_of_a' else hostile.TRICKS[name][0]
    keys = world['keys']
    result, keyring = install(build(keys['A']['binary'], keys['B']['binary']))
    if keyring is None:
        assert result.failed and name != 'b_as_subkey_of_a', result
        return
    # A key file that repo_key wrote: nothing in it may let B in, and A must be usable.
    assert not apt_accepts(world, keyring, keys['B']['repo']), 'apt trusts B after repo_key checked for A'
    assert apt_accepts(world, keyring, keys['A']['repo'])
    assert result['fingerprints'] == [keys['A']['fpr']]
    assert name == 'b_as_subkey_of_a', 'repo_key accepted the trick %s' % name


@pytest.mark.parametrize('name', ['second_block_with_text_after_begin', 'user_id_swallows_the_rest'])
def test_control_raw_tricks_make_apt_trust_b(world, tmp_path, name):
    """The raw inputs of defects 1 and 2, written as the old repo_key wrote them, do make apt trust B: the test
    above would see it if repo_key wrote them again."""
    keys = world['keys']
    keyring = tmp_path / 'raw.asc'
    keyring.write_text(hostile.TRICKS[name][0](keys['A']['binary'], keys['B']['binary']))
    assert apt_accepts(world, str(keyring), keys['B']['repo'])


@pytest.mark.parametrize('variant', ['armored', 'binary to .gpg', 'binary to .asc', 'crlf with headers and text'])
def test_control_a_installed_by_repo_key_is_accepted_and_b_refused(world, install, variant):
    keys = world['keys']
    armored = keys['A']['armored']
    data, name = {
        'armored': (armored, 'key.asc'),
        'binary to .gpg': (keys['A']['binary'], 'key.gpg'),
        'binary to .asc': (keys['A']['binary'], 'key.asc'),
        # apt 2.6 reads CRLF armor as no key at all; the file repo_key writes has LF line ends.
        'crlf with headers and text': ('Key:\r\n\r\n' + armored.replace(BEGIN + '\n', BEGIN + '\nComment: c\n')
                                       .replace('\n', '\r\n'), 'key.asc'),
    }[variant]
    result, keyring = install(data, name)
    assert not result.failed, result
    assert apt_accepts(world, keyring, keys['A']['repo'])
    assert not apt_accepts(world, keyring, keys['B']['repo'])


def test_control_b_expected_and_installed_is_trusted(world, install):
    keys = world['keys']
    result, keyring = install(keys['A']['armored'] + keys['B']['armored'],
                              fingerprints=[keys['A']['fpr'], keys['B']['fpr']])
    assert not result.failed, result
    assert apt_accepts(world, keyring, keys['B']['repo'])
    assert apt_accepts(world, keyring, keys['A']['repo'])
