#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
---
module: repo_key
short_description: Install a package repository's OpenPGP signing key, checked by fingerprint
version_added: 1.0.0
description:
  - Fetches a package repository's signing key from O(url), or takes it from O(content), checks that it is an
    OpenPGP public key and, when O(fingerprints) is given, that it holds exactly the keys expected, then writes it
    to O(dest) (for apt, a file under C(/etc/apt/keyrings) that the source's C(signed-by) names).
  - The key is read in pure Python (RFC 4880 and RFC 9580 packets, ASCII armor or binary), so the target needs no
    C(gpg). The fingerprint of each primary key is computed from its public key packet (version 4 keys with SHA-1,
    version 5 and 6 keys with SHA-256). Signatures are not verified.
  - What is written is only what was read and checked, never the bytes as received. The packets of the key data
    are encoded again, as a binary keyring when O(dest) ends in C(.gpg), otherwise armored the way
    C(gpg --armor --export) armors them (no armor headers, a checksum line, LF line ends). The file is written
    atomically, and only when it differs from what O(dest) holds. Nothing is written when the check fails.
  - The reading is strict, so that apt, gpg and this module cannot read different keys from the same data. Armor
    is refused when apt or gpg could read it otherwise. That covers a line with C(-----) that is not exactly the
    BEGIN or END line of a PGP PUBLIC KEY BLOCK, armor headers not followed by an empty line, empty or
    non-base64 lines in the data, or lines over 76 characters. It also covers a checksum that does not match, a
    missing checksum when the data does not end with C(=) padding, CR-only or mixed line ends, and control
    characters. Text around the armored blocks is allowed when no line of it holds C(-----). Several blocks are
    read together.
  - Packets are refused when they have partial or indeterminate lengths, or when they are anything but public
    keys, public subkeys, user IDs, user attributes and signatures (trust packets, which are local to a keyring,
    are dropped). A primary key of an unknown algorithm or with malformed key material is refused, and so is a
    version 4 key packet over 65,535 bytes. The data may hold at most 1 MiB and 10,000 packets.
author:
  - gpuops maintainers (@gpuops)
options:
  dest:
    description:
      - Where the key is written, for example C(/etc/apt/keyrings/cuda.asc). A missing parent directory is created
        (mode C(0755)).
      - A name ending in C(.gpg) gets a binary keyring, any other name an armored key, whatever the source
        serves. apt reads a C(signed-by) file ending in C(.asc) as armored and one ending in C(.gpg) as binary;
        for apt, name O(dest) with one of these.
    type: path
    required: true
  url:
    description:
      - Where to download the key from (C(https://), C(http://), C(ftp://) or C(file://) on the target). The answer
        may be armored or binary.
      - Exactly one of O(url) and O(content) is required.
    type: str
  content:
    description:
      - The key itself, ASCII-armored (a binary key can be given armored, as C(gpg --export --armor) prints it).
      - Exactly one of O(url) and O(content) is required.
    type: str
  fingerprints:
    description:
      - The fingerprints the key data must hold, compared without case and spaces (a leading C(0x) is ignored).
        Each is 40 hex digits (version 4 keys) or 64 (version 5 and 6 keys); key IDs are refused.
      - When not empty, every primary key found must have one of these fingerprints and every one listed must
        be found; otherwise the task fails, naming both sets, and nothing is written.
      - When empty, any public key is accepted; the fingerprints found are returned.
    type: list
    elements: str
    default: []
  mode:
    description:
      - The permissions of O(dest), as for M(ansible.builtin.file).
    type: raw
    default: '0644'
  owner:
    description:
      - The owner of O(dest).
    type: str
    default: root
  group:
    description:
      - The group of O(dest).
    type: str
    default: root
  validate_certs:
    description:
      - Whether the HTTPS certificate of O(url) is verified. Turn it off only for a mirror you reach otherwise
        safely; the fingerprint check still applies.
    type: bool
    default: true
  timeout:
    description:
      - Seconds the whole download of O(url) may take, more than 0. Connecting, the answer's headers and its
        body share this one deadline. A server that keeps sending a byte now and then cannot hold the task past
        it.
    type: int
    default: 30
attributes:
  check_mode:
    support: full
    description: The key is fetched and checked in check mode as well; nothing is written and C(changed) says whether it would be.
  diff_mode:
    support: partial
    description:
      - An armored key is shown as text. A binary key, which a diff cannot show, is shown by its fingerprints.
      - Changes of mode, owner and group are shown as M(ansible.builtin.file) shows them.
  platform:
    support: full
    platforms: posix
    description: Any POSIX target; the key is read in Python, no gpg is needed there.
notes:
  - C(changed) is true when the key file is written, and also when only its mode, owner or group are corrected.
  - The key data may hold at most 1 MiB. A download that answers more fails the task.
  - A key file written by an earlier version of this module, as received, is rewritten once in the form
    described above. That run reports C(changed).
seealso:
  - name: RFC 9580 OpenPGP, section 5.5.4 (key IDs and fingerprints)
    description: How the fingerprints are computed.
    link: https://www.rfc-editor.org/rfc/rfc9580#name-key-ids-and-fingerprints
"""

EXAMPLES = r"""
- name: Install the signing key of NVIDIA's CUDA repository for Ubuntu 24.04
  gpuops.gpu_server.repo_key:
    url: https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/3bf863cc.pub
    dest: /etc/apt/keyrings/cuda.asc
    fingerprints:
      - EB69 3B30 35CD 5710 E231  E123 A4B4 6996 3BF8 63CC

- name: Install Docker's signing key
  gpuops.gpu_server.repo_key:
    url: https://download.docker.com/linux/debian/gpg
    dest: /etc/apt/keyrings/docker.asc
    fingerprints: [9DC858229FC7DD38854AE2D88D81803C0EBFCD88]

- name: Install a key kept in the inventory
  gpuops.gpu_server.repo_key:
    content: "{{ internal_mirror_key }}"
    dest: /etc/apt/keyrings/internal.asc
    fingerprints: "{{ internal_mirror_fingerprints }}"
"""

RETURN = r"""
dest:
  description: The file the key was written to (or would be, in check mode).
  returned: always
  type: str
  sample: /etc/apt/keyrings/cuda.asc
fingerprints:
  description: The fingerprints of the primary keys found in the key data, uppercase hex, in the order of the data.
  returned: success
  type: list
  elements: str
  sample: ["EB693B3035CD5710E231E123A4B469963BF863CC"]
found_fingerprints:
  description: The fingerprints found, when they are not the O(fingerprints) expected (the task then fails).
  returned: on a fingerprint mismatch
  type: list
  elements: str
  sample: ["73D3B18A0947BEF6DFCA5F96397822767A5FF8A5"]
"""

import errno
import os
import tempfile
import threading
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native
from ansible.module_utils.urls import fetch_url

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _openpgp

MAX_KEY_BYTES = _openpgp.MAX_DATA_BYTES
READ_CHUNK = 64 * 1024


class _FetchFailed(Exception):
    """fetch_url gave up (it would have called fail_json itself); the message says why."""


class _Fetcher(object):
    """The module as fetch_url sees it, in the download thread: fail_json raises instead of exiting, so that only
    the main thread ever ends the module."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)

    def fail_json(self, msg='', **_result):
        raise _FetchFailed(msg)


def _fetch(module, url, timeout, outcome):
    """Download ``url`` into ``outcome`` (a dict): ``info``, then ``data`` (stopping soon after MAX_KEY_BYTES), or
    ``error``. Runs in a thread; reads in small pieces so that it stops soon after the size limit."""
    response = None
    try:
        response, outcome['info'] = fetch_url(_Fetcher(module), url, timeout=timeout)
        if response is None:
            return
        read = getattr(response, 'read1', None) or response.read
        chunks, size = [], 0
        while size <= MAX_KEY_BYTES:
            chunk = read(READ_CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        outcome['data'] = b''.join(chunks)
    except Exception as e:   # a socket timeout or reset, fetch_url giving up: reported by the main thread
        outcome['error'] = e
    finally:
        if response is not None:
            try:
                response.close()
            except Exception:   # closing a broken connection may fail as well; nothing is left to do
                pass


def download(module, url, result):
    """The bytes at ``url``; fails the module on an HTTP error, an answer over MAX_KEY_BYTES, or when the whole
    download (connecting, headers, body) takes longer than ``timeout`` seconds.

    The socket timeout of urllib applies to each read, so a server that sends a byte now and then would hold the
    module forever; the download runs in a daemon thread that the module leaves behind at the deadline.
    """
    dest = module.params['dest']
    timeout = module.params['timeout']
    outcome = {}
    worker = threading.Thread(target=_fetch, args=(module, url, timeout, outcome), name='repo_key download')
    worker.daemon = True
    deadline = time.monotonic() + timeout
    worker.start()
    worker.join(max(deadline - time.monotonic(), 0))
    if worker.is_alive():
        module.fail_json(msg='Could not download the key from %s within %d seconds (timeout covers the whole download, '
                             'not each read); %s was left untouched' % (url, timeout, dest), **result)
    if 'error' in outcome:
        module.fail_json(msg='Could not download the key from %s: %s; %s was left untouched'
                             % (url, to_native(outcome['error']), dest), **result)
    info = outcome.get('info', {})
    status = info.get('status', -1)
    # file:// and ftp:// answers carry no HTTP status (as in ansible.builtin.get_url).
    local = url.startswith('file:/') or (url.startswith('ftp:/') and str(info.get('msg', '')).startswith('OK'))
    if 'data' not in outcome or (status != 200 and not local):
        module.fail_json(msg='Could not download the key from %s: HTTP %s, %s; %s was left untouched'
                             % (url, status, info.get('msg', 'no answer'), dest), **result)
    data = outcome['data']
    if len(data) > MAX_KEY_BYTES:
        module.fail_json(msg='%s answered more than %d bytes: that is not a repository signing key; %s was left '
                             'untouched' % (url, MAX_KEY_BYTES, dest), **result)
    return data


def read_existing(module, dest, result):
    """The bytes ``dest`` holds, or None when it does not exist."""
    if os.path.isdir(dest):
        module.fail_json(msg='dest %s is a directory; give the path of the key file' % dest, **result)
    try:
        with open(dest, 'rb') as f:
            return f.read(MAX_KEY_BYTES + 1)
    except (IOError, OSError) as e:
        if e.errno == errno.ENOENT:
            return None
        module.fail_json(msg='Could not read %s: %s' % (dest, to_native(e)), **result)


def describe(data):
    """What a diff shows of key data: the armored text, or the fingerprints of a binary key."""
    if data is None:
        return ''
    if _openpgp.is_armored(data):
        try:
            return data.decode('ascii')
        except UnicodeDecodeError:
            pass
    try:
        return 'binary OpenPGP key data, %d bytes, fingerprints: %s\n' % (
            len(data), ', '.join(_openpgp.primary_fingerprints(data)))
    except _openpgp.OpenPGPError as e:
        return 'data that is no OpenPGP key (%s), %d bytes\n' % (e, len(data))


def write_atomically(module, path, data, result):
    """Write ``data`` to a temporary file next to ``path`` and rename it over ``path``; fail naming ``path``."""
    directory = os.path.dirname(path) or '.'
    tmp = None
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=directory)
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
        module.atomic_move(tmp, path)
    except (IOError, OSError) as e:
        module.fail_json(msg='Could not write %s: %s; the file was left untouched' % (path, to_native(e)), **result)
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dest=dict(type='path', required=True),
            url=dict(type='str'),
            content=dict(type='str'),
            fingerprints=dict(type='list', elements='str', default=[]),
            mode=dict(type='raw', default='0644'),
            owner=dict(type='str', default='root'),
            group=dict(type='str', default='root'),
            validate_certs=dict(type='bool', default=True),
            timeout=dict(type='int', default=30),
        ),
        mutually_exclusive=[('url', 'content')],
        required_one_of=[('url', 'content')],
        supports_check_mode=True,
    )
    dest = module.params['dest']
    result = dict(changed=False, dest=dest)
    if module.params['timeout'] < 1:
        module.fail_json(msg='timeout must be a positive number, got %d' % module.params['timeout'], **result)
    try:
        expected = [_openpgp.normalize_fingerprint(f) for f in module.params['fingerprints']]
    except _openpgp.OpenPGPError as e:
        module.fail_json(msg='fingerprints: %s' % e, **result)

    url = module.params['url']
    if url:
        data, source = download(module, url, result), url
    else:
        data, source = to_bytes(module.params['content'], errors='surrogate_or_strict'), 'content'

    try:
        keys = _openpgp.read_public_keys(data)
    except _openpgp.OpenPGPError as e:
        module.fail_json(msg='%s is not a usable OpenPGP public key: %s; %s was left untouched' % (source, e, dest),
                         **result)
    found = keys.fingerprints
    if expected:
        why = _openpgp.mismatch(found, expected)
        if why:
            module.fail_json(msg='The key from %s is not the one expected: %s; %s was left untouched'
                                 % (source, why, dest), found_fingerprints=found, **result)
    result['fingerprints'] = found
    # Only the packets read and checked above are written, re-encoded: never the bytes as received. apt reads a
    # signed-by file ending in .gpg as a binary keyring, any other (.asc) as armor.
    after = keys.binary() if dest.endswith('.gpg') else to_bytes(keys.armored())

    # Written through a symlink, as apt reads it.
    path = os.path.realpath(dest)
    before = read_existing(module, path, result)
    diffs = []
    if before != after:
        result['changed'] = True
        diffs.append(dict(before_header=dest, after_header=dest, before=describe(before), after=describe(after)))
        if not module.check_mode:
            write_atomically(module, path, after, result)

    file_args = module.load_file_common_arguments(module.params, path=path)
    attributes_diff = dict(before_header=dest, after_header=dest)
    result['changed'] = module.set_fs_attributes_if_different(file_args, result['changed'], attributes_diff)
    if 'before' in attributes_diff or 'after' in attributes_diff:
        diffs.append(attributes_diff)
    if module._diff:
        result['diff'] = diffs
    module.exit_json(**result)


if __name__ == '__main__':
    main()
