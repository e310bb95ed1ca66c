# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""What works with what: CUDA, drivers, GPU architectures, kernel modules, PyTorch wheels.

The knowledge is data, in _data_cuda.py, _data_gpu.py and _data_torch.py (each table with its source); this
file is the logic that reads it (the exact PCI id, chip and product name lookups are in _gpu_lookup.py).
Functions answer questions with reasons, never bare booleans where a user needs to know what to change, and in
neutral terms: a problem names its subject (SUBJECTS), never a role variable; the caller words it.

No input makes a public function raise anything but CompatError (a ValueError) with a message that names what
is wrong and the form expected: versions are read from ASCII digits only (``int()``, ``str.isdigit()`` and a
plain ``\\d`` also take Arabic-Indic or fullwidth digits), each number has at most MAX_VERSION_DIGITS digits
(``int()`` refuses over 4300), and a driver version and a branch that contradict each other are refused.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import math
import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_cuda import (
    CUDA_MINOR_COMPAT_MIN_DRIVER, CUDA_RELEASES, KNOWN_BRANCHES, LTS_BRANCHES, MINOR_COMPAT_LIMITS,
    OPEN_KERNEL_MODULE_MIN_BRANCH, PROPRIETARY_KERNEL_MODULE_END_BRANCH)
from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_gpu import ARCHITECTURE_ALIASES, ARCHITECTURE_ROWS
# gpu_architecture() asks these; callers of _compat (cuda_compat, the gpu filters) reach them here too.
from ansible_collections.gpuops.gpu_server.plugins.module_utils._gpu_lookup import (
    chip_architecture, normalize_pci_id, pci_id_info, product_architecture)
from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_torch import TORCH_CUDA_VARIANTS, TORCH_DROPS

# What a problem is about, named as cuda_compat names its options. The caller words each subject with its own
# variable name (see word()); this module knows no role variable.
SUBJECTS = ('cuda_version', 'driver_branch', 'driver_version', 'kernel_module', 'torch_version', 'architectures')
# Switches a fix can name besides the subjects (worded the same way): the override of the refusal of a branch newer
# than any in the tables.
SWITCHES = ('allow_unknown_branch',)

# The newest driver branch the tables know: a newer one is refused unless allow_unknown_branch says to go on.
NEWEST_KNOWN_BRANCH = max(KNOWN_BRANCHES)
# The newest known branch that still has proprietary kernel modules.
LAST_PROPRIETARY_BRANCH = max(b for b in KNOWN_BRANCHES if b < PROPRIETARY_KERNEL_MODULE_END_BRANCH)


class CompatError(ValueError):
    """A question this module cannot answer as asked: a malformed version, an unknown CUDA release, contradictory
    arguments. A ValueError, so that callers that catch ValueError keep working."""


# ---------------------------------------------------------------------------------------------
# Versions
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# CUDA toolkit -> minimum Linux x86_64 driver
# ---------------------------------------------------------------------------------------------

_RELEASE_RE = re.compile(r'(?:GA|RC|Update ([0-9]+))\Z')


def _release_key(cuda, release):
    """``('12.2', 'Update 2')`` -> (12, 2, 2); ``('12.2', 'GA')`` -> (12, 2, 0)."""
    m = _RELEASE_RE.match(release)
    if not m:
        raise CompatError('CUDA release %r of %s is neither GA, RC nor "Update N"' % (release, cuda))
    major, minor = (int(p) for p in cuda.split('.'))
    return (major, minor, int(m.group(1) or 0))


# (major, minor, update) -> minimum driver; update 0 is the GA (or RC) row.
CUDA_TOOLKIT_MIN_DRIVER = dict((_release_key(c, r), d) for c, r, d in CUDA_RELEASES)


def known_cuda_versions():
    """Every CUDA major.minor in the table, oldest first, as strings."""
    return ['%d.%d' % mm for mm in sorted(set(k[:2] for k in CUDA_TOOLKIT_MIN_DRIVER))]


