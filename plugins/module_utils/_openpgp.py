# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Just enough OpenPGP (RFC 4880, RFC 9580) to tell which keys a repository's signing key file holds, and to write
back exactly the packets that were read.

Pure Python, no gpg: ASCII armor is decoded, the packets are walked, and the fingerprint of every primary public
key is computed (v4: SHA-1; v5 and v6: SHA-256). Nothing is verified cryptographically; the fingerprints are what
the caller compares with the ones it trusts.

The reading is strict on purpose. apt (its apt-key dearmor in apt 2.6, its own in later versions) and gpg each read
armor in their own way; any input they could read differently from this module is refused, so that the keys this
module checks are the keys the file holds for every reader. And the caller never writes the input itself: it writes
the packets parsed here, re-encoded (:meth:`PublicKeys.binary`, :meth:`PublicKeys.armored`).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import binascii
import collections
import hashlib
import re

TAG_SIGNATURE = 2
TAG_SECRET_KEY = 5
TAG_PUBLIC_KEY = 6
TAG_SECRET_SUBKEY = 7
TAG_TRUST = 12
TAG_USER_ID = 13
TAG_PUBLIC_SUBKEY = 14
TAG_USER_ATTRIBUTE = 17

# The packets a transferable public key is made of (RFC 9580 section 10.1). Trust packets are local to one keyring
# and never transferred: they are read and dropped. Anything else (compressed data, literal data, markers...) has no
# place in a repository signing key file and is refused: a reader that unpacks it could find keys in it that were
# never checked.
KEY_FILE_TAGS = {
    TAG_SIGNATURE: 'signature',
    TAG_PUBLIC_KEY: 'public key',
    TAG_TRUST: 'trust',
    TAG_USER_ID: 'user ID',
    TAG_PUBLIC_SUBKEY: 'public subkey',
    TAG_USER_ATTRIBUTE: 'user attribute',
}

# Fingerprint lengths in hex digits by key version (v3 keys, MD5 over the RSA numbers, are long obsolete).
FINGERPRINT_HEX_LENGTHS = (40, 64)

# Bounds: the key data (armored or binary) and the number of packets. A vendor's key with its signatures is a few
# KiB and a few dozen packets; the Debian archive keyring is about 100 KiB.
MAX_DATA_BYTES = 1024 * 1024
MAX_PACKETS = 10000
# A version 4 key packet is hashed for its fingerprint with a two-octet length (RFC 4880 section 12.2).
MAX_V4_KEY_BYTES = 0xFFFF
# RFC 4880 section 6.3: armored lines hold at most 76 characters.
MAX_ARMOR_LINE = 76

ARMOR_BEGIN = '-----BEGIN PGP PUBLIC KEY BLOCK-----'
ARMOR_END = '-----END PGP PUBLIC KEY BLOCK-----'
_DASHES = '-----'
_BEGIN_LINE = re.compile(r'^-----BEGIN PGP PUBLIC KEY BLOCK-----[ \t]*$')
_END_LINE = re.compile(r'^-----END PGP PUBLIC KEY BLOCK-----[ \t]*$')
_OTHER_BEGIN = re.compile(r'^\s*-----BEGIN PGP ([A-Z0-9 ,/]+)-----\s*$')
_HEADER = re.compile(r'^[A-Za-z][A-Za-z0-9-]*: [\x20-\x7e]*$')
_BASE64_LINE = re.compile(r'^[A-Za-z0-9+/]+={0,2}$')
_CRC_LINE = re.compile(r'^=[A-Za-z0-9+/]{4}$')
_NOT_TEXT = re.compile(r'[^\t\n\x20-\x7e]')

