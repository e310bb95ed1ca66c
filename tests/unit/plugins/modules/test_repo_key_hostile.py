# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""repo_key against hostile key data and servers (issue 29): key files that apt reads differently from the module,
keys apt cannot use, a key packet too large for its fingerprint, a server that sends a byte now and then.

Key A (what the task expects) is the ed25519 fixture, key B (the intruder) the RSA one. The builders of the hostile
inputs take the binary keys, so that test_repo_key_apt.py can build the same inputs from keys gpg signs with.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import os
import threading
import time
import zlib

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _openpgp
from ansible_collections.gpuops.gpu_server.plugins.modules import repo_key
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import crc24_bitwise, fixture_path, load_yaml, snapshot

try:
    from http.server import BaseHTTPRequestHandler, HTTPServer
    from socketserver import ThreadingMixIn
except ImportError:   # Python 2; these tests need Python 3
    BaseHTTPRequestHandler = HTTPServer = ThreadingMixIn = None

EXPECTED = load_yaml('repo_key', 'fingerprints.yml')
A = EXPECTED['ed25519.asc'][0]
B = EXPECTED['rsa2048.asc'][0]
BEGIN = '-----BEGIN PGP PUBLIC KEY BLOCK-----'
END = '-----END PGP PUBLIC KEY BLOCK-----'


def fixture_text(name):
    with open(fixture_path('repo_key', name)) as f:
        return f.read()


def binary_key(name):
    """A fixture key's binary packets, decoded here and not by the module under test."""
    body = [line for line in fixture_text(name).splitlines()[2:] if line and line[0] not in '=-']
    return base64.b64decode(''.join(body))


KEY_A = binary_key('ed25519.asc')
KEY_B = binary_key('rsa2048.asc')


# --- hostile inputs: each builder returns the text (str) that the module is given -------------------------


def b64_lines(data):
    encoded = base64.b64encode(data).decode('ascii')
    return '\n'.join(encoded[i:i + 64] for i in range(0, len(encoded), 64))


def crc_line(data):
    return '=' + base64.b64encode(crc24_bitwise(data).to_bytes(3, 'big')).decode('ascii')


def armored(data, begin=BEGIN, end=END):
    """``data`` armored as gpg writes it, with the BEGIN and END lines given."""
    return '%s\n\n%s\n%s\n%s\n' % (begin, b64_lines(data), crc_line(data), end)


def second_block_with_text_after_begin(a, b):
    """Defect 1: B in a second block whose BEGIN line has text after the dashes. The old module skipped that
    block; apt starts a block at any line that begins with the marker and reads A and B."""
    return armored(a) + '\n' + armored(b, begin=BEGIN + ' (mirror copy)')


def user_id_swallows_the_rest(a, b, separator=''):
    """Defect 2: one block, no empty line after BEGIN. Its first lines hold A and a user ID packet header whose
    length covers B, which follows after an empty line (or ``separator``, a line apt does not take as empty).
    The old module read A with a user ID; apt skips every line before the empty one and reads B alone."""
    prefix = a
    header = b'\xb5' + len(b).to_bytes(2, 'big')     # legacy user ID packet, two-octet length
    while (len(prefix) + len(header)) % 3:          # no base64 padding at the seam
        prefix += b'\xb4\x00'                          # an empty user ID packet
    lines = [BEGIN]
    if separator:
        lines.append(separator)
    lines += [b64_lines(prefix + header), '', b64_lines(b), END]
    return '\n'.join(lines) + '\n'


def begin_line_not_pgp(a, b):
    """A variant for apt 2.6 and 2.7 (apt-key's awk): any line that begins with "-----BEGIN" starts a block."""
    return armored(a) + '\n' + armored(b, begin='-----BEGIN MIRROR COPY-----', end='-----END MIRROR COPY-----')


def data_after_checksum(a, b):
    """B's lines between A's checksum line and the END line: apt appends every line not starting with = or -."""
    lines = armored(a).splitlines()
    return '\n'.join(lines[:-1] + [b64_lines(b), lines[-1]]) + '\n'


