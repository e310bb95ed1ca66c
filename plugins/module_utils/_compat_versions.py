# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Versions as the compatibility checks read them: CUDA (``X.Y[.U]``), driver versions and branches, dotted
versions, PyTorch releases; and CompatError, the one error of the compatibility modules (_compat_versions,
_compat_cuda, _compat_gpu, _compat_torch, _compat).

No input makes a public function raise anything but CompatError (a ValueError) with a message that names what
is wrong and the form expected: versions are read from ASCII digits only (``int()``, ``str.isdigit()`` and a
plain ``\\d`` also take Arabic-Indic or fullwidth digits), each number has at most MAX_VERSION_DIGITS digits
(``int()`` refuses over 4300), and a float with a fraction is refused (YAML drops its trailing zeros).

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import math
import re


class CompatError(ValueError):
    """A question this module cannot answer as asked: a malformed version, an unknown CUDA release, contradictory
    arguments. A ValueError, so that callers that catch ValueError keep working."""


# Every pattern reads ASCII digits only ([0-9], never \d) and ends with \Z ($ also matches before a final newline).
MAX_VERSION_DIGITS = 9
_N = '[0-9]{1,%d}' % MAX_VERSION_DIGITS
_VERSION_RE = re.compile(r'%s(?:\.%s){0,7}\Z' % (_N, _N))
_CUDA_RE = re.compile(r'(%s)\.(%s)(?:\.(%s))?\Z' % (_N, _N, _N))
# A driver version: the branch, then one or two numbers (535.104.05, 570.26, 390.116).
_DRIVER_VERSION_RE = re.compile(r'([0-9]{3})\.([0-9]{1,3})(?:\.([0-9]{1,3}))?\Z')
# A branch or version, optionally inside a package name or with a flavour: 535-server, nvidia-driver-570-open.
_DRIVER_BRANCH_RE = re.compile(r'(?:[A-Za-z][A-Za-z0-9]*-)*([0-9]{3})(?:\.[0-9]{1,3}){0,2}(?:-(?:server|open))*\Z')
_TORCH_RE = re.compile(r'(%s)\.(%s)(?:\.(%s))?(?:\+([A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*))?\Z' % (_N, _N, _N))
# CUDA updates are small numbers (11.4.4 is the highest so far); nvcc's build numbers (V12.2.91) are not.
CUDA_MAX_UPDATE = 9
CUDA_FORM = "'X.Y' or 'X.Y.U' with U the update (0-%d), for example '12.4' or '12.2.2'" % CUDA_MAX_UPDATE
DRIVER_FORM = ("a driver version such as '535.104.05' or '390.116' ('NNN.NN' or 'NNN.NN.NN'; a branch alone, "
               "such as '535', is not a driver version)")
BRANCH_FORM = "a driver branch such as '535', '570-server', '580-open' or a version such as '535.104.05'"
TORCH_FORM = "'X.Y' or 'X.Y.Z', optionally with a local tag, for example '2.4.1' or '1.13.1+cu117'"
# An int given as a version is at most this (a string is what a version should be; see version_text()).
_MAX_INT_VERSION = 10 ** 15


def short_repr(value, limit=80):
    """``repr(value)``, cut to ``limit`` characters: an error message must not echo a megabyte of junk."""
    try:
        text = repr(value)
    except ValueError:
        # repr() of an int of more than 4300 digits raises (or of a container holding one).
        text = '<%s too large to show>' % type(value).__name__
    return text if len(text) <= limit else '%s... (%d characters)' % (text[:limit], len(text))


def version_text(value, what='version', form=CUDA_FORM):
    """A version given as a string, an int or a float -> its text, stripped.

    A float is refused unless it is whole (``12.0``): YAML reads an unquoted ``12.10`` as the float 12.1, so
    a float with a fraction cannot tell which version was written (12.1 or 12.10, 2.1 or 2.10). The
    message says to quote it. Raises CompatError naming ``what`` and the expected ``form``.
    """
    if not isinstance(what, str) or not isinstance(form, str):
        raise CompatError('version_text: what and form name the version in words, got %s and %s'
                          % (short_repr(what), short_repr(form)))
    if isinstance(value, bool) or value is None:
        raise CompatError('%s: expected %s, got %r' % (what, form, value))
    if isinstance(value, int):
        if not 0 <= value < _MAX_INT_VERSION:
            raise CompatError('%s: expected %s, got the number %s' % (what, form, short_repr(value)))
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value) or value < 0:
            raise CompatError('%s: expected %s, got the number %r' % (what, form, value))
        if value.is_integer() and value < _MAX_INT_VERSION:
            return '%d.0' % value
        raise CompatError("%s: got the number %r, not a string: YAML reads an unquoted version as a number and drops "
                          "trailing zeros (12.10 becomes 12.1), so it cannot tell which version was meant. Quote it "
                          "('%s' or '%s0') to say which one" % (what, value, value, value))
    if not isinstance(value, str):
        raise CompatError('%s: expected %s, got %s' % (what, form, short_repr(value)))
    return value.strip()