# Public key algorithms (RFC 9580 section 9.1) and what their public key material is made of:
# 'm' an MPI, 'o' a curve OID, 'k' ECDH's KDF parameters, a number that many octets.
_KEY_MATERIAL = {
    1: 'mm', 2: 'mm', 3: 'mm',          # RSA: n, e
    16: 'mmm', 20: 'mmm',               # Elgamal: p, g, y
    17: 'mmmm',                         # DSA: p, q, g, y
    18: 'omk',                          # ECDH: curve, point, KDF parameters
    19: 'om', 22: 'om',                 # ECDSA, EdDSA (legacy): curve, point
    25: 32, 26: 56, 27: 32, 28: 57,     # X25519, X448, Ed25519, Ed448
}


class OpenPGPError(ValueError):
    """The data is not what a repository signing key file should be; the message says why."""


Packet = collections.namedtuple('Packet', ['tag', 'body', 'new_format'])


def _preview(data, limit=60):
    """The start of unexpected data, printable, to put in an error message (an HTML page shows itself)."""
    text = data[:limit].decode('ascii', 'replace') if isinstance(data, bytes) else data[:limit]
    text = re.sub(r'\s+', ' ', text).strip()
    return repr(text + ('...' if len(data) > limit else ''))


def _crc24_table():
    table = []
    for byte in range(256):
        crc = byte << 16
        for dummy in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
        table.append(crc & 0xFFFFFF)
    return table


_CRC24_TABLE = _crc24_table()


def crc24(data):
    """The CRC-24 of RFC 4880 section 6.1, as the armor checksum line carries it."""
    crc = 0xB704CE
    for byte in bytearray(data):
        crc = ((crc << 8) & 0xFFFFFF) ^ _CRC24_TABLE[((crc >> 16) ^ byte) & 0xFF]
    return crc


def is_armored(data):
    """Whether bytes look like ASCII armor rather than binary packets (a binary packet starts with bit 7 set)."""
    return bool(data) and not bytearray(data[:1])[0] & 0x80


def _armor_lines(text):
    """The lines of armored ``text`` without their ends; refuses what line-based readers would split differently."""
    if '\r' in text:
        # awk (apt 2.6's apt-key) and getline split at LF only; gpg also at CR. CR-only text is one line to apt.
        if re.search(r'\r(?!\n)', text):
            raise OpenPGPError('the armored data has a carriage return that does not end a line (CR-only line ends?); '
                               'apt would read it as one line and find no key: use LF or CRLF line ends')
        if re.search(r'(?<!\r)\n', text):
            raise OpenPGPError('the armored data mixes CRLF and LF line ends; use one of them')
        text = text.replace('\r\n', '\n')
    lines = text.split('\n')
    if lines[-1] == '':     # the end of the last line, not an empty line
        lines.pop()
    for number, line in enumerate(lines, 1):
        bad = _NOT_TEXT.search(line)
        if bad:
            raise OpenPGPError('line %d of the armored data holds the control character 0x%02X' % (number, ord(bad.group(0))))
        if _DASHES in line and not (_BEGIN_LINE.match(line) or _END_LINE.match(line)):
            other = _OTHER_BEGIN.match(line)
            if other and other.group(1) != 'PUBLIC KEY BLOCK':
                raise OpenPGPError('the armored block is a PGP %s, not a PGP PUBLIC KEY BLOCK' % other.group(1))
            raise OpenPGPError('line %d is %r: a line with "-----" must be exactly "%s" or "%s" (apt and gpg read '
                               'other armor lines differently)' % (number, line[:80], ARMOR_BEGIN, ARMOR_END))
    return lines