def cuda_min_driver(cuda, mode='toolkit'):
    """Minimum Linux driver for CUDA ``cuda`` (``'11.8'``, ``'12.2.2'``).

    mode ``toolkit``: the driver that the release notes list for that toolkit (full compatibility).
    mode ``minor``: the minimum under CUDA minor version compatibility (CUDA 11 and later).
    Raises CompatError for a version the tables do not know.
    """
    if mode not in ('toolkit', 'minor'):
        raise CompatError("mode must be 'toolkit' or 'minor', got %s" % short_repr(mode))
    major, minor, update = parse_cuda(cuda)
    v = (major, minor, update) if update else (major, minor)
    if mode == 'minor':
        if major not in CUDA_MINOR_COMPAT_MIN_DRIVER:
            raise CompatError('CUDA %s has no minor version compatibility (it exists for CUDA %s)'
                              % (version_str(v), ', '.join('%d.x' % m for m in sorted(CUDA_MINOR_COMPAT_MIN_DRIVER))))
        return CUDA_MINOR_COMPAT_MIN_DRIVER[major]
    rows = sorted(k for k in CUDA_TOOLKIT_MIN_DRIVER if k[:2] == (major, minor) and k[2] <= update)
    if not rows:
        raise CompatError('CUDA %s is not in the table of CUDA releases (known: %s)'
                          % (version_str(v), ', '.join(known_cuda_versions())))
    return CUDA_TOOLKIT_MIN_DRIVER[rows[-1]]


def driver_cuda_version(driver):
    """Highest CUDA major.minor whose toolkit driver is <= ``driver`` (what nvidia-smi shows), or None."""
    parse_driver_version(driver)
    best = None
    for key in sorted(CUDA_TOOLKIT_MIN_DRIVER):
        if key[2] != 0:
            continue
        if version_ge(driver, CUDA_TOOLKIT_MIN_DRIVER[key]):
            best = key[:2]
    return '%d.%d' % best if best else None


def cuda_driver_mode(driver, cuda):
    """How a driver runs CUDA ``cuda``: ``'full'``, ``'minor'`` (minor version compatibility) or ``'none'``."""
    parse_driver_version(driver)
    if version_ge(driver, cuda_min_driver(cuda, 'toolkit')):
        return 'full'
    major = parse_cuda(cuda)[0]
    if major in CUDA_MINOR_COMPAT_MIN_DRIVER and version_ge(driver, CUDA_MINOR_COMPAT_MIN_DRIVER[major]):
        return 'minor'
    return 'none'


def cuda_driver_compatible(driver, cuda, minor=False):
    mode = cuda_driver_mode(driver, cuda)
    return mode == 'full' or (minor and mode == 'minor')


# ---------------------------------------------------------------------------------------------
# Architectures
# ---------------------------------------------------------------------------------------------

# Name -> {compute_capabilities, first_cuda, last_cuda, min_branch, last_branch, recommended_branch,
# open_kernel_module}, from the rows of _data_gpu.ARCHITECTURE_ROWS (oldest first).
_ARCHITECTURE_FIELDS = ('compute_capabilities', 'first_cuda', 'last_cuda', 'min_branch', 'last_branch',
                        'recommended_branch', 'open_kernel_module')
ARCHITECTURES = dict((row[0], dict(zip(_ARCHITECTURE_FIELDS, row[1:]))) for row in ARCHITECTURE_ROWS)
ARCHITECTURE_ORDER = tuple(row[0] for row in ARCHITECTURE_ROWS)
RECOMMENDED_MIN_BRANCH = dict((name, info['recommended_branch']) for name, info in ARCHITECTURES.items()
                              if info['recommended_branch'])


def canonical_architecture(name):
    """Case-insensitive lookup of an architecture name (``'ada'``, ``'Ada Lovelace'``) -> canonical, or None."""
    if not isinstance(name, str):
        return None
    low = ' '.join(name.split()).lower()
    if low in ARCHITECTURE_ALIASES:
        return ARCHITECTURE_ALIASES[low]
    for arch in ARCHITECTURE_ORDER:
        if arch.lower() == low:
            return arch
    return None


