# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The kernels a host can boot, the NVIDIA module each one has, and the packages that give each one its module.

Pure functions (the filesystem reads are bounded and never follow a link out of the tree they read), used by the
module nvidia_kernels. The plan chooses per kernel the way Ubuntu's ``ubuntu-drivers install --gpgpu`` chooses for
the running one (UbuntuDrivers/detect.py, get_linux_modules_metapackage): Canonical's prebuilt, signed module package
when the archive has it for that kernel ABI, otherwise DKMS, and the per-flavour metapackage only for a kernel whose
linux-image metapackage is installed. Unlike ubuntu-drivers it plans for every bootable kernel, not only the running
one: on an image builder the running kernel is the build host's.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import errno
import os
import re
import stat

# modinfo of the 580 nvidia.ko prints a few KiB (parm lines and a multi-line signature); anything past this is junk.
MAX_MODINFO_CHARS = 256 * 1024
# A field value longer than this is no modinfo value (filename is a path: PATH_MAX is 4096).
MAX_FIELD_CHARS = 4096
# The kernel's utsname release holds 64 characters; a longer "release" is not one.
MAX_RELEASE_CHARS = 64
# modules.dep of a 6.8 generic kernel is about 1 MiB; modules.builtin far less.
MAX_MODULES_LIST_BYTES = 32 * 1024 * 1024
# /etc/os-release is a few hundred bytes.
MAX_OS_RELEASE_BYTES = 64 * 1024
# A modprobe.d file is a few lines; one over this size is not the file the role writes.
MAX_CONFIG_BYTES = 1024 * 1024
# Entries looked at while searching an extracted initramfs (an Ubuntu 24.04 generic initramfs holds about 3,000).
MAX_TREE_ENTRIES = 200000

MODINFO_FIELDS = ('filename', 'version', 'vermagic', 'signer', 'sig_key', 'sig_hashalgo', 'name')
SOURCES = ('auto', 'prebuilt', 'dkms')
KERNEL_MODULES = ('proprietary', 'open')
FAMILIES = ('Ubuntu', 'Debian')

_FIELD = re.compile(r'^([a-z_]+):[ \t]*(.*)\Z')
_PRINTABLE = re.compile(r'^[\x20-\x7e]*\Z')
# A flavour: lower-case words joined by '-', at least one letter (generic, azure-fde, cloud-amd64, 686-pae).
_FLAVOUR = r'(?=[a-z0-9-]*[a-z])[a-z0-9]+(?:-[a-z0-9]+)*'
# Ubuntu 6.8.0-149-generic, 7.0.0-1018-aws; Debian 12 6.1.0-50-amd64, 6.1.0-50-cloud-amd64 (same shape).
_RELEASE_ABI = re.compile(r'^[0-9]+\.[0-9]+\.[0-9]+-[0-9]+-(' + _FLAVOUR + r')\Z')
# Debian 13 6.12.57+deb13-amd64, 6.12.57+deb13-cloud-amd64; backports 6.12.12+bpo-amd64.
_RELEASE_DEB = re.compile(r'^[0-9]+\.[0-9]+(?:\.[0-9]+)?\+(?:deb[0-9]+|bpo)-(' + _FLAVOUR + r')\Z')
_PACKAGE = re.compile(r'^[a-z0-9][a-z0-9+.-]{0,199}\Z')
_BRANCH = re.compile(r'^[0-9]{2,5}\Z')
# A release as a file name: printable ASCII without blank or '/', starting with a letter or digit (not '..').
_RELEASE_NAME = re.compile(r'^[A-Za-z0-9][\x21-\x2e\x30-\x7e]{0,%d}\Z' % (MAX_RELEASE_CHARS - 1))


def _text(value):
    """str from str or bytes (UTF-8, bad bytes replaced); None for anything else."""
    if isinstance(value, bytes):
        return value.decode('utf-8', errors='replace')
    if isinstance(value, str):
        return value
    return None


def parse_modinfo(text):
    """The fields of one ``modinfo`` answer that say which module a kernel has and who signed it.

    Returns a dict with those of ``filename``, ``version``, ``vermagic``, ``signer``, ``sig_key``, ``sig_hashalgo``
    and ``name`` that were printed with a value of printable ASCII (surrounding blanks removed; modinfo ends
    ``vermagic`` with a blank); the first value of a field wins. Anything else (other fields, continuation lines of
    the signature, junk, values with control or non-ASCII characters, values over 4096 characters) is left out.
    Only the first 256 KiB are read. Never raises: input that is not text gives ``{}``.
    """
    text = _text(text)
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


def _release_ok(release):
    return isinstance(release, str) and bool(_RELEASE_NAME.match(release))


def kernel_flavour(release):
    """The flavour a kernel release ends with: ``generic`` (6.8.0-149-generic), ``aws``, ``azure-fde``,
    ``nvidia-lowlatency``, ``amd64`` (6.1.0-50-amd64, 6.12.57+deb13-amd64), ``cloud-amd64``; '' for anything else.

    This is the release's own suffix. The flavour of the linux-image metapackage that installed it can differ
    (a 6.11 -generic kernel comes with linux-image-generic-hwe-24.04); the plan takes that one from the metapackage.
    """
    if not _release_ok(release):
        return ''
    for pattern in (_RELEASE_ABI, _RELEASE_DEB):
        m = pattern.match(release)
        if m:
            return m.group(1)
    return ''


# An upstream pre-release in a kernel release: 6.9.0-rc3 (uname -r of an upstream rc), 6.9.0-rc3-amd64 (an rc
# built with a distribution's flavour), 6.9.0-060900rc3-generic (Ubuntu's mainline builds), or Debian's 6.9~rc3
# spelling of the same in a package version.
_PRE_RELEASE = re.compile(r'(?:(?<=[0-9])|[-.~_])rc(?=[0-9])')


