# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""_openpgp against models of apt's two armor readers, and properties of the packet reader and writer (issue 29).

Whatever armored text the module accepts, apt must read the very same packets from it: apt 2.6 and 2.7 through
apt-key's awk script and ``base64 -d``, apt 2.9.15 and later through its own reader in apt-pkg/contrib/gpgv.cc.
Both are modelled here from their documented behaviour (one line at a time, a state per line) and compared with
the module on texts that hypothesis builds by damaging a real key file line by line.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import binascii
import os
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _openpgp
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import crc24_bitwise, fixture_path, load_yaml

EXPECTED = load_yaml('repo_key', 'fingerprints.yml')
BEGIN = '-----BEGIN PGP PUBLIC KEY BLOCK-----'
END = '-----END PGP PUBLIC KEY BLOCK-----'
FAST = settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def fixture_text(name):
    with open(fixture_path('repo_key', name)) as f:
        return f.read()


A_TEXT = fixture_text('ed25519.asc')
B_TEXT = fixture_text('rsa2048.asc')

# --- models of apt's readers --------------------------------------------------------------------------------


def base64_groups(text):
    """Base64 decoded four characters at a time, padding allowed at the end of any group (coreutils' base64 -d
    reads concatenated padded streams so); None where ``base64 -d`` fails."""
    text = ''.join(text.split('\n'))
    if len(text) % 4:
        return None
    out = b''
    for i in range(0, len(text), 4):
        try:
            out += base64.b64decode(text[i:i + 4], validate=True)
        except (binascii.Error, ValueError):
            return None
    return out


def apt_key_awk(text):
    """apt 2.6/2.7: apt-key's dearmor_keyring, an awk script over LF-separated records, piped to base64 -d."""
    state, printed = 0, []
    records = text.split('\n')
    if records and records[-1] == '':
        records.pop()
    for record in records:
        if record.startswith('-----BEGIN'):
            state = 1
        if record == '' and state == 1:
            state = 2
        if record[:1] not in ('', '=', '-') and state == 2:
            printed.append(record)
        if record.startswith('-----END'):
            state = 0
    return base64_groups('\n'.join(printed)) if printed else b''


def apt_gpgv_cc(text):
    """apt >= 2.9.15: lines stripped of white space; BEGIN by prefix; data after the first empty line; every block
    appended; the file is ignored (None) unless it ends after an END line."""
    state, data = 0, ''
    for line in text.split('\n'):
        line = line.strip(' \t\r\n\v\f')
        if line.startswith(BEGIN):
            state = 1
        elif state == 1 and line == '':
            state = 2
        elif state == 2 and line and line[0] not in '=-':
            data += line
        elif line.startswith('-----END'):
            state = 3
    if state != 3:
        return None
    return base64_groups(data)


def test_models_read_the_fixtures_as_gpg_exported_them():
    with open(fixture_path('repo_key', 'rsa2048.gpg'), 'rb') as f:
        binary = f.read()
    assert apt_key_awk(B_TEXT) == apt_gpgv_cc(B_TEXT) == _openpgp.dearmor(B_TEXT) == binary


# --- hostile texts: real key files, with what may surround them, damaged line by line -----------------------

KEY_FILES = {'A': A_TEXT.splitlines(), 'B': B_TEXT.splitlines()}
B_DATA_LINES = [line for line in KEY_FILES['B'][2:] if line and line[0] not in '=-']

ODD_LINES = [
    '', ' ', '\t', 'Comment: a comment', 'Version: 1', 'x', 'Here is the key:',
    BEGIN, END, BEGIN + ' (mirror copy)', ' ' + BEGIN, BEGIN + ' ', END + ' x', '-----BEGIN MIRROR-----',
    '-----END', '-----BEGIN PGP SIGNATURE-----', '=', '==', '=AAAA', '=R4Z+', 'AAAA', 'AAA=', 'mQ==', '-', '- x',
] + B_DATA_LINES[:3]


@st.composite
def key_block(draw):
    """The lines of key A or B as gpg armors it, with armor headers, trailing blanks, or no checksum line."""
    lines = list(KEY_FILES[draw(st.sampled_from(sorted(KEY_FILES)))])
    lines[0] += draw(st.sampled_from(['', '', ' ', '\t']))
    lines[-1] += draw(st.sampled_from(['', '', ' ']))
    if draw(st.booleans()):
        del lines[-2]
    lines[1:1] = draw(st.lists(st.sampled_from(['Comment: https://example.invalid/k.asc', 'Version: GnuPG v2']),
                               max_size=2))
    return lines