def cr_only(a, b):
    """Defect 3: CR-only line ends; the old module read the key, apt finds no key in one long line."""
    return armored(a).replace('\n', '\r')


def partial_body_lengths(a, b):
    """Defect 3: A's key packet in partial-length chunks; the old module read it, gpg refuses it."""
    found = packets_of(a)
    body = found[0][1]
    chunk = 1
    while chunk * 2 < len(body):
        chunk *= 2
    rest = body[chunk:]
    assert len(rest) < 192
    # A new-format key packet: a partial length of ``chunk`` octets, then the last length and octets.
    data = bytes(bytearray([0xC0 | 6, 224 + chunk.bit_length() - 1])) + body[:chunk] + bytes(bytearray([len(rest)])) + rest
    return armored(data + a[len(encoded_header(found[0])) + len(body):])


def compressed_b(a, b):
    """A, then B inside a compressed data packet: a reader that unpacks it would find a key nobody checked."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = b'\x01' + squeeze.compress(b) + squeeze.flush()
    return armored(a + b'\xa2' + len(body).to_bytes(4, 'big') + body)


def b_as_subkey_of_a(a, b):
    """A, then B's key packet as a subkey of A with B's own signatures: no binding signature of A, so gpg drops it."""
    key_b = packets_of(b)[0][1]
    sigs = b''.join(encoded_header((tag, body)) + body for tag, body in packets_of(b) if tag == 2)
    return armored(a + b'\xb9' + len(key_b).to_bytes(2, 'big') + key_b + sigs)


def packets_of(data):
    """``[(tag, body)]`` of gpg's legacy-format packets, read here and not by the module under test."""
    found, pos = [], 0
    data = bytearray(data)
    while pos < len(data):
        ctb = data[pos]
        assert ctb & 0xC0 == 0x80, 'gpg writes legacy-format packets for v4 keys'
        octets = (1, 2, 4)[ctb & 3]
        length = int.from_bytes(bytes(data[pos + 1:pos + 1 + octets]), 'big')
        start = pos + 1 + octets
        found.append(((ctb >> 2) & 0x0F, bytes(data[start:start + length])))
        pos = start + length
    return found


def encoded_header(packet):
    tag, body = packet
    if len(body) < 0x100:
        return bytes(bytearray([0x80 | (tag << 2), len(body)]))
    return bytes(bytearray([0x80 | (tag << 2) | 1])) + len(body).to_bytes(2, 'big')


# Every trick: (builder, what the refusal says). All are refused.
TRICKS = {
    'second_block_with_text_after_begin': (second_block_with_text_after_begin, 'must be exactly'),
    'user_id_swallows_the_rest': (user_id_swallows_the_rest, 'empty line that must separate'),
    'whitespace_line_after_begin': (lambda a, b: user_id_swallows_the_rest(a, b, separator=' '),
                                    'empty line that must separate'),
    'begin_line_not_pgp': (begin_line_not_pgp, 'must be exactly'),
    'data_after_checksum': (data_after_checksum, 'follows the checksum line'),
    'cr_only': (cr_only, 'carriage return'),
    'partial_body_lengths': (partial_body_lengths, 'partial body length'),
    'compressed_b': (compressed_b, 'tag 8'),
}


@pytest.fixture
def run(run_module):
    def runner(**args):
        return run_module(repo_key.main, args)
    return runner


# --- one test per defect of issue 29 ---------------------------------------------------------------------


def test_defect1_second_block_with_text_after_begin_is_refused(tmp_path, run):
    dest = tmp_path / 'k.asc'
    result = run(content=second_block_with_text_after_begin(KEY_A, KEY_B), dest=str(dest), fingerprints=[A])
    assert result.failed, result
    assert '-----BEGIN PGP PUBLIC KEY BLOCK----- (mirror copy)' in result['msg']
    assert not dest.exists()