def architecture_info(arch):
    canon = canonical_architecture(arch)
    if canon is None:
        raise CompatError('unknown GPU architecture %s (known: %s)' % (short_repr(arch), ', '.join(ARCHITECTURE_ORDER)))
    info = dict(ARCHITECTURES[canon])
    info['name'] = canon
    return info


def driver_supports_architecture(driver, arch):
    """Whether a driver branch (``'535'``) or version (``'535.104.05'``) drives ``arch``."""
    return not branch_architecture_problems(driver_branch(driver), arch)


def branch_architecture_problems(branch, arch):
    """Reasons why driver branch ``branch`` (``535``, or any form :func:`driver_branch` reads) cannot drive ``arch``
    (empty list when it can)."""
    branch = driver_branch(branch)
    info = architecture_info(arch)
    problems = []
    if info['last_branch'] is not None and branch > info['last_branch']:
        problems.append('driver branch %d does not support %s GPUs: the last branch that does is %d'
                        % (branch, info['name'], info['last_branch']))
    if info['min_branch'] is not None and branch < info['min_branch']:
        problems.append('driver branch %d predates %s GPUs: they need branch %d or newer'
                        % (branch, info['name'], info['min_branch']))
    return problems


def architectures_for_branch(branch):
    """Architectures a driver branch drives, oldest first."""
    branch = driver_branch(branch)
    return [a for a in ARCHITECTURE_ORDER if not branch_architecture_problems(branch, a)]


def unknown_branch_problem(branch):
    """Why driver branch ``branch`` (any form :func:`driver_branch` reads) cannot be checked: it is newer than every
    branch the tables know (NEWEST_KNOWN_BRANCH). None for a branch that is not newer."""
    branch = driver_branch(branch)
    if branch <= NEWEST_KNOWN_BRANCH:
        return None
    return ('driver branch %d is newer than the newest branch known here (%d): which GPUs, kernel module flavours and '
            'CUDA versions it supports is not known, so it cannot be checked' % (branch, NEWEST_KNOWN_BRANCH))


def branch_kernel_module_problem(branch, kernel_module):
    """Why driver branch ``branch`` has no kernel modules of flavour ``kernel_module`` (``'open'`` or
    ``'proprietary'``), or None when it has them."""
    branch = driver_branch(branch)
    if kernel_module == 'open' and branch < OPEN_KERNEL_MODULE_MIN_BRANCH:
        return 'driver branch %d has no open kernel modules (they start with branch %d)' % (
            branch, OPEN_KERNEL_MODULE_MIN_BRANCH)
    if kernel_module == 'proprietary' and branch >= PROPRIETARY_KERNEL_MODULE_END_BRANCH:
        return ('driver branch %d has no proprietary kernel modules (NVIDIA removed them with branch %d; the last '
                'branch known here that has them is %d)' % (branch, PROPRIETARY_KERNEL_MODULE_END_BRANCH,
                                                            LAST_PROPRIETARY_BRANCH))
    return None


# ---------------------------------------------------------------------------------------------
# PCI device id, chip code name or product name -> architecture (the lookups live in _gpu_lookup.py)
# ---------------------------------------------------------------------------------------------

def gpu_architecture(pci_id_or_name):
    """Architecture from a PCI id (``10de:2330``), a chip code name (``GP108``) or a product name; None when unknown."""
    info = pci_id_info(pci_id_or_name)
    if info is not None:
        return info['architecture']
    if normalize_pci_id(pci_id_or_name) is not None:
        return None
    return chip_architecture(pci_id_or_name) or product_architecture(pci_id_or_name)


# ---------------------------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------------------------

def parse_torch(torch):
    """``'1.13.1+cu118'`` -> ((1, 13, 1), 'cu118'); ``'2.4'`` -> ((2, 4), None). CompatError for any other form."""
    text = version_text(torch, 'torch version', TORCH_FORM)
    m = _TORCH_RE.match(text)
    if not m:
        raise CompatError('torch version: expected %s, got %s' % (TORCH_FORM, short_repr(text)))
    version = tuple(int(p) for p in m.groups()[:3] if p is not None)
    return version, m.group(4)


