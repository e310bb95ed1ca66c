# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The NVIDIA module a kernel has, from ``modinfo`` (file, version, vermagic, signer), and the problems of the
inventoried kernels: no module, one built for another kernel or driver version, a wrong signer, a stale initramfs.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._image_tree import as_text


# modinfo of the 580 nvidia.ko prints a few KiB (parm lines and a multi-line signature); anything past this is junk.
MAX_MODINFO_CHARS = 256 * 1024
# A field value longer than this is no modinfo value (filename is a path: PATH_MAX is 4096).
MAX_FIELD_CHARS = 4096
MODINFO_FIELDS = ('filename', 'version', 'vermagic', 'signer', 'sig_key', 'sig_hashalgo', 'name')
_FIELD = re.compile(r'^([a-z_]+):[ \t]*(.*)\Z')
_PRINTABLE = re.compile(r'^[\x20-\x7e]*\Z')


def parse_modinfo(text):
    """The fields of one ``modinfo`` answer that say which module a kernel has and who signed it.

    Returns a dict with those of ``filename``, ``version``, ``vermagic``, ``signer``, ``sig_key``, ``sig_hashalgo``
    and ``name`` that were printed with a value of printable ASCII (surrounding blanks removed; modinfo ends
    ``vermagic`` with a blank); the first value of a field wins. Anything else (other fields, continuation lines of
    the signature, junk, values with control or non-ASCII characters, values over 4096 characters) is left out.
    Only the first 256 KiB are read. Never raises: input that is not text gives ``{}``.
    """
    text = as_text(text)
    if not text:
        return {}
    fields = {}
    for line in text[:MAX_MODINFO_CHARS].splitlines():
        m = _FIELD.match(line)
        if not m or m.group(1) not in MODINFO_FIELDS or m.group(1) in fields:
            continue
        value = m.group(2).strip(' \t')
        if value and len(value) <= MAX_FIELD_CHARS and _PRINTABLE.match(value):
            fields[m.group(1)] = value
    return fields


def check(kernels, expect_version='', prebuilt_kernels=(), prebuilt_signer=''):
    """Problems of the inventoried kernels (the module's RV(kernels) entries), one ASCII sentence each: a kernel without
    an NVIDIA module, a module built for another kernel (vermagic), of another driver version than EXPECT_VERSION (the
    "Driver/library version mismatch" of the next boot), not signed by PREBUILT_SIGNER where the plan chose a prebuilt
    module, and an initramfs without the current blacklist. An empty list is a pass."""
    problems = []
    prebuilt = set(prebuilt_kernels or ())
    for kernel in kernels:
        release = kernel.get('release', '')
        module = kernel.get('module') or {}
        if not module:
            problems.append('Kernel %s has no NVIDIA module.' % release)
        else:
            vermagic = (module.get('vermagic') or '').split()
            if not vermagic or vermagic[0] != release:
                problems.append('The NVIDIA module of kernel %s (%s) was built for kernel %s.'
                                % (release, module.get('filename') or '?', vermagic[0] if vermagic else 'unknown'))
            if expect_version and module.get('version') != expect_version:
                problems.append('The NVIDIA module of kernel %s is version %s, the installed driver %s: booting it would '
                                'give "Driver/library version mismatch".' % (release, module.get('version') or 'unknown',
                                                                             expect_version))
            if release in prebuilt and prebuilt_signer and module.get('signer') != prebuilt_signer:
                problems.append('The prebuilt NVIDIA module of kernel %s is signed by %s, not %s.'
                                % (release, module.get('signer') or 'nobody', prebuilt_signer))
        state = kernel.get('initramfs_blacklist')
        if state in ('stale', 'missing', 'unreadable'):
            problems.append('The initramfs of kernel %s does not carry the current nouveau/nova_core blacklist (%s%s).'
                            % (release, state, ': ' + kernel['initramfs_reason'] if kernel.get('initramfs_reason') else ''))
    return problems