TEXT_AROUND = st.lists(st.sampled_from(['', 'Our signing key:', '<pre>', 'Thanks.', '  indented', 'a: b']), max_size=2)
KEY_FILE = st.lists(st.tuples(TEXT_AROUND, key_block()), min_size=1, max_size=2)

EDITS = st.one_of(
    st.tuples(st.just('insert'), st.integers(0, 60), st.sampled_from(ODD_LINES)),
    st.tuples(st.just('delete'), st.integers(0, 60), st.none()),
    st.tuples(st.just('append'), st.integers(0, 60), st.sampled_from([' ', '\t', '\r', 'x', '=', ' (copy)'])),
    st.tuples(st.just('prepend'), st.integers(0, 60), st.sampled_from([' ', '\t', 'x', '-'])),
    st.tuples(st.just('duplicate'), st.integers(0, 60), st.none()),
)


def damaged(key_file, edits, line_end):
    lines = []
    for around, block in key_file:
        lines += around + block
    for kind, where, what in edits:
        at = where % (len(lines) + 1)
        if kind == 'insert':
            lines.insert(at, what)
        elif lines:
            at = min(at, len(lines) - 1)
            if kind == 'delete':
                del lines[at]
            elif kind == 'append':
                lines[at] += what
            elif kind == 'prepend':
                lines[at] = what + lines[at]
            else:
                lines.insert(at, lines[at])
    return line_end.join(lines) + line_end


@FAST
@given(KEY_FILE, st.lists(EDITS, max_size=3), st.sampled_from(['\n', '\n', '\n', '\r\n', '\r']))
def test_what_the_module_accepts_apt_reads_the_same(key_file, edits, line_end):
    text = damaged(key_file, edits, line_end)
    try:
        ours = _openpgp.dearmor(text)
    except _openpgp.OpenPGPError:
        return
    assert apt_gpgv_cc(text) == ours
    if '\r' in text:
        # apt-key's awk keeps the CR: it never sees the empty line after BEGIN and reads no key at all. That
        # key file would fail in apt, which is why the module writes its own armor with LF line ends.
        assert apt_key_awk(text) == b''
    else:
        assert apt_key_awk(text) == ours


@FAST
@given(st.text(alphabet='-BEGINPGPUBLICKYO =\r\n\tmQ+/Aa0:', max_size=300))
def test_any_text_is_read_or_refused_with_openpgp_error(text):
    try:
        _openpgp.read_public_keys(text.encode('ascii'))
    except _openpgp.OpenPGPError:
        pass


@FAST
@given(st.binary(max_size=600))
def test_any_bytes_are_read_or_refused_with_openpgp_error(data):
    try:
        keys = _openpgp.read_public_keys(data)
    except _openpgp.OpenPGPError:
        return
    assert keys.fingerprints


@settings(max_examples=200, deadline=None, database=None)
@given(st.integers(4, 0xFFFFFFFF), st.integers(0, 255))
def test_huge_declared_lengths_are_refused(length, tag_byte):
    # Four-octet lengths up to 4 GiB over 3 bytes: a clean refusal, never a MemoryError or a slice past the end.
    for header in (bytearray([0x80 | 6 << 2 | 2]) + bytearray(length.to_bytes(4, 'big')),
                   bytearray([0xC0 | 6, 0xFF]) + bytearray(length.to_bytes(4, 'big'))):
        with pytest.raises(_openpgp.OpenPGPError, match='says %d bytes, only 3 follow' % length):
            _openpgp.packets(bytes(header) + bytes(bytearray([tag_byte])) * 3)


# --- the packet writer ------------------------------------------------------------------------------------------

PACKETS = st.builds(
    _openpgp.Packet,
    st.sampled_from([2, 6, 13, 14, 17]),
    st.one_of(st.binary(max_size=300), st.integers(8000, 70000).map(lambda n: b'\x01' * n)),
    st.booleans(),
).filter(lambda p: p.new_format or p.tag < 16)


@settings(max_examples=100, deadline=None, database=None)
@given(st.lists(PACKETS, max_size=5))
def test_written_packets_read_back_the_same(packet_list):
    data = b''.join(_openpgp.encode_packet(p) for p in packet_list)
    assert [(p.tag, p.body) for p in _openpgp.packets(data)] == [(p.tag, p.body) for p in packet_list]


def test_writer_keeps_gpgs_encoding():
    for name in ('ed25519.asc', 'rsa2048.asc', 'both.asc'):
        keys = _openpgp.read_public_keys(fixture_text(name).encode('ascii'))
        assert keys.armored() == fixture_text(name)
        assert _openpgp.read_public_keys(keys.binary()).fingerprints == EXPECTED[name]