def torch_cuda_variants(torch):
    """CUDA wheel tags published for a torch release. Raises CompatError for an unknown release."""
    version, _local = parse_torch(torch)
    key = version[:2] if len(version) > 1 else (version[0], 0)
    if key not in TORCH_CUDA_VARIANTS:
        raise CompatError('torch %s is not in the table of PyTorch releases (known: %s)'
                          % (version_str(version), ', '.join('%d.%d' % k for k in sorted(TORCH_CUDA_VARIANTS))))
    return list(TORCH_CUDA_VARIANTS[key])


def cuda_tag(cuda):
    major, minor = cuda_major_minor(cuda)
    return 'cu%d%d' % (major, minor)


_WHEEL_TAG_RE = re.compile(r'cu([0-9]{2,3})\Z')


def tag_cuda(tag):
    """``'cu118'`` -> ``'11.8'``, ``'cu130'`` -> ``'13.0'``."""
    m = _WHEEL_TAG_RE.match(tag) if isinstance(tag, str) else None
    if not m:
        raise CompatError('expected a CUDA wheel tag such as "cu121", got %s' % short_repr(tag))
    digits = m.group(1)
    return '%s.%s' % (digits[:2], digits[2:]) if len(digits) == 3 else '%s.%s' % (digits[0], digits[1])


def torch_missing_architectures(torch, variant):
    version, _local = parse_torch(torch)
    cuda = cuda_major_minor(tag_cuda(variant))
    missing = []
    for first_torch, first_cuda, archs in TORCH_DROPS:
        if tuple(version[:2]) >= first_torch and cuda >= first_cuda:
            missing.extend(a for a in archs if a not in missing)
    return missing


# ---------------------------------------------------------------------------------------------
# The question a preflight asks
# ---------------------------------------------------------------------------------------------

def _problem(subject, message, fix):
    """A problem in neutral terms: ``subject`` is one of SUBJECTS; ``fix`` names subjects as ``{subject}``."""
    return {'subject': subject, 'message': message, 'fix': fix}


_SUBJECT_RE = re.compile(r'\{(%s)\}' % '|'.join(SUBJECTS + SWITCHES))


def word(text, names=None):
    """``text`` with each ``{subject}`` (one of SUBJECTS or SWITCHES) replaced by the caller's name for it (``names``,
    a dict; a name that is not a non-empty string is ignored), else the subject itself."""
    if not isinstance(text, str):
        raise CompatError('expected the text of a problem or fix, got %s' % short_repr(text))
    if names is not None and not isinstance(names, dict):
        raise CompatError('expected a dict of subject to variable name, got %s' % short_repr(names))
    names = names or {}

    def name(m):
        given = names.get(m.group(1))
        return given if isinstance(given, str) and given else m.group(1)
    return _SUBJECT_RE.sub(name, text)


def _architecture_list(architectures):
    """``architectures`` as a list (None -> []); CompatError for anything but a list, tuple or set."""
    if architectures is None:
        return []
    if not isinstance(architectures, (list, tuple, set, frozenset)):
        raise CompatError('architectures: expected a list of GPU architecture names such as [Hopper], got %s'
                          % short_repr(architectures))
    return list(architectures)


def _strict(value, what, form, parse):
    """A version argument as text, after ``parse`` proved its form (CompatError naming ``what`` otherwise)."""
    if value is None:
        return None
    text = version_text(value, what, form)
    parse(text)
    return text


def suggest_branch(cuda=None, architectures=None, kernel_module=None, allow_minor=True):
    """A driver branch that satisfies all constraints, long-term-support branches first, or None.

    A branch that runs ``cuda`` fully is preferred; when the architectures rule that out (Kepler and
    CUDA 11.8: R470 is Kepler's last branch) and ``allow_minor`` is true, a branch that runs it through
    minor version compatibility is suggested instead.
    """
    architectures = _architecture_list(architectures)
    floors = []
    if cuda is not None:
        major = parse_cuda(cuda)[0]
        try:
            floors.append(driver_branch(cuda_min_driver(cuda, 'toolkit')))
        except CompatError:
            pass
        if major in CUDA_MINOR_COMPAT_MIN_DRIVER and (allow_minor or not floors):
            floors.append(driver_branch(CUDA_MINOR_COMPAT_MIN_DRIVER[major]))
    low, high = 0, 10 ** 6
    for arch in architectures:
        info = architecture_info(arch)
        low = max(low, RECOMMENDED_MIN_BRANCH.get(info['name'], info['min_branch'] or 0))
        if info['last_branch'] is not None:
            high = min(high, info['last_branch'])
    if kernel_module == 'open':
        low = max(low, OPEN_KERNEL_MODULE_MIN_BRANCH)
    elif kernel_module == 'proprietary':
        high = min(high, PROPRIETARY_KERNEL_MODULE_END_BRANCH - 1)
    for floor in floors or [0]:
        for pool in (LTS_BRANCHES, KNOWN_BRANCHES):
            fitting = [b for b in pool if max(low, floor) <= b <= high]
            if fitting:
                return str(max(fitting))
    return None