def _order_key(text):
    """dpkg's version ordering (deb-version(7): "Sorting algorithm") as a sort key: alternating non-digit and digit
    parts; non-digit parts compared character by character, letters before other characters, ``~`` before anything,
    even the end; digit parts compared as numbers. The key ends with the pair of an empty remainder, so that
    ``6.9.0`` sorts above ``6.9.0~rc3`` and below ``6.9.0-1``."""
    key = []
    for letters, digits in re.findall(r'([^0-9]*)([0-9]*)', text):
        if not letters and not digits:
            continue
        order = tuple(-1 if c == '~' else ord(c) if c.isalpha() else ord(c) + 256 for c in letters) + (0,)
        key.append((order, int(digits) if digits else 0))
    key.append(((0,), 0))
    return tuple(key)


def release_sort_key(release):
    """A sort key for kernel releases, numbers compared as numbers: ``sorted(releases, key=release_sort_key,
    reverse=True)`` puts the newest first (7.0.0-1018-aws before 6.8.0-1052-aws, 6.8.0-149 before 6.8.0-31).

    An upstream release candidate sorts below its release: ``6.9.0-rc1`` < ``6.9.0-rc2`` < ``6.9.0``, and
    ``6.9.0-rc3-amd64`` < ``6.9.0-1-amd64`` (an rc and a release build of one flavour), ``6.9.0-060900rc3-generic``
    < ``6.9.0-060900-generic`` (Ubuntu's mainline builds). The ``-rc`` marker is read as Debian's ``~rc`` (Debian
    versions an upstream rc as ``6.9~rc3``: Debian Policy 5.6.12, a ``~`` sorts before anything, even the end of a
    part), then the text is ordered as dpkg orders versions. This is the one comparison of kernel releases in the
    collection (nvidia_kernels, kernel_updates).

    Never raises; a value that is not a release (one that does not start with a digit) sorts by its text, before
    every release.
    """
    if not _release_ok(release) or not release[0].isdigit():
        return (0, str(release))
    # Digit runs are at most 64 characters long here, far from Python's limit on converting long digit strings.
    return (1,) + _order_key(_PRE_RELEASE.sub('~rc', release))


def newest_first(releases):
    return sorted(releases, key=release_sort_key, reverse=True)


def _join(root, path):
    return os.path.join(root or '/', path.lstrip('/'))


# Links followed while resolving one path inside a root (Linux's own limit is 40).
MAX_LINKS = 40


class PathRefused(ValueError):
    """A path inside a root that cannot be resolved inside it (its links do not end, one cannot be read, or the path
    is not under the root): refused, never guessed."""


def resolve_in_root(root, path, max_links=MAX_LINKS):
    """``path`` (under ``root``) resolved component by component as if ``root`` were ``/``: a link to an absolute
    target continues from ``root`` (Ubuntu's ``build -> /usr/src/linux-headers-...``, an image's ``lib -> /usr/lib``),
    ``..`` never climbs above ``root``, and every component is looked at with ``os.lstat``, so no link, in the last
    component or any other, leads to a file of the host that reads the image. A component that does not exist ends
    the walk: the rest is appended as it is (the caller's test of the path then finds nothing).

    Raises PathRefused after ``max_links`` links (a loop, or a chain no kernel would follow), for a link that cannot
    be read, and for a ``path`` not under ``root``."""
    root = os.path.abspath(root or '/')
    prefix = root.rstrip('/') + '/'
    # No lexical normalisation of path: its '..' are walked (and clamped) like a link's.
    if path != root and not path.startswith(prefix):
        raise PathRefused('%s is not under the root %s' % (path, root))
    pending = path[len(prefix):].split('/') if path.startswith(prefix) else []
    pending.reverse()                                    # a stack: the next component last
    done, links = [], 0
    while pending:
        part = pending.pop()
        if part in ('', '.'):
            continue
        if part == '..':
            if done:
                done.pop()                               # clamped: '..' of the root is the root
            continue
        candidate = os.path.join(root, *(done + [part]))
        try:
            st = os.lstat(candidate)
        except OSError:
            pending.reverse()
            return os.path.join(candidate, *[p for p in pending if p not in ('', '.')])
        if not stat.S_ISLNK(st.st_mode):
            done.append(part)
            continue
        links += 1
        if links > max_links:
            raise PathRefused('%s: more than %d symbolic links while resolving it inside %s (a loop?)'
                              % (path, max_links, root))
        try:
            target = os.readlink(candidate)
        except OSError as e:
            raise PathRefused('%s: the link %s cannot be read: %s' % (path, candidate, e.strerror or e))
        if os.path.isabs(target):
            done = []                                    # an absolute target starts again at the root
        pending.extend(reversed(target.split('/')))
    return os.path.join(root, *done)


def modules_dir(root, release):
    """``<root>/lib/modules/<release>`` (or ``<root>/usr/lib/modules/<release>`` on a tree without /lib) when it is a
    directory, else None."""
    if not _release_ok(release):
        return None
    for base in ('lib/modules', 'usr/lib/modules'):
        path = resolve_in_root(root, _join(root, os.path.join(base, release)))
        if os.path.isdir(path):
            return path
    return None


