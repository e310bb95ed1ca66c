# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The plan of packages that gives every bootable kernel its NVIDIA module, and its refusals.

The plan chooses per kernel the way Ubuntu's ``ubuntu-drivers install --gpgpu`` chooses for the running one
(UbuntuDrivers/detect.py, get_linux_modules_metapackage): Canonical's prebuilt, signed module package when the archive
has it for that kernel ABI, otherwise DKMS, and the per-flavour metapackage only for a kernel whose linux-image
metapackage is installed. Unlike ubuntu-drivers it plans for every bootable kernel, not only the running one: on an
image builder the running kernel is the build host's. Also: the distribution family (/etc/os-release), the pinning of
the flavour metapackages to the installed kernel generation, and the Secure Boot refusal of unenrolled DKMS keys.
Used by the module nvidia_kernels.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._deb_control import PACKAGE_NAME, upstream_version
from ansible_collections.gpuops.gpu_server.plugins.module_utils._image_tree import as_text
from ansible_collections.gpuops.gpu_server.plugins.module_utils._kernel_release import is_release, kernel_flavour


# /etc/os-release is a few hundred bytes.
MAX_OS_RELEASE_BYTES = 64 * 1024
SOURCES = ('auto', 'prebuilt', 'dkms')
KERNEL_MODULES = ('proprietary', 'open')
FAMILIES = ('Ubuntu', 'Debian')
_BRANCH = re.compile(r'^[0-9]{2,5}\Z')


def os_family(text):
    """'Ubuntu' or 'Debian' from the text of /etc/os-release (ID, then ID_LIKE: Linux Mint and Pop!_OS are Ubuntu,
    Raspberry Pi OS is Debian), '' for anything else."""
    text = as_text(text) or ''
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
    if dkms_package and not PACKAGE_NAME.match(dkms_package):
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
        if not is_release(release):
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
    return bool(_MOK_ENROLLED.search(as_text(test_key_output) or ''))


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
    said = ' '.join((as_text(test_key_output) or '').split())
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