def check(cuda=None, driver=None, branch=None, architectures=None, kernel_module=None, torch=None,
          allow_minor=True, allow_unknown_branch=False):
    """Answer "does this combination work?" with reasons and fixes.

    cuda: wanted CUDA toolkit (``'12.4'``); driver: an installed/pinned driver version
    (``'535.104.05'``); branch: a wanted driver branch (``'535'``), used when ``driver`` is not given;
    architectures: GPU architectures on the host; kernel_module: ``'open'`` or ``'proprietary'``;
    torch: a torch release, optionally with its local tag (``'2.4.1'``, ``'1.13.1+cu118'``).
    allow_unknown_branch: go on with a driver branch newer than NEWEST_KNOWN_BRANCH (a note instead of a problem);
    the checks then treat it as what its number says (newer than every architecture's last branch, no proprietary
    kernel modules), nothing more.

    Returns ``{'ok', 'mode', 'problems': [{'subject', 'message', 'fix'}], 'notes',
    'suggested_driver_branch'}``. A problem's ``subject`` is one of SUBJECTS, its ``fix`` names subjects as
    ``{subject}``: the caller words it with its own names (:func:`word`). ``mode`` is how the driver runs the
    CUDA version: ``full``, ``minor`` (minor version compatibility, see notes for its limits) or ``none``; None
    when there is no CUDA/driver pair to judge.

    Malformed versions are errors, not problems (CompatError, saying what form is expected), and so is a driver
    version of another branch than ``branch``: which of the two is meant cannot be told.

    The steps, in the order their problems and notes are reported: the architectures and the kernel module
    flavour as given, CUDA against the driver side, CUDA against the architectures, the driver branch against the
    newest known branch, the architectures and the kernel module flavour, the flavour against the architectures, torch, and last a
    combination that no known branch satisfies.
    """
    cuda, driver, branch, torch = _checked_versions(cuda, driver, branch, torch)
    archs, problems = _known_architectures(architectures)
    kernel_module, flavour_problems = _kernel_module_flavour(kernel_module)
    problems.extend(flavour_problems)
    notes = []
    drv_branch, drv_subject = _driver_side(driver, branch)
    suggestion = suggest_branch(cuda, archs, kernel_module, allow_minor)
    fix_branch = _branch_fix(suggestion)

    mode = None
    if cuda is not None:
        mode, found, said = _cuda_driver_findings(cuda, driver, drv_branch, drv_subject, fix_branch, allow_minor)
        problems.extend(found)
        notes.extend(said)
        problems.extend(_cuda_architecture_problems(cuda, archs))
    if drv_branch is not None:
        found, said = _unknown_branch_findings(drv_branch, drv_subject, suggestion, allow_unknown_branch)
        problems.extend(found)
        notes.extend(said)
        found, said = _branch_architecture_findings(drv_branch, drv_subject, archs, fix_branch)
        problems.extend(found)
        notes.extend(said)
        problems.extend(_kernel_module_branch_problems(drv_branch, kernel_module))
    if kernel_module is not None:
        problems.extend(_kernel_module_architecture_problems(kernel_module, archs))
    if torch is not None:
        problems.extend(_check_torch(torch, cuda, driver, drv_branch, archs, notes))
    if suggestion is None and drv_branch is None and (cuda is not None or archs) and not problems:
        problems.append(_problem('driver_branch', 'no known driver branch satisfies CUDA %s with %s GPUs'
                                 % (cuda or 'any', ', '.join(archs) or 'these'), fix_branch))
    return {
        'ok': not problems,
        'mode': mode,
        'problems': problems,
        'notes': notes,
        'suggested_driver_branch': suggestion,
    }


