# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Just enough OpenPGP (RFC 4880, RFC 9580) to tell which keys a repository's signing key file holds.

Pure Python, no gpg: ASCII armor is decoded (with or without its CRC line), the packets are walked, and the
fingerprint of every primary public key is computed (v4: SHA-1; v5 and v6: SHA-256). Nothing is verified
cryptographically; the fingerprints are what the caller compares with the ones it trusts.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import binascii
import hashlib
import re

TAG_SECRET_KEY = 5
TAG_PUBLIC_KEY = 6
TAG_SECRET_SUBKEY = 7
TAG_PUBLIC_SUBKEY = 14

# Fingerprint lengths in hex digits by key version (v3 keys, MD5 over the RSA numbers, are long obsolete).
FINGERPRINT_HEX_LENGTHS = (40, 64)

_ARMOR_BEGIN = re.compile(r'^-----BEGIN PGP ([A-Z0-9 ,/]+)-----[ \t]*$')
_ARMOR_END = re.compile(r'^-----END PGP ([A-Z0-9 ,/]+)-----[ \t]*$')
_HEADER = re.compile(r'^[A-Za-z0-9-]+: ')


class OpenPGPError(ValueError):
    """The data is not what a repository signing key file should be; the message says why."""


def _preview(data, limit=60):
    """The start of unexpected data, printable, to put in an error message (an HTML page shows itself)."""
    text = data[:limit].decode('ascii', 'replace') if isinstance(data, bytes) else data[:limit]
    text = re.sub(r'\s+', ' ', text).strip()
    return repr(text + ('...' if len(data) > limit else ''))


def crc24(data):
    """The CRC-24 of RFC 4880 section 6.1, as the armor checksum line carries it."""
    crc = 0xB704CE
    for byte in bytearray(data):
        crc ^= byte << 16
        for dummy in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def is_armored(data):
    """Whether bytes look like ASCII armor rather than binary packets (a binary packet starts with bit 7 set)."""
    return bool(data) and not bytearray(data[:1])[0] & 0x80


def dearmor(text):
    """The binary packets of every armored block in ``text`` (str), concatenated.

    Armor headers (``Comment:``, ``Version:``) are skipped; the CRC line is optional and, when present, checked.
    """
    lines = text.replace('\r\n', '\n').replace('\r', '\n').split('\n')
    blocks = []
    i = 0
    while i < len(lines):
        begin = _ARMOR_BEGIN.match(lines[i].strip())
        if not begin:
            i += 1
            continue
        kind = begin.group(1)
        if kind != 'PUBLIC KEY BLOCK':
            raise OpenPGPError('the armored block is a PGP %s, not a PGP PUBLIC KEY BLOCK' % kind)
        i += 1
        # Armor headers run up to the first empty line; a block without headers may start its data at once.
        while i < len(lines) and _HEADER.match(lines[i]):
            i += 1
        body, crc = [], None
        while i < len(lines):
            line = lines[i].strip()
            i += 1
            if _ARMOR_END.match(line):
                break
            if not line:
                continue
            if line.startswith('=') and len(line) == 5:
                crc = line[1:]
                continue
            body.append(line)
        else:
            raise OpenPGPError('the armored block has no "-----END PGP PUBLIC KEY BLOCK-----" line')
        try:
            data = base64.b64decode(''.join(body).encode('ascii'), validate=True)
        except (binascii.Error, ValueError, UnicodeEncodeError) as e:
            raise OpenPGPError('the armored block is not valid base64: %s' % e)
        if crc is not None:
            try:
                expected = bytearray(base64.b64decode(crc.encode('ascii'), validate=True))
            except (binascii.Error, ValueError, UnicodeEncodeError):
                raise OpenPGPError('the armor checksum line "=%s" is not valid base64' % crc)
            expected = (expected[0] << 16) | (expected[1] << 8) | expected[2]
            if crc24(data) != expected:
                raise OpenPGPError('the armor checksum does not match the data (%06X, the line says %06X): '
                                   'the key was damaged in transit' % (crc24(data), expected))
        blocks.append(data)
    if not blocks:
        raise OpenPGPError('no "-----BEGIN PGP PUBLIC KEY BLOCK-----" line found; the data starts with %s'
                           % _preview(text))
    return b''.join(blocks)