def bootable_kernels(root='/'):
    """The kernels the tree at ``root`` can boot, newest first: every ``<root>/boot/vmlinuz-<release>`` (a file)
    whose ``<root>/lib/modules/<release>`` directory exists.

    In a container the running kernel is the Docker host's: it has no /lib/modules directory there and is not
    listed. Names with blanks, control or non-ASCII characters are not kernels. Never raises; an unreadable /boot
    gives []. Raises PathRefused for a path whose links loop (resolve_in_root).
    """
    boot = resolve_in_root(root, _join(root, 'boot'))
    try:
        names = os.listdir(boot)
    except OSError:
        return []
    releases = []
    for name in names:
        if not name.startswith('vmlinuz-'):
            continue
        release = name[len('vmlinuz-'):]
        if not _release_ok(release):
            continue
        if os.path.isfile(resolve_in_root(root, os.path.join(boot, name))) and modules_dir(root, release):
            releases.append(release)
    return newest_first(releases)


def headers_installed(root, release):
    """Whether ``<root>/lib/modules/<release>/build`` exists: what DKMS builds against."""
    mdir = modules_dir(root, release)
    return bool(mdir) and os.path.isdir(resolve_in_root(root, os.path.join(mdir, 'build')))


def read_bounded(path, max_bytes):
    """The bytes of the regular file ``path``, not following a link at its last component.

    Returns ``(data, reason)``: data None and a reason when the file is missing (reason None then), not a regular
    file, unreadable or larger than ``max_bytes``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_NONBLOCK', 0))
    except OSError as e:
        if e.errno == errno.ENOENT:
            return None, None
        return None, '%s cannot be read: %s' % (path, e.strerror or e)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, '%s is not a regular file' % path
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(65536, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            return None, '%s is larger than %d bytes' % (path, max_bytes)
        return b''.join(chunks), None
    except OSError as e:
        return None, '%s cannot be read: %s' % (path, e.strerror or e)
    finally:
        os.close(fd)


def _module_key(name):
    # The kernel takes '-' and '_' in module names as the same character.
    return name.replace('-', '_')


def listed_modules(text):
    """The module names (``_`` for ``-``) listed in a ``modules.dep`` or ``modules.builtin`` text: the file name of
    the first field, without ``.ko`` and a compression suffix (``.xz``, ``.zst``, ``.gz``)."""
    text = _text(text) or ''
    names = set()
    for line in text.splitlines():
        path = line.split(':', 1)[0].strip()
        base = path.rsplit('/', 1)[-1]
        m = re.match(r'^([A-Za-z0-9_-]+)\.ko(?:\.(?:xz|zst|gz))?\Z', base)
        if m:
            names.add(_module_key(m.group(1)))
    return names


def module_listed(root, release, name):
    """Whether kernel ``release`` has module ``name`` (built as a file or built in), from its ``modules.dep`` and
    ``modules.builtin``: True, False, or None when neither file could be read (the caller then asks modinfo).

    nova_core, the upstream driver for GSP-based NVIDIA GPUs, is in kernels from 6.15 on (Ubuntu 26.04's 7.0
    kernels, noble's 7.0 HWE and cloud kernels); a 6.8 kernel answers False.
    """
    mdir = modules_dir(root, release)
    if not mdir:
        return None
    names, read_any = set(), False
    for listing in ('modules.dep', 'modules.builtin'):
        data, _reason = read_bounded(os.path.join(mdir, listing), MAX_MODULES_LIST_BYTES)
        if data is not None:
            read_any = True
            names |= listed_modules(data)
    if not read_any:
        return None
    return _module_key(name) in names


def os_family(text):
    """'Ubuntu' or 'Debian' from the text of /etc/os-release (ID, then ID_LIKE: Linux Mint and Pop!_OS are Ubuntu,
    Raspberry Pi OS is Debian), '' for anything else."""
    text = _text(text) or ''
    values = {}
    for line in text[:MAX_OS_RELEASE_BYTES].splitlines():
        m = re.match(r'^(ID|ID_LIKE)=(.*)\Z', line.strip())
        if m:
            values[m.group(1)] = m.group(2).strip().strip('"\'').lower().split()
    for key in ('ID', 'ID_LIKE'):
        words = values.get(key, [])
        for word, family in (('ubuntu', 'Ubuntu'), ('debian', 'Debian')):
            if word in words:
                return family
    return ''


def package_names(text):
    """The package names in ``apt-cache pkgnames`` output, as a set. Without ``--all-names`` apt-cache lists the
    packages that have a version in the cache, not names that are only provided; a line that is no package name
    is skipped."""
    text = _text(text) or ''
    return set(line.strip() for line in text.splitlines() if _PACKAGE.match(line.strip()))


def _dep_names(depends):
    names = set()
    for clause in depends.split(','):
        for alternative in clause.split('|'):
            word = alternative.strip().split(' ', 1)[0].split('(', 1)[0].split(':', 1)[0]
            if word:
                names.add(word)
    return names


def _is_per_release_image(name):
    # linux-image-6.8.0-149-generic, linux-image-unsigned-6.8.0-149-generic, linux-image-uc-...: one kernel each.
    return bool(re.match(r'^linux-image-(?:unsigned-|uc-)?[0-9]', name))


def image_metapackages(text, releases):
    """``{release: metapackage}`` for the installed linux-image metapackages in the output of
    ``dpkg-query -W -f '${Package}\\t${Status}\\t${Depends}\\n' 'linux-image-*'``.

    A metapackage is a ``linux-image-<flavour>`` package (linux-image-generic, linux-image-aws,
    linux-image-generic-hwe-24.04, Ubuntu Core's linux-image-uc-generic, Debian's linux-image-cloud-amd64) whose
    Depends name ``linux-image-<release>`` (or ``linux-image-unsigned-<release>``, ``linux-image-uc-<release>``); the
    per-release packages themselves are not metapackages. When several depend on the same kernel (linux-image-virtual
    and linux-image-generic both name a -generic kernel) the one named after the kernel's own flavour wins, else the
    first by name.
    """
    text = _text(text) or ''
    wanted = set(r for r in releases if _release_ok(r))
    candidates = {}
    for line in text.splitlines():
        parts = line.split('\t')
        if len(parts) < 3:
            continue
        name, status, depends = parts[0].strip(), parts[1].split(), parts[2]
        if not name.startswith('linux-image-') or not _PACKAGE.match(name) or _is_per_release_image(name):
            continue
        if len(status) != 3 or status[2] != 'installed':
            continue
        deps = _dep_names(depends)
        for release in wanted:
            if deps & set(prefix + release for prefix in ('linux-image-', 'linux-image-unsigned-', 'linux-image-uc-')):
                candidates.setdefault(release, set()).add(name)
    chosen = {}
    for release, names in candidates.items():
        own = 'linux-image-' + kernel_flavour(release)
        chosen[release] = own if own in names else sorted(names)[0]
    return chosen


def extracted_copies(tree, basename):
    """The regular files ``<anything>/etc/modprobe.d/<basename>`` under the extracted initramfs ``tree``
    (unmkinitramfs puts the archives in early/, early2/, main/ or at the top). Links are neither followed nor taken:
    an image cannot point the comparison at a file outside it. At most 200,000 entries are looked at."""
    found, seen = [], 0
    for dirpath, dirnames, filenames in os.walk(tree):
        seen += len(dirnames) + len(filenames)
        if seen > MAX_TREE_ENTRIES:
            break
        dirnames.sort()
        if basename in filenames and os.path.basename(dirpath) == 'modprobe.d' and \
                os.path.basename(os.path.dirname(dirpath)) == 'etc':
            path = os.path.join(dirpath, basename)
            if stat.S_ISREG(os.lstat(path).st_mode):
                found.append(path)
    return sorted(found)


def blacklist_state(tree, basename, on_disk):
    """Whether the extracted initramfs ``tree`` carries ``etc/modprobe.d/<basename>`` with the bytes ``on_disk``
    (None: the file is not on disk). Returns ``(state, reason)``: ``current`` (every copy has those bytes),
    ``stale`` (a copy differs, or the file is gone from disk), ``missing`` (no copy), ``unreadable``."""
    copies = extracted_copies(tree, basename)
    if not copies:
        why = 'the initramfs has no etc/modprobe.d/%s' % basename
        if on_disk is None:
            why += ', and the file does not exist on disk either'
        return 'missing', why
    for path in copies:
        data, reason = read_bounded(path, MAX_CONFIG_BYTES)
        if data is None:
            return 'unreadable', reason or '%s vanished while it was read' % path
        if on_disk is None:
            return 'stale', ('the initramfs carries etc/modprobe.d/%s (%s), which no longer exists on disk'
                             % (basename, os.path.relpath(path, tree)))
        if data != on_disk:
            return 'stale', ('etc/modprobe.d/%s in the initramfs (%s) differs from the file on disk'
                             % (basename, os.path.relpath(path, tree)))
    return 'current', 'the initramfs carries etc/modprobe.d/%s with the same bytes as on disk' % basename


# The plan


def _refusal(kernel, message, fix):
    return {'kernel': kernel, 'message': message, 'fix': fix}


def prebuilt_package(branch, kernel_module, release):
    """Canonical's prebuilt module package of BRANCH for kernel RELEASE (or flavour): linux-modules-nvidia-<branch>-
    server[-open]-<release>."""
    return 'linux-modules-nvidia-%s-server%s-%s' % (branch, _variant(kernel_module), release)


def _variant(kernel_module):
    return '-open' if kernel_module == 'open' else ''


def default_dkms_package(family, branch, kernel_module):
    """Ubuntu nvidia-dkms-<branch>-server[-open]; Debian the main branch's nvidia-kernel-dkms or
    nvidia-open-kernel-dkms (a caller on a tesla-<branch> package passes its name)."""
    if family == 'Debian':
        return 'nvidia-open-kernel-dkms' if kernel_module == 'open' else 'nvidia-kernel-dkms'
    return 'nvidia-dkms-%s-server%s' % (branch, _variant(kernel_module))


def prebuilt_variants(known_packages, release):
    """What the archive has prebuilt for kernel ``release``: ``[(branch, 'server' or '', 'open' or '')]``, newest
    branch first, from package names ``linux-modules-nvidia-<branch>[-server][-open]-<release>``."""
    pattern = re.compile(r'^linux-modules-nvidia-([0-9]+)(-server)?(-open)?-' + re.escape(release) + r'\Z')
    found = set()
    for name in known_packages:
        m = pattern.match(name) if isinstance(name, str) else None
        if m:
            found.add((m.group(1), 'server' if m.group(2) else '', 'open' if m.group(3) else ''))
    return sorted(found, key=lambda v: (-int(v[0]), v[1], v[2]))


def _variant_name(variant):
    return '-'.join(p for p in variant if p)


def check_plan_arguments(family, branch, kernel_module, source, dkms_package):
    if not isinstance(branch, str) or not _BRANCH.match(branch):
        raise ValueError('branch must be a driver branch number such as 580, got %r' % (branch,))
    if kernel_module not in KERNEL_MODULES:
        raise ValueError('kernel_module must be one of %s, got %r' % (', '.join(KERNEL_MODULES), kernel_module))
    if source not in SOURCES:
        raise ValueError('source must be one of %s, got %r' % (', '.join(SOURCES), source))
    if dkms_package and not _PACKAGE.match(dkms_package):
        raise ValueError('dkms_package must be a package name, got %r' % (dkms_package,))
    if not isinstance(family, str):
        raise ValueError('family must be a string, got %r' % (family,))


def plan(kernels, family, branch, kernel_module, source, known_packages, image_metapackages=None,
         dkms_package='', driver_version='', prebuilt_built_with=None):
    """The packages that give every kernel in ``kernels`` an NVIDIA module of ``branch``.

    ``kernels``: dicts ``{release, running, headers_installed}``; ``family``: 'Ubuntu' or 'Debian'; ``branch``: the
    driver branch ('580'); ``kernel_module``: 'proprietary' or 'open'; ``source``: 'auto', 'prebuilt' or 'dkms';
    ``known_packages``: the names apt knows (``apt-cache pkgnames``); ``image_metapackages``: release -> the
    installed linux-image metapackage of that kernel; ``dkms_package``: the DKMS package to use ('' for the default
    of the family: Ubuntu nvidia-dkms-<branch>-server[-open], Debian nvidia-kernel-dkms or nvidia-open-kernel-dkms);
    ``driver_version``: the driver version the host has or apt would install (nvidia-kernel-common-<branch>-server),
    and ``prebuilt_built_with``: prebuilt package -> the driver version it was built from (``built_with``). A
    prebuilt module of another driver version than ``driver_version`` is not taken: booting it would give "Driver/
    library version mismatch" (ubuntu-drivers takes it; apt lets the proprietary one in, its Depends has only a
    lower bound). With either left empty, no prebuilt module is judged stale.

    Returns ``{kernels, packages, metapackages, dkms_package, refusals}``: per kernel that can have a module, its
    source ('prebuilt' or 'dkms'), packages and why (one sentence naming the package that decided); the sorted union
    of those packages; the flavour metapackages that give FUTURE kernels their module or headers; the DKMS package
    when a kernel needs it, else ''; and per kernel that cannot, a refusal ``{kernel, message, fix}`` in plain ASCII
    naming the kernel and the variable to change. A refused kernel is not in ``kernels``. Raises ValueError for an
    argument no caller should pass (a branch that is not a number, an unknown source).
    """
    check_plan_arguments(family, branch, kernel_module, source, dkms_package)
    known = frozenset(known_packages or ())
    metas = dict(image_metapackages or {})
    variant = _variant(kernel_module)
    dkms = dkms_package or default_dkms_package(family, branch, kernel_module)
    result = {'kernels': [], 'packages': [], 'metapackages': [], 'dkms_package': '', 'refusals': [], 'notes': []}
    if family not in FAMILIES:
        result['refusals'].append(_refusal(
            '', 'The distribution family is %r: the NVIDIA kernel module plan knows Ubuntu and Debian only.'
                % (family or 'unknown'),
            'Run the nvidia_driver role on Ubuntu or Debian hosts only.'))
        return result
    if not kernels:
        result['refusals'].append(_refusal(
            '', 'There is no bootable kernel to put the NVIDIA module into (no /boot/vmlinuz-<release> with its '
                '/lib/modules/<release> directory).',
            'Install a kernel (apt-get install linux-image-<flavour>) before the nvidia_driver role, or name the '
            'kernels to build for in nvidia_driver_kernels.'))
        return result
    packages, metapackages = set(), set()
    for kernel in kernels:
        release = kernel.get('release') if isinstance(kernel, dict) else None
        if not _release_ok(release):
            raise ValueError('kernel release %r is not a kernel release' % (release,))
        meta = metas.get(release) or ''
        meta_flavour = meta[len('linux-image-'):] if meta.startswith('linux-image-') else ''
        ctx = dict(release=release, branch=branch, variant=variant, meta=meta, meta_flavour=meta_flavour,
                   flavour=kernel_flavour(release) or 'unknown', dkms=dkms, source=source,
                   headers='linux-headers-' + release, kernel_module=kernel_module,
                   driver_version=upstream_version(driver_version), built_with=dict(prebuilt_built_with or {}))
        if family == 'Ubuntu':
            entry, refusal, future = _plan_ubuntu(kernel, ctx, known)
        else:
            entry, refusal, future = _plan_debian(kernel, ctx, known)
        if refusal:
            result['refusals'].append(refusal)
            continue
        result['kernels'].append(entry)
        packages.update(entry['packages'])
        if future:
            metapackages.add(future)
            result.setdefault('metapackage_images', {})[future] = ctx['meta']
        if entry['source'] == 'dkms':
            result['dkms_package'] = dkms
    result['packages'] = sorted(packages)
    result['metapackages'] = sorted(metapackages)
    return result


def _stale_prebuilt(ctx, abi):
    """The driver version the prebuilt package ABI was built from, when it is not the host's driver version
    (ctx['driver_version']); '' when it matches or either is unknown."""
    built = upstream_version(ctx['built_with'].get(abi, ''))
    if built and ctx['driver_version'] and built != ctx['driver_version']:
        return built
    return ''


def _plan_ubuntu(kernel, ctx, known):
    abi = prebuilt_package(ctx['branch'], ctx['kernel_module'], ctx['release'])
    stale = _stale_prebuilt(ctx, abi) if abi in known else ''
    if stale and ctx['source'] != 'dkms':
        reason = ('%s in the archive is built from driver %s, not from the driver %s the host gets: booting it would '
                  'give "Driver/library version mismatch" (Canonical has not rebuilt it yet; ubuntu-drivers would '
                  'take it)' % (abi, stale, ctx['driver_version']))
        if ctx['source'] == 'prebuilt':
            return None, _refusal(
                ctx['release'], 'Kernel %s: %s.' % (ctx['release'], reason),
                'Set nvidia_driver_module_source to auto or dkms (the module is then built with %s), or wait until '
                'the archive has %s rebuilt from driver %s (apt-get update, then run the role again).' % (
                    ctx['dkms'], abi, ctx['driver_version'])), ''
        return _plan_dkms(kernel, ctx, known, reason)
    if ctx['source'] != 'dkms' and abi in known:
        why = '%s is in the archive: Canonical\'s prebuilt module for kernel %s, signed by Canonical' % (
            abi, ctx['release'])
        future = ''
        if ctx['meta_flavour']:
            flavour_meta = prebuilt_package(ctx['branch'], ctx['kernel_module'], ctx['meta_flavour'])
            if flavour_meta in known:
                future = flavour_meta
                why += ('; %s follows the installed %s, so future %s kernels get their module too (the '
                        'ubuntu-drivers rule)' % (flavour_meta, ctx['meta'], ctx['meta_flavour']))
            else:
                why += '; the archive has no %s, so future %s kernels are not covered' % (
                    flavour_meta, ctx['meta_flavour'])
        else:
            why += ('; no linux-image metapackage of this kernel is installed, so no modules metapackage follows '
                    'future kernels (as ubuntu-drivers)')
        return {'release': ctx['release'], 'source': 'prebuilt', 'packages': [abi], 'why': why + '.'}, None, future
    if ctx['source'] == 'prebuilt':
        return None, _prebuilt_refusal(ctx, abi, known), ''
    if ctx['source'] == 'dkms':
        reason = 'nvidia_driver_module_source is dkms'
    else:
        reason = '%s is not in the archive' % abi
    return _plan_dkms(kernel, ctx, known, reason)


def _prebuilt_refusal(ctx, abi, known):
    variants = prebuilt_variants(known, ctx['release'])
    wanted = ('server', 'open' if ctx['kernel_module'] == 'open' else '')
    usable = [v[0] for v in variants if (v[1], v[2]) == wanted and v[0] != ctx['branch']]
    other_kind = [v for v in variants if v[0] == ctx['branch'] and v[1] == 'server' and (v[1], v[2]) != wanted]
    message = ('Kernel %s (flavour %s) has no prebuilt NVIDIA %s module: %s is not in the archive' % (
        ctx['release'], ctx['flavour'], ctx['branch'], abi))
    if variants:
        message += '; the archive has prebuilt modules for it from %s.' % ', '.join(_variant_name(v) for v in variants)
    else:
        message += ', and no other branch has a prebuilt module for it either.'
    fixes = []
    if usable:
        fixes.append('set nvidia_driver_branch to one of %s' % ', '.join(usable))
    if other_kind:
        fixes.append('set nvidia_driver_kernel_module to %s' % (
            'proprietary' if ctx['kernel_module'] == 'open' else 'open'))
    fixes.append('set nvidia_driver_module_source to dkms (or auto) to build the module with %s' % ctx['dkms'])
    fix = ', or '.join(fixes)
    return _refusal(ctx['release'], message, fix[0].upper() + fix[1:] + '.')


def _plan_dkms(kernel, ctx, known, reason):
    headers = ctx['headers']
    have_headers = bool(kernel.get('headers_installed'))
    if headers not in known and not have_headers:
        return None, _refusal(
            ctx['release'],
            'Headers for kernel %s are not in the archive any more (%s) and are not installed, so DKMS cannot '
            'build the NVIDIA module for it (%s).' % (ctx['release'], headers, reason),
            'Install a kernel whose headers the archive has (apt-get install linux-image-%s linux-headers-%s) and '
            'remove kernel %s (apt-get purge linux-image-%s), or leave kernel %s out of nvidia_driver_kernels. '
            'If apt\'s package lists are old, update them (apt-get update) first.' % (
                ctx['meta_flavour'] or ctx['flavour'], ctx['meta_flavour'] or ctx['flavour'], ctx['release'],
                ctx['release'], ctx['release'])), ''
    packages = [ctx['dkms']]
    if headers in known:
        packages.append(headers)
        built_on = headers
    else:
        built_on = 'the installed headers of kernel %s' % ctx['release']
    why = '%s, so %s builds the module against %s' % (reason, ctx['dkms'], built_on)
    future = ''
    if ctx['meta_flavour']:
        headers_meta = 'linux-headers-' + ctx['meta_flavour']
        if headers_meta in known:
            future = headers_meta
            why += '; %s follows the installed %s, so future kernels get headers to build against' % (
                headers_meta, ctx['meta'])
        else:
            why += '; the archive has no %s, so future %s kernels get no headers' % (headers_meta, ctx['meta_flavour'])
    else:
        why += '; no linux-image metapackage of this kernel is installed, so no headers metapackage is added'
    return {'release': ctx['release'], 'source': 'dkms', 'packages': packages, 'why': why + '.'}, None, future


def _plan_debian(kernel, ctx, known):
    if ctx['source'] == 'prebuilt':
        return None, _refusal(
            ctx['release'],
            'Kernel %s: Debian ships no prebuilt NVIDIA kernel modules, so nvidia_driver_module_source=prebuilt '
            'cannot be met.' % ctx['release'],
            'Set nvidia_driver_module_source to auto or dkms (the module is then built with %s).' % ctx['dkms']), ''
    reason = ('nvidia_driver_module_source is dkms' if ctx['source'] == 'dkms'
              else 'Debian ships no prebuilt NVIDIA modules')
    return _plan_dkms(kernel, ctx, known, reason)


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


# A compiler's or make's error line in a DKMS build log: "file.c:12:3: error: ...", "make[2]: *** ... Error 2".
_BUILD_ERROR = re.compile(r'(?:\berror:|\*\*\* .*Error [0-9]+|\bfatal error\b)')
MAX_BUILD_LOG_BYTES = 8 * 1024 * 1024


def first_build_error(text):
    """The first error line of a DKMS make.log (ASCII-printable, at most 300 characters), or '' when there is none."""
    if not isinstance(text, str):
        return ''
    for line in text[:MAX_BUILD_LOG_BYTES].splitlines():
        if _BUILD_ERROR.search(line):
            clean = ''.join(c for c in line.strip() if 0x20 <= ord(c) <= 0x7e)
            return clean[:300]
    return ''


# The first line of a DKMS make.log names the module and the kernel it was built for (dkms 2.8 and 3.0 alike):
# "DKMS make.log for nvidia-current-535.309.01 for kernel 6.12.118+deb12-cloud-amd64 (x86_64)".
_BUILD_KERNEL = re.compile(r'^DKMS make\.log for \S+ for kernel (\S+)', re.M)


def build_log_kernel(text):
    """The kernel release a DKMS make.log was written for (its first line), or '' when it names none."""
    if not isinstance(text, str):
        return ''
    found = _BUILD_KERNEL.search(text[:4096])
    return ''.join(c for c in found.group(1) if 0x20 < ord(c) <= 0x7e)[:100] if found else ''


def newest_build_log(root='/'):
    """The newest DKMS build log under <root>/var/lib/dkms (DKMS 2: <module>/<version>/build/make.log; DKMS 3:
    <module>/<version>/<kernel>/<arch>/log/make.log), or None. No link is followed below var/lib/dkms."""
    base = resolve_in_root(root, _join(root, '/var/lib/dkms'))
    newest, newest_mtime = None, None
    for depth_pattern in (('build', 'make.log'), ('*', '*', 'log', 'make.log')):
        for path in _expand(base, ('*', '*') + depth_pattern):
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and (newest_mtime is None or st.st_mtime > newest_mtime):
                newest, newest_mtime = path, st.st_mtime
    return newest


def _listdir(path):
    try:
        return sorted(os.listdir(path))[:1000]
    except OSError:
        return []


def _real_dir(path):
    """Whether path is a directory itself, not a link to one (a link in the tree could lead out of it)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _expand(base, parts):
    """The paths base/parts ('*' for every entry); the directories walked through are never links."""
    paths = [base]
    for part in parts:
        nxt = []
        for p in paths:
            if not _real_dir(p):
                continue
            if part == '*':
                nxt.extend(os.path.join(p, name) for name in _listdir(p))
            else:
                nxt.append(os.path.join(p, part))
        paths = nxt
    return paths