def _checked_versions(cuda, driver, branch, torch):
    """``(cuda, driver, branch, torch)`` as text once their forms are proved (None stays None).

    CompatError for a malformed version, and for a driver version of another branch than ``branch``.
    """
    cuda = _strict(cuda, 'CUDA version', CUDA_FORM, parse_cuda)
    driver = _strict(driver, 'driver version', DRIVER_FORM, parse_driver_version)
    branch = _strict(branch, 'driver branch', BRANCH_FORM, driver_branch)
    torch = _strict(torch, 'torch version', TORCH_FORM, parse_torch)
    if driver is not None and branch is not None and driver_branch(driver) != driver_branch(branch):
        raise CompatError('driver version %r is a release of branch %d, but the driver branch is %r (branch %d): '
                          'they contradict each other; give the one that is meant, or both of the same branch'
                          % (driver, driver_branch(driver), branch, driver_branch(branch)))
    return cuda, driver, branch, torch


def _known_architectures(architectures):
    """``(canonical names, each once, in the order given; problems naming the unknown ones)``."""
    archs, problems = [], []
    for arch in _architecture_list(architectures):
        canon = canonical_architecture(arch)
        if canon is None:
            problems.append(_problem('architectures', 'unknown GPU architecture %s' % short_repr(arch),
                                     'use one of: %s' % ', '.join(ARCHITECTURE_ORDER)))
        elif canon not in archs:
            archs.append(canon)
    return archs, problems


def _kernel_module_flavour(kernel_module):
    """``(flavour, problems)``: ``'open'``, ``'proprietary'`` or None; anything else is a problem and judged as None."""
    if kernel_module in (None, 'open', 'proprietary'):
        return kernel_module, []
    return None, [_problem('kernel_module', 'kernel module flavour %s is neither open nor proprietary'
                           % short_repr(kernel_module), "set {kernel_module} to 'open' or 'proprietary'")]


def _driver_side(driver, branch):
    """``(branch number or None, subject of its problems)``: an exact driver version when known, else the wanted
    branch. A driver version's problems are about the branch when a branch was given too."""
    if driver is not None:
        return driver_branch(driver), 'driver_version' if branch is None else 'driver_branch'
    if branch is not None:
        return driver_branch(branch), 'driver_branch'
    return None, 'driver_branch'


def _branch_fix(suggestion):
    """The fix of a driver side problem: the suggested branch, or why there is none."""
    if suggestion:
        return "set {driver_branch} to '%s'" % suggestion
    return 'no single driver branch satisfies every constraint: split the hosts or change the CUDA version'


def _branch_cuda_mode(drv_branch, toolkit_min, minor_min):
    """How every release of a branch runs a CUDA version whose minimum drivers are ``toolkit_min`` (full) and
    ``minor_min`` (minor version compatibility, or None): a branch's releases all share its major number."""
    if drv_branch >= driver_branch(toolkit_min):
        return 'full'
    if minor_min is not None and drv_branch >= driver_branch(minor_min):
        return 'minor'
    return 'none'