def parse_version(text):
    """``'535.104.05'`` -> (535, 104, 5); ``'12.4'`` -> (12, 4). Only dots and ASCII digits, at most 8 numbers of
    at most MAX_VERSION_DIGITS digits; a tuple of such numbers is returned as is.

    Raises CompatError for anything else (``'11.8abc'``, ``'535.x'``) and for floats that lost a trailing zero.
    """
    if isinstance(text, tuple):
        return _version_tuple(text)
    text = version_text(text, 'version', "a dotted number such as '12.4'")
    if not _VERSION_RE.match(text):
        raise CompatError("expected a dotted number such as '12.4', got %s" % short_repr(text))
    return tuple(int(p) for p in text.split('.'))


def _version_tuple(version):
    """A version as a tuple of 1 to 8 non-negative ints (not bools) of at most MAX_VERSION_DIGITS digits."""
    if not isinstance(version, (tuple, list)) or not 1 <= len(version) <= 8 or not all(
            isinstance(p, int) and not isinstance(p, bool) and 0 <= p < 10 ** MAX_VERSION_DIGITS for p in version):
        raise CompatError("expected a version as a tuple of numbers such as (12, 4), got %s" % short_repr(version))
    return tuple(version)


def parse_cuda(cuda):
    """``'12.2.2'`` -> (12, 2, 2), ``'12.4'`` -> (12, 4, 0). Raises CompatError for any other form.

    A third number over CUDA_MAX_UPDATE is nvcc's build number (``release 12.2, V12.2.91``), not an update.
    """
    if isinstance(cuda, tuple):
        cuda = version_str(cuda)
    text = version_text(cuda, 'CUDA version', CUDA_FORM)
    m = _CUDA_RE.match(text)
    if not m:
        raise CompatError('CUDA version: expected %s, got %s' % (CUDA_FORM, short_repr(text)))
    update = int(m.group(3) or 0)
    if update > CUDA_MAX_UPDATE:
        raise CompatError("CUDA version %r: %d is not an update number (nvcc prints build numbers, V%s); expected %s"
                          % (text, update, text, CUDA_FORM))
    return int(m.group(1)), int(m.group(2)), update


def parse_driver_version(driver):
    """``'535.104.05'`` -> (535, 104, 5), ``'390.116'`` -> (390, 116): ``NNN.NN`` or ``NNN.NN.NN``, the middle
    and last numbers of one to three digits. A bare branch (``'535'``) is no driver version: it would compare as
    535.0.0, older than every release of its branch. Raises CompatError for any other form.
    """
    text = version_text(driver, 'driver version', DRIVER_FORM)
    if not _DRIVER_VERSION_RE.match(text):
        raise CompatError('driver version: expected %s, got %s' % (DRIVER_FORM, short_repr(text)))
    return tuple(int(p) for p in text.split('.'))


def version_str(version):
    """``(12, 4)`` -> ``'12.4'``. Raises CompatError unless ``version`` is a tuple (or list) of numbers."""
    return '.'.join(str(p) for p in _version_tuple(version))


def compare_versions(a, b):
    """-1, 0 or 1. Missing trailing parts count as 0 (``12.4 == 12.4.0``)."""
    va, vb = list(parse_version(a)), list(parse_version(b))
    width = max(len(va), len(vb))
    va += [0] * (width - len(va))
    vb += [0] * (width - len(vb))
    return (va > vb) - (va < vb)


def version_ge(a, b):
    return compare_versions(a, b) >= 0


def driver_branch(driver):
    """``'535.104.05'`` / ``'535'`` / ``'535-server'`` / ``'nvidia-driver-535-open'`` -> 535.

    Raises CompatError for anything else (``'535.x'``, ``'latest'``).
    """
    if isinstance(driver, int) and not isinstance(driver, bool):
        if 100 <= driver <= 999:
            return driver
        raise CompatError('expected %s, got %s' % (BRANCH_FORM, short_repr(driver)))
    text = version_text(driver, 'driver branch', BRANCH_FORM)
    m = _DRIVER_BRANCH_RE.match(text)
    if not m:
        raise CompatError('expected %s, got %s' % (BRANCH_FORM, short_repr(text)))
    return int(m.group(1))


def cuda_major_minor(cuda):
    return parse_cuda(cuda)[:2]


def parse_torch(torch):
    """``'1.13.1+cu118'`` -> ((1, 13, 1), 'cu118'); ``'2.4'`` -> ((2, 4), None). CompatError for any other form."""
    text = version_text(torch, 'torch version', TORCH_FORM)
    m = _TORCH_RE.match(text)
    if not m:
        raise CompatError('torch version: expected %s, got %s' % (TORCH_FORM, short_repr(text)))
    version = tuple(int(p) for p in m.groups()[:3] if p is not None)
    return version, m.group(4)