def upstream_version(version):
    """The upstream part of a Debian version: '1:580.196.07-0ubuntu0.24.04.1' -> '580.196.07'; '' for no version."""
    version = (_text(version) or '').strip()
    if ':' in version:
        version = version.split(':', 1)[1]
    return version.rsplit('-', 1)[0] if '-' in version else version


def parse_control(text):
    """``{package: {'Version', 'Depends', 'Status'}}`` from ``apt-cache show`` or ``dpkg-query -s`` output (one
    paragraph per package version; the first paragraph of a package wins: ``--no-all-versions`` prints the
    candidate only)."""
    found = {}
    for paragraph in re.split(r'\n[ \t]*\n', (_text(text) or '').replace('\r\n', '\n')):
        fields, key = {}, None
        for line in paragraph.split('\n'):
            if line[:1] in (' ', '\t') and key:
                fields[key] += ' ' + line.strip()
                continue
            name, sep, value = line.partition(':')
            key = name.strip() if sep else None
            if key:
                fields[key] = value.strip()
        name = fields.get('Package', '')
        if _PACKAGE.match(name) and name not in found:
            found[name] = {'Version': fields.get('Version', ''), 'Depends': fields.get('Depends', ''),
                           'Status': fields.get('Status', '')}
    return found


def driver_versions(installed, candidates, common, prebuilt, branch):
    """The driver version the host has (or apt would install) and the version each prebuilt package was built from.

    INSTALLED and CANDIDATES: ``parse_control`` of ``dpkg-query -s`` and ``apt-cache show --no-all-versions`` of the
    kernel-common package COMMON and the PREBUILT packages. An installed package counts as it is (the role holds the
    driver, so apt keeps that version), else apt's candidate. Returns ``(driver_version, {prebuilt: built_with})``."""
    def pick(name):
        entry = installed.get(name) or {}
        if (entry.get('Status') or '').split()[-1:] == ['installed']:
            return entry
        return candidates.get(name) or {}
    return (pick(common).get('Version', ''),
            dict((name, built_with(pick(name).get('Depends', ''), branch)) for name in prebuilt))