def test_defect2_data_before_the_empty_line_is_refused(tmp_path, run):
    dest = tmp_path / 'k.asc'
    result = run(content=user_id_swallows_the_rest(KEY_A, KEY_B), dest=str(dest), fingerprints=[A])
    assert result.failed, result
    assert 'empty line that must separate the headers from the data' in result['msg']
    assert not dest.exists()


def test_defect3_cr_only_line_ends_are_refused(tmp_path, run):
    dest = tmp_path / 'k.asc'
    result = run(content=cr_only(KEY_A, KEY_B), dest=str(dest), fingerprints=[A])
    assert result.failed, result
    assert 'CR-only' in result['msg']
    assert not dest.exists()


def test_defect3_partial_body_lengths_are_refused(tmp_path, run):
    dest = tmp_path / 'k.asc'
    result = run(content=partial_body_lengths(KEY_A, KEY_B), dest=str(dest), fingerprints=[A])
    assert result.failed, result
    assert 'partial body length' in result['msg']
    assert not dest.exists()


def test_defect4_v4_key_packet_over_65535_bytes_fails_cleanly(tmp_path, run):
    # A v4 RSA key packet of 70,000 bytes (a 65,528-bit modulus, then filler): its fingerprint cannot cover it.
    body = b'\x04\x5f\x00\x00\x00\x01' + (8 * 8191).to_bytes(2, 'big') + b'\xff' * 8191 + b'\x00\x11\x01\x00\x01'
    body += b'\x00' * (70000 - len(body))
    data = b'\x9a' + len(body).to_bytes(4, 'big') + body    # legacy format, four-octet length
    dest = tmp_path / 'k.asc'
    result = run(content=armored(data), dest=str(dest), fingerprints=[A])
    assert result.failed, result
    assert 'a version 4 key packet of 70000 bytes' in result['msg']
    assert not dest.exists()