def _read_block(lines, i):
    """``(binary data, index after the END line)`` of the armored block whose BEGIN line is ``lines[i]``."""
    begin = i + 1

    def no_end():
        return OpenPGPError('the armored block that starts on line %d has no "%s" line' % (begin, ARMOR_END))

    i += 1
    # Armor headers (Comment: ..., Version: ...) up to the empty line that every reader looks for: apt skips all
    # lines up to it, so data without it (or after a whitespace-only line, which is not empty to apt 2.6) would
    # be read by apt from somewhere else than by gpg.
    while i < len(lines) and lines[i] != '':
        if _END_LINE.match(lines[i]):
            raise OpenPGPError('the armored block that starts on line %d holds no data' % begin)
        if not _HEADER.match(lines[i]):
            raise OpenPGPError('line %d (%r) of the armored block is neither an armor header ("Name: value") nor the '
                               'empty line that must separate the headers from the data' % (i + 1, lines[i][:80]))
        i += 1
    if i >= len(lines):
        raise no_end()
    i += 1
    body, crc = [], None
    while True:
        if i >= len(lines):
            raise no_end()
        line = lines[i]
        i += 1
        if _END_LINE.match(line):
            break
        if _BEGIN_LINE.match(line):
            raise OpenPGPError('line %d begins an armored block inside the block that starts on line %d' % (i, begin))
        if crc is not None:
            raise OpenPGPError('line %d follows the checksum line; only "%s" may' % (i, ARMOR_END))
        if line.startswith('='):
            if not _CRC_LINE.match(line):
                raise OpenPGPError('line %d (%r) starts with "=" but is no checksum line ("=" and 4 base64 characters)'
                                   % (i, line[:80]))
            crc = line[1:]
            continue
        if not line:
            raise OpenPGPError('line %d is empty: the data of an armored block has no empty lines' % i)
        if not _BASE64_LINE.match(line):
            raise OpenPGPError('the armored block is not valid base64: line %d is %r' % (i, line[:80]))
        if len(line) > MAX_ARMOR_LINE:
            raise OpenPGPError('line %d of the armored block is %d characters long; armor lines hold at most %d'
                               % (i, len(line), MAX_ARMOR_LINE))
        if body and body[-1].endswith('='):
            raise OpenPGPError('line %d follows a line that ends the data with "=" padding' % i)
        body.append(line)
    if not body:
        raise OpenPGPError('the armored block that starts on line %d holds no data' % begin)
    encoded = ''.join(body)
    if len(encoded) % 4:
        raise OpenPGPError('the armored block is not valid base64: its %d characters are no multiple of 4 (cut short?)'
                           % len(encoded))
    data = base64.b64decode(encoded.encode('ascii'))
    if base64.b64encode(data).decode('ascii') != encoded:
        raise OpenPGPError('the armored block is not valid base64: its padding is not canonical')
    if crc is None and not encoded.endswith('='):
        # gpg 2.2 (Debian 12) reads on past data that neither padding nor a checksum line ends: the END line and
        # the lines after it become data to it, so it reads something else than apt does.
        raise OpenPGPError('the armored block that starts on line %d has no checksum line, and its data does not end '
                           'with "=" padding: gpg 2.2 would read the lines after it as data. Give the key as gpg '
                           '--armor --export writes it, with its checksum line (or binary)' % begin)
    if crc is not None:
        expected = bytearray(base64.b64decode(crc.encode('ascii')))
        expected = (expected[0] << 16) | (expected[1] << 8) | expected[2]
        if crc24(data) != expected:
            # gpg refuses such a block, apt ignores the checksum: the two would disagree.
            raise OpenPGPError('the armor checksum does not match the data (%06X, the line says %06X): '
                               'the key was damaged in transit' % (crc24(data), expected))
    return data, i


def dearmor(text):
    """The binary packets of every armored PUBLIC KEY BLOCK in ``text`` (str), concatenated.

    Strict: exactly one empty line (after optional ``Name: value`` armor headers) before the data, base64 lines of at
    most 76 characters, a CRC line that must match (it may be left out when the data ends with ``=`` padding), LF or
    CRLF line ends. Text around the blocks is allowed when no line of it holds ``-----``. Anything else raises
    OpenPGPError.
    """
    lines = _armor_lines(text)
    blocks = []
    i = 0
    while i < len(lines):
        if _BEGIN_LINE.match(lines[i]):
            data, i = _read_block(lines, i)
            blocks.append(data)
        elif _END_LINE.match(lines[i]):
            raise OpenPGPError('line %d ends an armored block that was never begun' % (i + 1))
        else:
            i += 1
    if not blocks:
        raise OpenPGPError('no "%s" line found; the data starts with %s' % (ARMOR_BEGIN, _preview(text)))
    return b''.join(blocks)