def _cuda_driver_findings(cuda, driver, drv_branch, drv_subject, fix_branch, allow_minor):
    """``(mode, problems, notes)`` of CUDA ``cuda`` on the driver side (mode None when there is none to judge, or
    when the CUDA version is unknown: that is the problem then)."""
    try:
        toolkit_min = cuda_min_driver(cuda, 'toolkit')
    except CompatError as e:
        return None, [_problem('cuda_version', str(e), 'use one of the known CUDA versions')], []
    if drv_branch is None:
        return None, [], []
    minor_min = CUDA_MINOR_COMPAT_MIN_DRIVER.get(parse_cuda(cuda)[0])
    problems, notes = [], []
    if driver is not None:
        mode = cuda_driver_mode(driver, cuda)
        have = 'driver %s' % driver
    else:
        mode = _branch_cuda_mode(drv_branch, toolkit_min, minor_min)
        have = 'driver branch %d' % drv_branch
        if mode == 'full' and drv_branch == driver_branch(toolkit_min):
            notes.append('CUDA %s needs at least driver %s: install a release of branch %d that is not older'
                         % (cuda, toolkit_min, drv_branch))
    if mode == 'minor':
        notes.append('%s runs CUDA %s only through minor version compatibility (needs >= %s, full support needs '
                     '>= %s)' % (have, cuda, minor_min, toolkit_min))
        notes.extend(MINOR_COMPAT_LIMITS)
        if not allow_minor:
            problems.append(_problem(drv_subject, '%s supports CUDA %s only through minor version compatibility; '
                                     'full support needs driver >= %s' % (have, cuda, toolkit_min), fix_branch))
    elif mode == 'none':
        need = toolkit_min
        if minor_min is not None and minor_min != toolkit_min:
            need = '%s (or >= %s with minor version compatibility)' % (toolkit_min, minor_min)
        problems.append(_problem(drv_subject, '%s is too old for CUDA %s: it needs driver >= %s' % (have, cuda, need),
                                 fix_branch))
    return mode, problems, notes


def _cuda_architecture_problems(cuda, archs):
    """CUDA ``cuda`` against each architecture's first and last CUDA."""
    problems = []
    for arch in archs:
        info = ARCHITECTURES[arch]
        if info['last_cuda'] is not None and compare_versions(cuda_major_minor(cuda), info['last_cuda']) > 0:
            problems.append(_problem('cuda_version', 'CUDA %s does not support %s GPUs: the last CUDA that does '
                                     'is %s' % (cuda, arch, info['last_cuda']),
                                     "set {cuda_version} to '%s' or older" % info['last_cuda']))
        if compare_versions(cuda_major_minor(cuda), info['first_cuda']) < 0:
            problems.append(_problem('cuda_version', 'CUDA %s predates %s GPUs: they need CUDA %s or newer'
                                     % (cuda, arch, info['first_cuda']),
                                     "set {cuda_version} to '%s' or newer" % info['first_cuda']))
    return problems


def _branch_architecture_findings(drv_branch, drv_subject, archs, fix_branch):
    """``(problems, notes)`` of a driver branch against each architecture: supported at all, and recommended."""
    problems, notes = [], []
    for arch in archs:
        reasons = branch_architecture_problems(drv_branch, arch)
        problems.extend(_problem(drv_subject, reason, fix_branch) for reason in reasons)
        rec = RECOMMENDED_MIN_BRANCH.get(arch)
        if rec and drv_branch < rec and not reasons:
            notes.append('%s GPUs are supported from branch %d, NVIDIA recommends %d or newer'
                         % (arch, ARCHITECTURES[arch]['min_branch'], rec))
    return problems, notes


def _unknown_branch_findings(drv_branch, drv_subject, suggestion, allow_unknown_branch):
    """``(problems, notes)`` of a driver branch newer than every branch the tables know: a problem naming the newest
    known branch and the override, or a note when ``allow_unknown_branch`` is true."""
    unknown = unknown_branch_problem(drv_branch)
    if not unknown:
        return [], []
    if allow_unknown_branch:
        return [], ['%s; going on unchecked (allow_unknown_branch)' % unknown]
    fits = "; '%s' fits this selection" % suggestion if suggestion else ''
    return [_problem(drv_subject, unknown,
                     'set {driver_branch} to a branch known here (the newest is %d%s), or set '
                     '{allow_unknown_branch} to true to go on with branch %d unchecked'
                     % (NEWEST_KNOWN_BRANCH, fits, drv_branch))], []