def built_with(depends, branch):
    """The driver version a linux-modules-nvidia-<branch>-server[-open]-<kernel> package was built from: the lower
    bound of its nvidia-kernel-common-<branch>-server dependency (noble-updates, 2026-12-04: the 6.8.0-149.149
    package of 6.8.0-149-generic has ``nvidia-kernel-common-580-server (>= 580.178.04)`` and its objects in
    build/nvidia-srv/580.178.04, while the 6.8.0-149.149.1+1 rebuild of -lowlatency has ``(>= 580.196.07)``; the
    -open packages add an upper bound ``(<= 580.178.04-1)``). '' when DEPENDS has no such bound."""
    m = re.search(r'(?:^|,)\s*nvidia-kernel-common-%s(?:-server)?\s*\(>=\s*([A-Za-z0-9.+~:-]+)\)' % re.escape(
        str(branch)), _text(depends) or '')
    return m.group(1) if m else ''


# A package and its version in ``apt-cache madison`` output: " pkg | 6.8.0-149.149.1 | http://... Packages".
_MADISON = re.compile(r'^\s*([a-z0-9][a-z0-9+.-]*)\s*\|\s*([A-Za-z0-9.+~:-]+)\s*\|')


def parse_madison(text):
    """``{package: [version, ...]}`` in the order apt-cache madison prints them (newest first per source)."""
    found = {}
    for line in (_text(text) or '').splitlines():
        m = _MADISON.match(line)
        if m and _PACKAGE.match(m.group(1)):
            versions = found.setdefault(m.group(1), [])
            if m.group(2) not in versions:
                versions.append(m.group(2))
    return found