def _cut_short(start):
    return OpenPGPError('packet at offset %d is cut short' % start)


def packets(data):
    """``[Packet(tag, body, new_format)]`` of binary OpenPGP data; raises OpenPGPError on anything that is not
    packets of definite length (partial and indeterminate lengths belong to data packets, not to keys)."""
    data = bytearray(data)
    if len(data) > MAX_DATA_BYTES:
        raise OpenPGPError('the key data is %d bytes long; a repository signing key holds at most %d'
                           % (len(data), MAX_DATA_BYTES))
    found = []
    pos = 0
    while pos < len(data):
        if len(found) >= MAX_PACKETS:
            raise OpenPGPError('the key data holds more than %d packets' % MAX_PACKETS)
        start = pos
        ctb = data[pos]
        if not ctb & 0x80:
            raise OpenPGPError('no OpenPGP packet at offset %d (byte 0x%02X); the data starts with %s'
                               % (pos, ctb, _preview(bytes(data))))
        pos += 1
        new_format = bool(ctb & 0x40)
        if new_format:     # tag in bits 5-0, then a one, two or five octet length
            tag = ctb & 0x3F
            if pos >= len(data):
                raise _cut_short(start)
            first = data[pos]
            if first < 192:
                length, octets = first, 1
            elif first < 224:
                length, octets = ((first - 192) << 8) + (data[pos + 1] if pos + 1 < len(data) else 0) + 192, 2
            elif first == 255:
                length, octets = int(binascii.hexlify(bytes(data[pos + 1:pos + 5])) or b'0', 16), 5
            else:
                raise OpenPGPError('packet at offset %d (tag %d) has a partial body length: key material is never '
                                   'sent in chunks, and gpg refuses it' % (start, tag))
        else:              # legacy format: tag in bits 5-2, length type in bits 1-0
            tag = (ctb >> 2) & 0x0F
            length_type = ctb & 0x03
            if length_type == 3:
                raise OpenPGPError('packet at offset %d (tag %d) has an indeterminate length: key material always '
                                   'says how long it is' % (start, tag))
            octets = (1, 2, 4)[length_type]
            length = int(binascii.hexlify(bytes(data[pos:pos + octets])) or b'0', 16)
        if pos + octets > len(data):
            raise _cut_short(start)
        pos += octets
        if tag == 0:
            raise OpenPGPError('packet at offset %d has the reserved tag 0: this is not OpenPGP data' % start)
        if pos + length > len(data):
            raise OpenPGPError('packet at offset %d says %d bytes, only %d follow' % (start, length, len(data) - pos))
        found.append(Packet(tag, bytes(data[pos:pos + length]), new_format))
        pos += length
    return found


def encode_packet(packet):
    """The packet's bytes: its header in its own format (legacy or RFC 4880 new) with the shortest length."""
    tag, body = packet.tag, packet.body
    size = len(body)
    if not packet.new_format and tag < 16 and size < 0x10000:
        if size < 0x100:
            header = bytearray([0x80 | (tag << 2), size])
        else:
            header = bytearray([0x80 | (tag << 2) | 1]) + bytearray(size.to_bytes(2, 'big'))
    elif size < 192:
        header = bytearray([0xC0 | tag, size])
    elif size < 8384:
        header = bytearray([0xC0 | tag, ((size - 192) >> 8) + 192, (size - 192) & 0xFF])
    else:
        header = bytearray([0xC0 | tag, 255]) + bytearray(size.to_bytes(4, 'big'))
    return bytes(header) + body


def armor(data):
    """``data`` (binary packets) as an armored PUBLIC KEY BLOCK: no headers, 64-character lines, a CRC line."""
    encoded = base64.b64encode(data).decode('ascii')
    lines = [encoded[i:i + 64] for i in range(0, len(encoded), 64)]
    checksum = base64.b64encode(crc24(data).to_bytes(3, 'big')).decode('ascii')
    return '%s\n\n%s\n=%s\n%s\n' % (ARMOR_BEGIN, '\n'.join(lines), checksum, ARMOR_END)


