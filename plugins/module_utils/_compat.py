# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The question a preflight asks: do this CUDA version, driver (version or branch), kernel module flavour,
PyTorch build and these GPU architectures work together, and which driver branch would.

check() answers with reasons, never a bare boolean, in neutral terms: a problem names its subject (SUBJECTS), never
a role variable; the caller words it (word()). The facts it combines live in _compat_versions.py, _compat_cuda.py,
_compat_gpu.py and _compat_torch.py; the knowledge is data, in _data_cuda.py, _data_gpu.py and _data_torch.py.

No input makes a public function raise anything but CompatError (a ValueError, in _compat_versions.py) with a
message that names what is wrong and the form expected.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.gpuops.gpu_server.plugins.module_utils._compat_cuda import cuda_driver_mode, cuda_min_driver
from ansible_collections.gpuops.gpu_server.plugins.module_utils._compat_gpu import (
    ARCHITECTURES, ARCHITECTURE_ORDER, LAST_PROPRIETARY_BRANCH, NEWEST_KNOWN_BRANCH, RECOMMENDED_MIN_BRANCH,
    architecture_info, branch_architecture_problems, branch_kernel_module_problem, canonical_architecture,
    unknown_branch_problem)
from ansible_collections.gpuops.gpu_server.plugins.module_utils._compat_torch import (
    cuda_tag, tag_cuda, torch_cuda_variants, torch_missing_architectures)
from ansible_collections.gpuops.gpu_server.plugins.module_utils._compat_versions import (
    BRANCH_FORM, CUDA_FORM, CompatError, DRIVER_FORM, TORCH_FORM, compare_versions, cuda_major_minor, driver_branch,
    parse_cuda, parse_driver_version, parse_torch, parse_version, short_repr, version_ge, version_str, version_text)
from ansible_collections.gpuops.gpu_server.plugins.module_utils._data_cuda import (
    CUDA_MINOR_COMPAT_MIN_DRIVER, KNOWN_BRANCHES, LTS_BRANCHES, MINOR_COMPAT_LIMITS, OPEN_KERNEL_MODULE_MIN_BRANCH,
    PROPRIETARY_KERNEL_MODULE_END_BRANCH)


# What a problem is about, named as cuda_compat names its options. The caller words each subject with its own
# variable name (see word()); this module knows no role variable.
SUBJECTS = ('cuda_version', 'driver_branch', 'driver_version', 'kernel_module', 'torch_version', 'architectures')
# Switches a fix can name besides the subjects (worded the same way): the override of the refusal of a branch newer
# than any in the tables.
SWITCHES = ('allow_unknown_branch',)


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