def installed_versions(text):
    """``{package: version}`` of the installed packages in ``dpkg-query -W -f '${Package}\t${Status}\t${Version}\n'``
    output."""
    found = {}
    for line in (_text(text) or '').splitlines():
        parts = line.split('\t')
        if len(parts) < 3:
            continue
        name, status, version = parts[0].strip(), parts[1].split(), parts[2].strip()
        if _PACKAGE.match(name) and len(status) == 3 and status[2] == 'installed' and version:
            found[name] = version
    return found


def pin_metapackages(result, installed, madison):
    """Give each flavour metapackage of the plan RESULT the version of the kernel generation the host has, so that
    installing it never installs a kernel: a modules or headers metapackage of a newer generation depends on that
    generation's packages, and Debian's apt also moves the linux-image metapackage built from the same source
    (APT::Get::Upgrade-By-Source-Package). INSTALLED: ``installed_versions``; MADISON: ``parse_madison`` of the
    metapackages.

    A metapackage already installed stays as it is (its name alone). Otherwise the version equal to the installed
    linux-image metapackage's, or that version with a ``+N`` rebuild suffix (Ubuntu's linux-restricted-modules
    respins: linux-image-lowlatency 6.8.0-147.147.1, linux-modules-nvidia-580-server-lowlatency 6.8.0-147.147.1+2),
    as ``name=version``. Without one, the metapackage is left out and a note says why and what to do.
    Returns a new result with ``metapackages`` (apt specifications) and ``notes``."""
    out = dict(result)
    images = result.get('metapackage_images') or {}
    specs, notes = [], list(result.get('notes') or [])
    for meta in result.get('metapackages') or []:
        if meta in installed:
            specs.append(meta)
            continue
        image = images.get(meta, '')
        image_version = installed.get(image, '')
        offered = madison.get(meta, [])
        match = [v for v in offered if image_version and (v == image_version or v.startswith(image_version + '+'))]
        if match:
            specs.append('%s=%s' % (meta, match[0]))
            continue
        notes.append(
            '%s is left out: the archive has it at %s, not for the installed %s %s, and installing that would also '
            'install a newer kernel. Upgrade the kernel flavour (playbooks/upgrade_driver.yml with '
            'gpuops_upgrade_kernel=true, or apt upgrade) and run the role again: it then adds %s.'
            % (meta, ', '.join(offered) or 'no version', image or 'linux-image metapackage', image_version or '?',
               meta))
    out['metapackages'] = specs
    out['notes'] = notes
    return out