def _kernel_module_branch_problems(drv_branch, kernel_module):
    """The kernel module flavour asked of a branch that has none of it: open before the first branch with open
    modules, proprietary from the branch that removed them."""
    flavour = branch_kernel_module_problem(drv_branch, kernel_module)
    if not flavour:
        return []
    if kernel_module == 'open':
        return [_problem('kernel_module', flavour, "set {kernel_module} to 'proprietary' or {driver_branch} to '%d' "
                         "or newer" % OPEN_KERNEL_MODULE_MIN_BRANCH)]
    return [_problem('kernel_module', flavour, "set {kernel_module} to 'open' (Turing or newer GPUs) or "
                     "{driver_branch} to '%d' or older" % LAST_PROPRIETARY_BRANCH)]


def _kernel_module_architecture_problems(kernel_module, archs):
    """The kernel module flavour against each architecture: open unsupported before Turing, required on Blackwell."""
    problems = []
    for arch in archs:
        need = ARCHITECTURES[arch]['open_kernel_module']
        if kernel_module == 'open' and need == 'unsupported':
            problems.append(_problem('kernel_module', 'the open kernel modules do not support %s GPUs '
                                     '(Turing or newer only)' % arch, "set {kernel_module} to 'proprietary'"))
        if kernel_module == 'proprietary' and need == 'required':
            problems.append(_problem('kernel_module', '%s GPUs are supported only by the open kernel '
                                     'modules' % arch, "set {kernel_module} to 'open'"))
    return problems


def _check_torch(torch, cuda, driver, drv_branch, archs, notes):
    problems = []
    try:
        variants = torch_cuda_variants(torch)
    except CompatError as e:
        return [_problem('torch_version', str(e), 'use a PyTorch release from the table or check its wheel index')]
    version, local = parse_torch(torch)
    if local is not None and local.startswith('cu'):
        wanted = local
        if wanted not in variants:
            return [_problem('torch_version', 'torch %s+%s was never published: torch %s has CUDA wheels %s'
                             % (version_str(version), local, version_str(version), ', '.join(variants)),
                             "use one of: %s" % ', '.join('%s+%s' % (version_str(version), v) for v in variants))]
    elif cuda is not None:
        wanted = cuda_tag(cuda)
        if wanted not in variants:
            # A wheel of the same CUDA major runs on this toolkit's driver through minor version
            # compatibility, since wheels bundle their own CUDA runtime.
            same_major = [v for v in variants if tag_cuda(v).split('.')[0] == str(cuda_major_minor(cuda)[0])]
            if same_major:
                wanted = max(same_major, key=lambda v: cuda_major_minor(tag_cuda(v)))
                notes.append('torch %s has no %s wheel; %s wheels bundle their own CUDA runtime and run on this '
                             'driver' % (version_str(version), cuda_tag(cuda), wanted))
            else:
                return [_problem('torch_version', 'torch %s has no wheel for CUDA %d.x (published: %s)'
                                 % (version_str(version), cuda_major_minor(cuda)[0], ', '.join(variants)),
                                 "pick a torch release with a %s wheel, or set {cuda_version} to the CUDA of one "
                                 "of: %s" % (cuda_tag(cuda), ', '.join(variants)))]
    else:
        wanted = variants[-1]
    for arch in torch_missing_architectures(torch, wanted):
        if arch in archs:
            problems.append(_problem('torch_version', 'torch %s %s wheels have no kernels for %s GPUs'
                                     % (version_str(version), wanted, arch),
                                     'use an older CUDA variant (e.g. cu126) or an older torch release'))
    wheel_cuda = tag_cuda(wanted)
    major = parse_version(wheel_cuda)[0]
    minor_min = CUDA_MINOR_COMPAT_MIN_DRIVER.get(major)
    if driver is not None:
        ok = version_ge(driver, minor_min) if minor_min else version_ge(driver, cuda_min_driver(wheel_cuda))
        have = 'driver %s' % driver
    elif drv_branch is not None:
        need = minor_min or cuda_min_driver(wheel_cuda)
        ok = drv_branch >= driver_branch(need)
        have = 'driver branch %d' % drv_branch
    else:
        ok = True
        have = None
    if not ok:
        problems.append(_problem('torch_version', 'torch %s %s wheels need driver >= %s, %s is older'
                                 % (version_str(version), wanted, minor_min or cuda_min_driver(wheel_cuda), have),
                                 'use a torch wheel for an older CUDA, or raise {driver_branch}'))
    return problems