def _check_key_material(algorithm, material):
    """Raise OpenPGPError unless ``material`` is exactly the public key material of ``algorithm``."""
    layout = _KEY_MATERIAL[algorithm]
    if isinstance(layout, int):
        if len(material) != layout:
            raise OpenPGPError('a key of algorithm %d holds %d octets of key material, not %d'
                               % (algorithm, len(material), layout))
        return
    pos = 0
    for part in layout:
        if part == 'm':
            if pos + 2 > len(material):
                raise OpenPGPError('a key of algorithm %d is cut short in its key material' % algorithm)
            pos += 2 + (((material[pos] << 8) | material[pos + 1]) + 7) // 8
        else:           # a curve OID or the KDF parameters: a length octet, then that many octets
            if pos >= len(material) or material[pos] in (0, 0xFF):
                raise OpenPGPError('a key of algorithm %d has a bad curve or KDF field' % algorithm)
            pos += 1 + material[pos]
        if pos > len(material):
            raise OpenPGPError('a key of algorithm %d is cut short in its key material' % algorithm)
    if pos != len(material):
        raise OpenPGPError('a key of algorithm %d has %d octets after its key material' % (algorithm, len(material) - pos))


def check_key_packet(body, primary=True):
    """Raise OpenPGPError unless ``body`` is a well-formed version 4, 5 or 6 public key packet body.

    The material of a primary key must be that of a known algorithm; a subkey of an algorithm unknown here (readers
    skip those) is only checked for its framing.
    """
    body = bytearray(body)
    if not body:
        raise OpenPGPError('a public key packet is empty')
    version = body[0]
    if version == 4:
        if len(body) > MAX_V4_KEY_BYTES:
            raise OpenPGPError('a version 4 key packet of %d bytes: its fingerprint covers at most %d'
                               % (len(body), MAX_V4_KEY_BYTES))
        if len(body) < 6:
            raise OpenPGPError('a version 4 key packet of %d bytes is cut short' % len(body))
        material = body[6:]
    elif version in (5, 6):
        if len(body) < 10:
            raise OpenPGPError('a version %d key packet of %d bytes is cut short' % (version, len(body)))
        material = body[10:]
        declared = int(binascii.hexlify(bytes(body[6:10])), 16)
        if declared != len(material):
            raise OpenPGPError('a version %d key packet says %d octets of key material, %d follow'
                               % (version, declared, len(material)))
    else:
        raise OpenPGPError('a public key of version %d: only version 4, 5 and 6 keys are supported' % version)
    algorithm = body[5]
    if algorithm in _KEY_MATERIAL:
        _check_key_material(algorithm, material)
    elif primary:
        raise OpenPGPError('a primary key of the public key algorithm %d, which no OpenPGP reader here knows' % algorithm)


def fingerprint(body):
    """Uppercase hex fingerprint of a public key packet body (tag 6 or 14), by the key's version."""
    if not body:
        raise OpenPGPError('a public key packet is empty')
    version = bytearray(body[:1])[0]
    if version == 4:
        if len(body) > MAX_V4_KEY_BYTES:
            raise OpenPGPError('a version 4 key packet of %d bytes: its fingerprint covers at most %d'
                               % (len(body), MAX_V4_KEY_BYTES))
        return hashlib.sha1(b'\x99' + len(body).to_bytes(2, 'big') + body).hexdigest().upper()
    if version == 5:
        return hashlib.sha256(b'\x9a' + len(body).to_bytes(4, 'big') + body).hexdigest().upper()
    if version == 6:
        return hashlib.sha256(b'\x9b' + len(body).to_bytes(4, 'big') + body).hexdigest().upper()
    raise OpenPGPError('a public key of version %d: only version 4, 5 and 6 keys are supported' % version)