# What ``mokutil --test-key CERT`` prints for a certificate the kernel trusts for module signatures (mokutil 0.6.0:
# "CERT is already enrolled" when it is in MokListRT, "CERT is already in db" when the firmware's db holds it; a
# certificate in neither: "CERT is not enrolled").
_MOK_ENROLLED = re.compile(r'\bis already (?:enrolled|in db)\b')


def mok_enrolled(test_key_output):
    """Whether ``mokutil --test-key`` output TEST_KEY_OUTPUT says the certificate is enrolled (MOK list or db)."""
    return bool(_MOK_ENROLLED.search(_text(test_key_output) or ''))


def secure_boot_refusal(plan_kernels, secure_boot_on, mode, certificate, test_key_output):
    """The refusal ``{kernel, message, fix}`` for DKMS modules the kernel would reject under Secure Boot, or None.

    PLAN_KERNELS: the ``kernels`` of a ``plan`` result; SECURE_BOOT_ON: whether the firmware has Secure Boot on; MODE:
    nvidia_driver_secure_boot ('fail' refuses, 'enroll' queues the key instead); CERTIFICATE: the DKMS signing
    certificate's path; TEST_KEY_OUTPUT: what ``mokutil --test-key CERTIFICATE`` printed ('' when the certificate or
    mokutil is missing). Canonical's prebuilt modules are signed with a key the kernel trusts, so only kernels whose
    module DKMS builds matter: DKMS signs them with CERTIFICATE's key, which the kernel accepts once it is enrolled
    in the MOK list (or db). With it enrolled, or without DKMS kernels, nothing is refused."""
    if not secure_boot_on or mode != 'fail':
        return None
    dkms = [k['release'] for k in plan_kernels or () if k.get('source') == 'dkms']
    if not dkms or mok_enrolled(test_key_output):
        return None
    said = ' '.join((_text(test_key_output) or '').split())
    return _refusal(
        ', '.join(dkms),
        'Secure Boot is enabled and kernel%s %s get%s the NVIDIA module from DKMS, signed with the key of %s, which '
        'is not enrolled (mokutil --test-key: %s): the kernel would refuse the module ("Key was rejected by '
        'service").' % ('s' if len(dkms) > 1 else '', ', '.join(dkms), '' if len(dkms) > 1 else 's', certificate,
                        said or 'no certificate yet, or no mokutil'),
        'Either disable Secure Boot in the firmware, or set nvidia_driver_secure_boot=enroll and '
        'nvidia_driver_mok_password (the key is queued for enrollment; confirm it on the console at the next boot). '
        'A key you enrolled yourself (mokutil --import %s, confirmed at a boot) is accepted on the next run.'
        % certificate)