def test_v6_key_gets_a_checksum_line_and_reads_back():
    keys = _openpgp.read_public_keys(fixture_text('rfc9580-v6.asc').encode('ascii'))
    text = keys.armored()
    assert text.startswith(BEGIN + '\n\n') and text.endswith('\n' + END + '\n')
    assert _openpgp.primary_fingerprints(text.encode('ascii')) == EXPECTED['rfc9580-v6.asc']


@settings(max_examples=200, deadline=None, database=None)
@given(st.binary(max_size=200))
def test_crc24_table_matches_rfc_4880(data):
    assert _openpgp.crc24(data) == crc24_bitwise(data)


# --- bounds ------------------------------------------------------------------------------------------------------


def test_packet_count_is_bounded(monkeypatch):
    monkeypatch.setattr(_openpgp, 'MAX_PACKETS', 10)
    with pytest.raises(_openpgp.OpenPGPError, match='more than 10 packets'):
        _openpgp.packets(b'\xb4\x00' * 11)


def test_data_size_is_bounded():
    with pytest.raises(_openpgp.OpenPGPError, match='at most'):
        _openpgp.packets(b'\xb4\x00' * (_openpgp.MAX_DATA_BYTES // 2 + 1))


@pytest.mark.parametrize('data, message', [
    (b'\xb4\x00', 'no public key'),
    (b'\x98\x06\x04\x00\x00\x00\x00\x01', 'cut short'),                   # RSA with no numbers
    (b'\x98\x07\x04\x00\x00\x00\x00\x63\x00', 'algorithm 99'),             # an unknown primary key algorithm
    (b'\x98\x0a\x04\x00\x00\x00\x00\x1b' + b'\x00' * 4, '4 octets of key material, not 32'),
    (b'\x98\x08\x06\x00\x00\x00\x00\x1b\x00\x00', 'cut short'),
    (b'\x98\x0e\x06\x00\x00\x00\x00\x1b\x00\x00\x00\x05\x00\x00\x00\x00', 'says 5 octets'),
    (b'\x9b' + b'\x00' * 5, 'indeterminate|cut short|says'),
    (b'\x9f', 'indeterminate length'),
    (b'\xa3\x01', 'indeterminate length'),                                 # a compressed packet to the end
    (b'\x98\x00\xa0\x00', 'tag 8|public key'),
    (b'\x98\x07\x04\x00\x00\x00\x00\x16\x00', 'bad curve'),                  # EdDSA with an empty curve OID
])
def test_malformed_keys(data, message):
    with pytest.raises(_openpgp.OpenPGPError, match=message):
        _openpgp.read_public_keys(data)


def test_unknown_subkey_algorithm_is_kept_and_trust_packets_dropped():
    keys = _openpgp.read_public_keys(fixture_text('rsa2048.asc').encode('ascii'))
    sub = _openpgp.Packet(14, b'\x04\x00\x00\x00\x00\x63' + b'\x01\x02', False)
    trust = _openpgp.Packet(12, b'\x00\x00', False)
    data = b''.join(_openpgp.encode_packet(p) for p in keys.packets + [trust, sub])
    again = _openpgp.read_public_keys(data)
    assert again.packets == keys.packets + [sub]


# --- gpg, where it is installed: what the module accepts, gpg reads as the same keys --------------------------


@pytest.fixture(scope='module')
def gpg_show_keys():
    gpg = shutil.which('gpg')
    if gpg is None:
        pytest.skip('gpg is not installed')
    home = tempfile.mkdtemp(prefix='gpg', dir='/tmp')

    def show(text):
        path = os.path.join(home, 'key.asc')
        with open(path, 'w', newline='') as f:
            f.write(text)
        out = subprocess.run([gpg, '--batch', '--homedir', home, '--with-colons', '--show-keys', path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, LC_ALL='C'), check=False)
        lines = out.stdout.decode().splitlines()
        return [lines[i + 1].split(':')[9] for i, line in enumerate(lines) if line.startswith('pub:')]

    yield show
    subprocess.run(['gpgconf', '--homedir', home, '--kill', 'all'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   check=False)
    shutil.rmtree(home, ignore_errors=True)


@settings(max_examples=40, deadline=None, database=None)
@given(KEY_FILE, st.lists(EDITS, max_size=2), st.sampled_from(['\n', '\r\n']))
def test_what_the_module_accepts_gpg_reads_the_same(gpg_show_keys, key_file, edits, line_end):
    text = damaged(key_file, edits, line_end)
    try:
        ours = _openpgp.primary_fingerprints(text.encode('ascii'))
    except _openpgp.OpenPGPError:
        return
    assert gpg_show_keys(text) == ours