def key_data(raw):
    """The binary packets of key material given as bytes, armored or binary."""
    if not raw or not raw.strip():
        raise OpenPGPError('the key data is empty')
    if len(raw) > MAX_DATA_BYTES:
        raise OpenPGPError('the key data is %d bytes long; a repository signing key holds at most %d'
                           % (len(raw), MAX_DATA_BYTES))
    if is_armored(raw):
        try:
            text = raw.decode('ascii')
        except UnicodeDecodeError:
            raise OpenPGPError('the data is neither binary OpenPGP nor ASCII armor; it starts with %s' % _preview(raw))
        return dearmor(text)
    return raw


class PublicKeys(object):
    """The public keys read from key data: their primary fingerprints and the packets that were checked."""

    def __init__(self, fingerprints, packet_list):
        self.fingerprints = fingerprints
        self.packets = packet_list

    def binary(self):
        """The checked packets, re-encoded: what a binary keyring (``.gpg``) holds."""
        return b''.join(encode_packet(p) for p in self.packets)

    def armored(self):
        """The checked packets, re-encoded and armored (str): what an ``.asc`` key file holds."""
        return armor(self.binary())


def read_public_keys(raw):
    """The :class:`PublicKeys` in ``raw`` (bytes, armored or binary).

    Raises OpenPGPError when the data holds no public key, holds secret key material or packets that have no place
    in a key file, does not start with a primary key, or is not OpenPGP.
    """
    found = packets(key_data(raw))
    tags = [p.tag for p in found]
    if TAG_SECRET_KEY in tags or TAG_SECRET_SUBKEY in tags:
        raise OpenPGPError('the data holds secret key material; a repository signing key must be public only')
    if TAG_PUBLIC_KEY not in tags:
        raise OpenPGPError('the data holds OpenPGP packets but no public key (packet tag 6)')
    for number, tag in enumerate(tags, 1):
        if tag not in KEY_FILE_TAGS:
            raise OpenPGPError('packet %d has the tag %d: a key file holds only public keys, subkeys, user IDs, user '
                               'attributes and signatures' % (number, tag))
    if tags[0] != TAG_PUBLIC_KEY:
        raise OpenPGPError('the key data starts with a %s packet, not with a public key' % KEY_FILE_TAGS[tags[0]])
    kept = [p for p in found if p.tag != TAG_TRUST]
    fingerprints = []
    for p in kept:
        if p.tag in (TAG_PUBLIC_KEY, TAG_PUBLIC_SUBKEY):
            check_key_packet(p.body, primary=p.tag == TAG_PUBLIC_KEY)
        if p.tag == TAG_PUBLIC_KEY:
            fingerprints.append(fingerprint(p.body))
    return PublicKeys(fingerprints, kept)


def primary_fingerprints(raw):
    """Fingerprints (uppercase hex, in file order) of the primary public keys in ``raw`` (bytes).

    Raises OpenPGPError as :func:`read_public_keys` does.
    """
    return read_public_keys(raw).fingerprints


def normalize_fingerprint(value):
    """``value`` uppercase without spaces (and without a leading 0x); raises OpenPGPError if it is no fingerprint."""
    text = re.sub(r'\s+', '', value or '').upper()
    if text.startswith('0X'):
        text = text[2:]
    if not re.match(r'^[0-9A-F]+$', text) or len(text) not in FINGERPRINT_HEX_LENGTHS:
        raise OpenPGPError('%r is not a fingerprint: 40 hex digits (v4 key) or 64 (v5/v6 key) expected; a key ID '
                           '(16 or 8 hex digits) is too short to trust' % value)
    return text


def mismatch(found, expected):
    """Why the keys ``found`` are not the ``expected`` ones (both normalized lists), or None when they are."""
    unexpected = [f for f in found if f not in expected]
    missing = [e for e in expected if e not in found]
    if not unexpected and not missing:
        return None
    parts = []
    if unexpected:
        parts.append('not expected: %s' % ', '.join(unexpected))
    if missing:
        parts.append('expected but not found: %s' % ', '.join(missing))
    return 'the key data holds %s; the expected fingerprints are %s (%s)' % (
        ', '.join(found), ', '.join(expected), '; '.join(parts))