@pytest.fixture
def dripping_server():
    """A local HTTP server that sends a byte every 50 ms for 4 s: in the body (/body) or in the headers (/headers)."""
    if HTTPServer is None:
        pytest.skip('needs Python 3')
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def drip(self, byte):
            end = time.monotonic() + 4
            while not stop.is_set() and time.monotonic() < end:
                self.wfile.write(byte)
                self.wfile.flush()
                stop.wait(0.05)

        def do_GET(self):
            try:
                if self.path == '/headers':
                    self.wfile.write(b'HTTP/1.1 200 OK\r\nX-Slow: ')
                    self.drip(b'a')
                else:
                    self.send_response(200)
                    self.send_header('Content-Length', '100000')
                    self.end_headers()
                    self.drip(b'-')
            except (IOError, OSError):   # the client gave up
                pass
            self.close_connection = True

        def log_message(self, *args):
            pass

    class Server(ThreadingMixIn, HTTPServer):
        daemon_threads = True

    httpd = Server(('127.0.0.1', 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever)
    thread.daemon = True
    thread.start()
    yield 'http://127.0.0.1:%d' % httpd.server_address[1]
    stop.set()
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize('path', ['/body', '/headers'])
def test_defect5_one_deadline_for_the_whole_download(tmp_path, run, dripping_server, path):
    dest = tmp_path / 'k.asc'
    started = time.monotonic()
    result = run(url=dripping_server + path, dest=str(dest), fingerprints=[A], timeout=1)
    elapsed = time.monotonic() - started
    assert elapsed < 2.5, 'a server that keeps sending must not hold the module past its timeout (%.1f s)' % elapsed
    assert result.failed, result
    assert 'within 1 seconds' in result['msg'] and 'whole download' in result['msg']
    assert not dest.exists()


# --- every trick, and what is written instead of the input ------------------------------------------------


@pytest.mark.parametrize('name', sorted(TRICKS))
def test_tricks_are_refused(tmp_path, run, name):
    build, message = TRICKS[name]
    dest = tmp_path / 'k.asc'
    result = run(content=build(KEY_A, KEY_B), dest=str(dest), fingerprints=[A])
    assert result.failed, result
    assert message in result['msg']
    assert result['msg'].startswith('content is not a usable OpenPGP public key: ')
    assert not dest.exists()


def test_b_as_subkey_is_written_as_checked(tmp_path, run):
    # The module sees A's primary key only; gpg drops the unbound subkey (test_repo_key_apt.py shows apt does).
    dest = tmp_path / 'k.asc'
    result = run(content=b_as_subkey_of_a(KEY_A, KEY_B), dest=str(dest), fingerprints=[A])
    assert not result.failed, result
    assert result['fingerprints'] == [A]


def test_only_the_checked_packets_are_written(tmp_path, run):
    """Headers, text around the block and CRLF line ends are not copied: the file holds the packets, armored the
    one way gpg armors them."""
    text = fixture_text('ed25519.asc')
    lines = text.splitlines()
    lines[1:1] = ['Comment: https://example.invalid/key.asc', 'Version: 1']
    messy = 'Our signing key:\r\n\r\n' + '\r\n'.join(lines) + '\r\n\r\nThanks.\r\n'
    dest = tmp_path / 'k.asc'
    result = run(content=messy, dest=str(dest), fingerprints=[A])
    assert not result.failed, result
    assert dest.read_text() == text
    assert run(content=messy, dest=str(dest), fingerprints=[A])['changed'] is False


def test_a_file_written_as_received_is_normalised_once(tmp_path, run):
    text = fixture_text('ed25519.asc')
    raw = text.replace(BEGIN + '\n', BEGIN + '\nComment: as the vendor serves it\n')
    dest = tmp_path / 'k.asc'
    dest.write_text(raw)
    result = run(content=raw, dest=str(dest), fingerprints=[A], _ansible_diff=True)
    assert result['changed'] is True
    assert 'Comment' in result['diff'][0]['before'] and result['diff'][0]['after'] == text
    assert dest.read_text() == text
    before = snapshot(dest)
    assert run(content=raw, dest=str(dest), fingerprints=[A])['changed'] is False
    assert snapshot(dest) == before


def test_format_follows_dest(tmp_path, run):
    """.gpg gets a binary keyring, any other name armor, whatever the source sent."""
    gpg, asc = tmp_path / 'k.gpg', tmp_path / 'k.asc'
    assert not run(content=fixture_text('rsa2048.asc'), dest=str(gpg), fingerprints=[B]).failed
    with open(fixture_path('repo_key', 'rsa2048.gpg'), 'rb') as f:
        assert gpg.read_bytes() == f.read()
    assert not run(url='file://' + fixture_path('repo_key', 'rsa2048.gpg'), dest=str(asc), fingerprints=[B]).failed
    assert asc.read_text() == fixture_text('rsa2048.asc')


def test_check_mode_diff_shows_the_normalised_key(tmp_path, run):
    text = fixture_text('ed25519.asc')
    dest = tmp_path / 'k.asc'
    result = run(content='Key:\n\n' + text, dest=str(dest), _ansible_check_mode=True, _ansible_diff=True)
    assert result['changed'] is True
    assert result['diff'][0]['after'] == text
    assert not dest.exists()


def test_oversized_content_fails(tmp_path, run):
    text = fixture_text('ed25519.asc')
    result = run(content=text + 'x' * _openpgp.MAX_DATA_BYTES, dest=str(tmp_path / 'k.asc'))
    assert result.failed
    assert 'at most %d' % _openpgp.MAX_DATA_BYTES in result['msg']


def test_fetch_failure_is_reported_not_raised(tmp_path, run):
    # Nothing listens on the port: fetch_url's own failure arrives as the module's message.
    result = run(url='http://127.0.0.1:9/k.asc', dest=str(tmp_path / 'k.asc'), timeout=5)
    assert result.failed
    assert 'Could not download the key from http://127.0.0.1:9/k.asc' in result['msg']
    assert not os.path.exists(str(tmp_path / 'k.asc'))