def _new_format_length(data, pos):
    """``(length, header_octets, partial)`` of a new-format length at ``data[pos]``."""
    first = data[pos]
    if first < 192:
        return first, 1, False
    if first < 224:
        if pos + 1 >= len(data):
            raise OpenPGPError('a packet length is cut short at offset %d' % pos)
        return ((first - 192) << 8) + data[pos + 1] + 192, 2, False
    if first == 255:
        if pos + 4 >= len(data):
            raise OpenPGPError('a packet length is cut short at offset %d' % pos)
        return int(binascii.hexlify(bytes(data[pos + 1:pos + 5])), 16), 5, False
    return 1 << (first & 0x1F), 1, True


def packets(data):
    """``[(tag, body)]`` of binary OpenPGP data; raises OpenPGPError on anything that is not packets."""
    data = bytearray(data)
    found = []
    pos = 0
    while pos < len(data):
        start = pos
        ctb = data[pos]
        if not ctb & 0x80:
            raise OpenPGPError('no OpenPGP packet at offset %d (byte 0x%02X); the data starts with %s'
                               % (pos, ctb, _preview(bytes(data))))
        pos += 1
        if ctb & 0x40:   # new format: tag in bits 5-0, lengths may come in partial chunks
            tag = ctb & 0x3F
            body = bytearray()
            while True:
                if pos >= len(data):
                    raise OpenPGPError('packet at offset %d is cut short' % start)
                length, octets, partial = _new_format_length(data, pos)
                pos += octets
                if pos + length > len(data):
                    raise OpenPGPError('packet at offset %d says %d bytes, only %d follow'
                                       % (start, length, len(data) - pos))
                body += data[pos:pos + length]
                pos += length
                if not partial:
                    break
        else:            # old format: tag in bits 5-2, length type in bits 1-0
            tag = (ctb >> 2) & 0x0F
            length_type = ctb & 0x03
            if length_type == 3:   # indeterminate: to the end of the data
                length = len(data) - pos
            else:
                octets = (1, 2, 4)[length_type]
                if pos + octets > len(data):
                    raise OpenPGPError('packet at offset %d is cut short' % start)
                length = int(binascii.hexlify(bytes(data[pos:pos + octets])), 16)
                pos += octets
            if pos + length > len(data):
                raise OpenPGPError('packet at offset %d says %d bytes, only %d follow'
                                   % (start, length, len(data) - pos))
            body = data[pos:pos + length]
            pos += length
        if tag == 0:
            raise OpenPGPError('packet at offset %d has the reserved tag 0: this is not OpenPGP data' % start)
        found.append((tag, bytes(body)))
    return found


def fingerprint(body):
    """Uppercase hex fingerprint of a public key packet body (tag 6 or 14), by the key's version."""
    if not body:
        raise OpenPGPError('a public key packet is empty')
    version = bytearray(body[:1])[0]
    if version == 4:
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
    if is_armored(raw):
        try:
            text = raw.decode('ascii')
        except UnicodeDecodeError:
            raise OpenPGPError('the data is neither binary OpenPGP nor ASCII armor; it starts with %s' % _preview(raw))
        return dearmor(text)
    return raw


def primary_fingerprints(raw):
    """Fingerprints (uppercase hex, in file order) of the primary public keys in ``raw`` (bytes).

    Raises OpenPGPError when the data holds no public key, holds secret key material, or is not OpenPGP.
    """
    found = []
    for tag, body in packets(key_data(raw)):
        if tag in (TAG_SECRET_KEY, TAG_SECRET_SUBKEY):
            raise OpenPGPError('the data holds secret key material; a repository signing key must be public only')
        if tag == TAG_PUBLIC_KEY:
            found.append(fingerprint(body))
    if not found:
        raise OpenPGPError('the data holds OpenPGP packets but no public key (packet tag 6)')
    return found


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
