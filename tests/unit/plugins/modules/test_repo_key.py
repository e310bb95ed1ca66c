# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""repo_key: fingerprints of the checked-in keys and of keys gpg makes now, then the module against files and a
local HTTP server (armored, binary, wrong fingerprints, an HTML page, check mode, diff, idempotence)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import os
import shutil
import subprocess
import tempfile
import threading

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _openpgp
from ansible_collections.gpuops.gpu_server.plugins.modules import repo_key
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path, load_yaml, snapshot

try:
    from http.server import BaseHTTPRequestHandler, HTTPServer
except ImportError:   # Python 2 has no http.server; these tests need Python 3
    BaseHTTPRequestHandler = HTTPServer = None

EXPECTED = load_yaml('repo_key', 'fingerprints.yml')
ED25519 = EXPECTED['ed25519.asc'][0]
RSA = EXPECTED['rsa2048.asc'][0]


def key_bytes(name):
    with open(fixture_path('repo_key', name), 'rb') as f:
        return f.read()


def key_text(name):
    return key_bytes(name).decode('ascii')


@pytest.fixture
def run(run_module):
    def runner(**args):
        return run_module(repo_key.main, args)
    return runner


@pytest.fixture(scope='module')
def server():
    """A local HTTP server: /<fixture> answers the fixture's bytes, anything else a 404 page."""
    if HTTPServer is None:
        pytest.skip('needs Python 3')

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            name = self.path.lstrip('/')
            path = fixture_path('repo_key', name)
            if '/' in name or not os.path.isfile(path):
                body, status = key_bytes('error-page.html'), 404
            else:
                body, status = key_bytes(name), 200
            self.send_response(status)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = HTTPServer(('127.0.0.1', 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever)
    thread.daemon = True
    thread.start()
    yield 'http://127.0.0.1:%d' % httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


# --- _openpgp: fingerprints -------------------------------------------------------------------------------


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_fingerprints_of_checked_in_keys(name):
    assert _openpgp.primary_fingerprints(key_bytes(name)) == EXPECTED[name]


def test_rfc9580_v4_ed25519_legacy_sample():
    # RFC 9580 appendix A.1: a bare version 4 public key packet and its fingerprint.
    packet = base64.b64decode('xjMEU/NfCxYJKwYBBAHaRw8BAQdAPwmJlL3ZFu1AUxl5NOSofIBzOhKA1i+AEJkuQ+47JAY=')
    assert _openpgp.primary_fingerprints(packet) == ['C959BDBAFA32A2F89A153B678CFDE12197965A9A']


@pytest.fixture(scope='module')
def gpg_keys():
    """Keys gpg makes now (ed25519 with an encryption subkey, RSA 3072), exported armored and binary, with the
    fingerprints ``gpg --show-keys --with-colons`` prints for each export."""
    gpg = shutil.which('gpg')
    if gpg is None:
        pytest.skip('gpg is not installed on the controller')
    home = tempfile.mkdtemp(prefix='gpg', dir='/tmp')   # short: gpg-agent's socket path is limited
    env = dict(os.environ, GNUPGHOME=home, LC_ALL='C')

    def gpg_run(*args):
        return subprocess.run([gpg, '--batch', '--homedir', home, '--passphrase', ''] + list(args), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout

    try:
        gpg_run('--quick-gen-key', 'test ed25519 <ed@example.invalid>', 'ed25519', 'sign', 'never')
        gpg_run('--quick-gen-key', 'test rsa <rsa@example.invalid>', 'rsa3072', 'sign', 'never')
        exports = {}
        for uid in ('ed@example.invalid', 'rsa@example.invalid'):
            fpr = [line.split(':')[9] for line in gpg_run('--with-colons', '--list-keys', uid).decode().splitlines()
                   if line.startswith('fpr:')][0]
            gpg_run('--quick-add-key', fpr, 'cv25519' if uid.startswith('ed') else 'rsa2048', 'encr', 'never')
            exports[uid + ' armored'] = gpg_run('--armor', '--export', uid)
            exports[uid + ' binary'] = gpg_run('--export', uid)
        exports['all armored'] = gpg_run('--armor', '--export')
        exports['all binary'] = gpg_run('--export')
        keys = {}
        for name, data in exports.items():
            path = os.path.join(home, 'export')
            with open(path, 'wb') as f:
                f.write(data)
            colons = gpg_run('--show-keys', '--with-colons', path).decode().splitlines()
            # The fpr line right after each pub line is the primary key's (those after sub lines are subkeys').
            primaries = [colons[i + 1].split(':')[9] for i, line in enumerate(colons) if line.startswith('pub:')]
            keys[name] = (data, primaries)
        yield keys
    finally:
        subprocess.run(['gpgconf', '--homedir', home, '--kill', 'gpg-agent'], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        shutil.rmtree(home, ignore_errors=True)


def test_fingerprints_match_gpg(gpg_keys):
    assert len(gpg_keys) == 6
    for name, (data, primaries) in gpg_keys.items():
        assert primaries, name
        assert _openpgp.primary_fingerprints(data) == primaries, name
    assert len(gpg_keys['all binary'][1]) == 2


def test_armor_without_checksum_and_with_crlf():
    text = key_text('rsa2048.asc')
    assert _openpgp.primary_fingerprints(text.replace('\n', '\r\n').encode()) == [RSA]
    # Without its checksum line, data that ends with "=" padding is read (RFC 9580 leaves the line out); data
    # without padding is not: gpg 2.2 would read the END line as more data (issue 29).
    assert key_text('rfc9580-v6.asc').endswith('==\n-----END PGP PUBLIC KEY BLOCK-----\n')
    assert _openpgp.primary_fingerprints(key_bytes('rfc9580-v6.asc')) == EXPECTED['rfc9580-v6.asc']
    without_crc = '\n'.join(line for line in text.splitlines() if not (line.startswith('=') and len(line) == 5))
    with pytest.raises(_openpgp.OpenPGPError, match='no checksum line, and its data does not end with "=" padding'):
        _openpgp.primary_fingerprints(without_crc.encode())


def test_armor_headers_and_surrounding_text_are_skipped():
    text = key_text('ed25519.asc').replace('-----\n\n', '-----\nComment: a comment\nVersion: 1\n\n', 1)
    assert _openpgp.primary_fingerprints(('Here is our key:\n\n' + text + '\nThanks.\n').encode()) == [ED25519]


def test_two_armored_blocks_are_both_read():
    data = key_bytes('ed25519.asc') + b'\n' + key_bytes('rsa2048.asc')
    assert _openpgp.primary_fingerprints(data) == [ED25519, RSA]


def test_damaged_armor_fails_on_checksum():
    lines = key_text('rsa2048.asc').splitlines()
    # Change one base64 character of the body, keeping it valid base64.
    lines[3] = ('B' if lines[3][0] != 'B' else 'C') + lines[3][1:]
    with pytest.raises(_openpgp.OpenPGPError, match='checksum does not match'):
        _openpgp.primary_fingerprints('\n'.join(lines).encode())


@pytest.mark.parametrize('data, message', [
    (b'', 'empty'),
    (b'  \n', 'empty'),
    (b'<!DOCTYPE html><html>Not Found</html>', 'no "-----BEGIN PGP PUBLIC KEY BLOCK-----" line found'),
    (b'-----BEGIN PGP MESSAGE-----\n\nowE=\n-----END PGP MESSAGE-----\n', 'PGP MESSAGE, not'),
    (b'-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEaw54\n', 'no "-----END PGP PUBLIC KEY BLOCK-----" line'),
    (b'-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nm!!!\n-----END PGP PUBLIC KEY BLOCK-----\n', 'not valid base64'),
    (b'\x99\x00\x20\x04', 'says 32 bytes, only 1 follow'),
    (b'\xb4\x03abc', 'no public key'),                 # a lone user ID packet
    (b'\x94\x01\x04', 'secret key material'),           # a secret key packet
    (b'\x99\x00\x01\x03', 'version 3'),                 # a v3 public key
    (b'\x80\x00', 'reserved tag 0'),
    (b'\xff\xfe\x00garbage', 'no OpenPGP packet|says|partial body length'),
    (b'\xc6', 'cut short'),
])
def test_not_a_public_key(data, message):
    with pytest.raises(_openpgp.OpenPGPError, match=message):
        _openpgp.primary_fingerprints(data)


def test_new_format_partial_body_lengths_are_refused():
    body = _openpgp.packets(key_bytes('rsa2048.gpg'))[0][1]
    assert len(body) > 256
    # The same packet split into a 256-byte partial chunk and a final chunk (new format, tag 6): gpg refuses
    # partial lengths in key material, so apt could not use such a key (issue 29).
    rest = body[256:]
    assert len(rest) < 192
    data = b'\xc6' + b'\xe8' + body[:256] + bytearray([len(rest)]) + rest
    with pytest.raises(_openpgp.OpenPGPError, match='partial body length'):
        _openpgp.primary_fingerprints(data)


@pytest.mark.parametrize('value, expected', [
    ('73d3 b18a 0947 bef6 dfca  5f96 3978 2276 7a5f f8a5', RSA),
    ('0x' + RSA.lower(), RSA),
])
def test_normalize_fingerprint(value, expected):
    assert _openpgp.normalize_fingerprint(value) == expected


@pytest.mark.parametrize('value', ['397822767A5FF8A5', RSA + 'AA', 'Z' * 40, ''])
def test_normalize_fingerprint_refuses(value):
    with pytest.raises(_openpgp.OpenPGPError, match='is not a fingerprint'):
        _openpgp.normalize_fingerprint(value)


# --- the module -------------------------------------------------------------------------------------------


def test_armored_content_written_then_unchanged(tmp_path, run):
    dest = tmp_path / 'keyrings' / 'test.asc'
    result = run(content=key_text('ed25519.asc'), dest=str(dest), fingerprints=[ED25519.lower()])
    assert not result.failed, result
    assert result['changed'] is True
    assert result['fingerprints'] == [ED25519]
    assert result['dest'] == str(dest)
    assert dest.read_bytes() == key_bytes('ed25519.asc')
    assert oct(os.stat(str(dest)).st_mode & 0o7777) == oct(0o644)
    assert oct(os.stat(str(dest.parent)).st_mode & 0o777) == oct(0o755)
    before = snapshot(dest)

    again = run(content=key_text('ed25519.asc'), dest=str(dest), fingerprints=[ED25519])
    assert again['changed'] is False
    assert snapshot(dest) == before, 'an unchanged key must not be rewritten'


def test_binary_url_written_as_received(tmp_path, run, server):
    dest = tmp_path / 'test.gpg'
    result = run(url=server + '/rsa2048.gpg', dest=str(dest), fingerprints=[RSA])
    assert not result.failed, result
    assert result['changed'] is True
    assert result['fingerprints'] == [RSA]
    assert dest.read_bytes() == key_bytes('rsa2048.gpg')
    assert run(url=server + '/rsa2048.gpg', dest=str(dest), fingerprints=[RSA])['changed'] is False


def test_armored_url_stays_armored_and_replaces_other_key(tmp_path, run, server):
    dest = tmp_path / 'test.asc'
    dest.write_bytes(key_bytes('ed25519.asc'))
    result = run(url=server + '/rsa2048.asc', dest=str(dest), fingerprints=[RSA])
    assert result['changed'] is True
    assert dest.read_bytes() == key_bytes('rsa2048.asc')


def test_file_url(tmp_path, run):
    dest = tmp_path / 'test.asc'
    result = run(url='file://' + fixture_path('repo_key', 'both.asc'), dest=str(dest), fingerprints=[RSA, ED25519])
    assert not result.failed, result
    assert dest.read_bytes() == key_bytes('both.asc')


def test_without_fingerprints_any_public_key_is_accepted(tmp_path, run):
    dest = tmp_path / 'test.asc'
    result = run(content=key_text('both.asc'), dest=str(dest))
    assert not result.failed, result
    assert result['fingerprints'] == [ED25519, RSA]


def test_fingerprints_with_spaces_and_case(tmp_path, run):
    spaced = ' '.join(RSA[i:i + 4] for i in range(0, 40, 4)).lower()
    result = run(content=key_text('both.asc'), dest=str(tmp_path / 'k.asc'), fingerprints=[spaced, ED25519])
    assert not result.failed, result


@pytest.mark.parametrize('key, listed, unexpected, missing', [
    ('ed25519.asc', [RSA], [ED25519], [RSA]),         # the wrong key
    ('both.asc', [RSA], [ED25519], []),               # an extra key in the file
    ('ed25519.asc', [ED25519, RSA], [], [RSA]),       # a listed key missing from the file
])
def test_wrong_fingerprints_fail_and_write_nothing(tmp_path, run, key, listed, unexpected, missing):
    dest = tmp_path / 'test.asc'
    result = run(content=key_text(key), dest=str(dest), fingerprints=listed)
    assert result.failed
    assert result['changed'] is False
    assert not dest.exists()
    msg = result['msg']
    for fpr in listed:
        assert fpr in msg
    for fpr in unexpected:
        assert 'not expected: %s' % fpr in msg
    for fpr in missing:
        assert 'expected but not found: %s' % fpr in msg
    assert result['found_fingerprints'] == EXPECTED[key]


def test_wrong_fingerprint_leaves_existing_key_untouched(tmp_path, run):
    dest = tmp_path / 'test.asc'
    dest.write_bytes(key_bytes('rsa2048.asc'))
    before = snapshot(dest)
    result = run(content=key_text('ed25519.asc'), dest=str(dest), fingerprints=[RSA])
    assert result.failed
    assert snapshot(dest) == before


def test_html_page_fails_and_writes_nothing(tmp_path, run, server):
    dest = tmp_path / 'test.asc'
    result = run(url=server + '/error-page.html', dest=str(dest))
    assert result.failed
    assert 'not a usable OpenPGP public key' in result['msg']
    assert '<!DOCTYPE html>' in result['msg']
    assert not dest.exists()


def test_http_error_fails_and_writes_nothing(tmp_path, run, server):
    dest = tmp_path / 'test.asc'
    result = run(url=server + '/missing.asc', dest=str(dest), timeout=5)
    assert result.failed
    assert 'HTTP 404' in result['msg']
    assert not dest.exists()


def test_oversized_answer_fails(tmp_path, run, server, monkeypatch):
    monkeypatch.setattr(repo_key, 'MAX_KEY_BYTES', 100)
    result = run(url=server + '/rsa2048.asc', dest=str(tmp_path / 'k.asc'))
    assert result.failed
    assert 'more than 100 bytes' in result['msg']


def test_check_mode_absent_dest(tmp_path, run, server):
    dest = tmp_path / 'keyrings' / 'test.asc'
    result = run(url=server + '/rsa2048.asc', dest=str(dest), fingerprints=[RSA], _ansible_check_mode=True)
    assert not result.failed, result
    assert result['changed'] is True
    assert result['fingerprints'] == [RSA]
    assert not dest.parent.exists(), 'check mode must not create the directory'


def test_check_mode_checks_fingerprints_too(tmp_path, run):
    result = run(content=key_text('rsa2048.asc'), dest=str(tmp_path / 'k.asc'), fingerprints=[ED25519],
                 _ansible_check_mode=True)
    assert result.failed


def test_check_mode_then_real_then_again(tmp_path, run):
    """check mode, for real, check mode, for real: changed, changed, unchanged, unchanged."""
    dest = tmp_path / 'test.asc'
    dest.write_bytes(key_bytes('ed25519.asc'))
    os.chmod(str(dest), 0o644)
    args = dict(content=key_text('rsa2048.asc'), dest=str(dest), fingerprints=[RSA])
    before = snapshot(dest)
    assert run(_ansible_check_mode=True, **args)['changed'] is True
    assert snapshot(dest) == before
    assert run(**args)['changed'] is True
    assert run(_ansible_check_mode=True, **args)['changed'] is False
    assert run(**args)['changed'] is False
    assert dest.read_bytes() == key_bytes('rsa2048.asc')


def test_mode_corrected_without_rewriting(tmp_path, run):
    dest = tmp_path / 'test.asc'
    dest.write_bytes(key_bytes('rsa2048.asc'))
    os.chmod(str(dest), 0o600)
    ino = os.stat(str(dest)).st_ino
    result = run(content=key_text('rsa2048.asc'), dest=str(dest), _ansible_diff=True)
    assert result['changed'] is True
    assert oct(os.stat(str(dest)).st_mode & 0o7777) == oct(0o644)
    assert os.stat(str(dest)).st_ino == ino
    assert result['diff'] == [{'before_header': str(dest), 'after_header': str(dest),
                               'before': {'mode': '0600'}, 'after': {'mode': '0644'}}]


def test_diff_shows_armored_text_and_binary_fingerprints(tmp_path, run):
    dest = tmp_path / 'test.asc'
    result = run(content=key_text('rsa2048.asc'), dest=str(dest), _ansible_diff=True, _ansible_check_mode=True)
    assert result['diff'][0]['before'] == ''
    assert result['diff'][0]['after'] == key_text('rsa2048.asc')

    dest.write_bytes(key_bytes('rsa2048.gpg'))
    result = run(content=key_text('rsa2048.asc'), dest=str(dest), _ansible_diff=True)
    assert RSA in result['diff'][0]['before'] and 'binary' in result['diff'][0]['before']
    assert result['diff'][0]['after'] == key_text('rsa2048.asc')


def test_symlinked_dest_is_written_through(tmp_path, run):
    target = tmp_path / 'real.asc'
    target.write_bytes(key_bytes('ed25519.asc'))
    link = tmp_path / 'link.asc'
    link.symlink_to(target)
    assert run(content=key_text('rsa2048.asc'), dest=str(link))['changed'] is True
    assert link.is_symlink()
    assert target.read_bytes() == key_bytes('rsa2048.asc')


@pytest.mark.parametrize('args, message', [
    (dict(content='x', url='http://127.0.0.1/'), 'mutually exclusive'),
    (dict(), 'one of the following is required'),
    (dict(content='x', fingerprints=['397822767A5FF8A5']), 'is not a fingerprint'),
    (dict(content='x', timeout=0), 'timeout must be a positive number'),
])
def test_bad_arguments(tmp_path, run, args, message):
    result = run(dest=str(tmp_path / 'k.asc'), **args)
    assert result.failed
    assert message in result['msg']
    assert not (tmp_path / 'k.asc').exists()


def test_dest_is_a_directory(tmp_path, run):
    result = run(content=key_text('rsa2048.asc'), dest=str(tmp_path))
    assert result.failed
    assert 'is a directory' in result['msg']
