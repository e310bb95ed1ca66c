# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The sentences of the roles' refusals and reports whose wording depends on the case (issue 54: no Jinja blocks
in task files). Each message is a function of one mapping of plain values (the context) that a task builds from
its variables; ``render(name, context)`` checks the context against the message's keys and types first, so a bad
value fails naming the message and the key, never with a traceback. Values are shown as given, but for control
characters (a line break in a variable cannot forge a line of the message): they are written as escapes.

Used by the filter role_message (plugins/filter/role_message.py) on the control node. Standard library only.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from collections.abc import Mapping

_TEXT = (str,)
# Characters that break a line or steer a terminal: written as escapes in a message.
_CONTROL = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029]')

# Value kinds of a context key.
TEXT = 'text'          # a string or a number (not a boolean)
FLAG = 'flag'          # a boolean
TEXTS = 'texts'        # a list of strings or numbers
DICTS = 'dicts'        # a list of mappings
DICT = 'dict'          # a mapping


def show(value):
    """A value for a message: its text, control characters written as escapes (\\n, \\r, \\x1b ...)."""
    text = value if isinstance(value, _TEXT) else str(value)
    return _CONTROL.sub(lambda m: m.group(0).encode('unicode_escape').decode('ascii'), text)


def _check(name, context, keys):
    if not isinstance(context, Mapping):
        raise ValueError('%s: expected a mapping of the message\'s values, got %s' % (name, type(context).__name__))
    missing = sorted(k for k in keys if k not in context)
    if missing:
        raise ValueError('%s: the context lacks %s' % (name, ', '.join(missing)))
    checked = {}
    for key, kind in keys.items():
        value = context[key]
        if kind == TEXT:
            ok = isinstance(value, _TEXT + (int, float)) and not isinstance(value, bool)
            want = 'a string or a number'
        elif kind == FLAG:
            ok = isinstance(value, bool)
            want = 'a boolean (true or false)'
        elif kind == TEXTS:
            ok = isinstance(value, (list, tuple)) and all(
                isinstance(v, _TEXT + (int, float)) and not isinstance(v, bool) for v in value)
            want = 'a list of strings'
        elif kind == DICTS:
            ok = isinstance(value, (list, tuple)) and all(isinstance(v, Mapping) for v in value)
            want = 'a list of mappings'
        else:
            ok = isinstance(value, Mapping)
            want = 'a mapping'
        if not ok:
            raise ValueError('%s: %s must be %s, got %r' % (name, key, want, value))
        checked[key] = [show(v) for v in value] if kind == TEXTS else (show(value) if kind == TEXT else value)
    return checked


def _join(words):
    return ', '.join(words)


def _sentences(*parts):
    """The parts that are not empty, one space between them, no runs of spaces."""
    return ' '.join(' '.join(p.split()) for p in parts if p and p.strip())


def problems_text(problems):
    """cuda_compat's problems: "VARIABLE: MESSAGE (fix: FIX)." each, one space apart."""
    out = []
    for index, problem in enumerate(problems):
        if not isinstance(problem, Mapping):
            raise ValueError('problems[%d] must be a mapping with variable, message and fix, got %r' % (index, problem))
        missing = [k for k in ('variable', 'message', 'fix') if k not in problem]
        if missing:
            raise ValueError('problems[%d] lacks %s' % (index, ', '.join(missing)))
        out.append('%s: %s (fix: %s).' % (show(problem['variable']), show(problem['message']), show(problem['fix'])))
    return ' '.join(out)


def gpus_text(gpus):
    """The GPUs of the PCI bus (gpu_facts' pci_devices): "GPUs PRODUCT (ID, ARCHITECTURE, BUS), ..."."""
    if not gpus:
        return 'this host (no NVIDIA GPU on the PCI bus)'
    named = []
    for gpu in gpus:
        named.append('%s (%s, %s, %s)' % (show(gpu.get('product') or 'an unknown NVIDIA GPU'),
                                          show(gpu.get('pci_device_id', '')),
                                          show(gpu.get('architecture') or 'unknown architecture'),
                                          show(gpu.get('pci_bus_id', ''))))
    return 'GPUs ' + ', '.join(named)


def compat_problems(c):
    return problems_text(c['problems'])


def nvidia_driver_source_refusal(c):
    """nvidia_driver's preflight: source, branch and kernel module flavour that this platform cannot install."""
    where = '%s %s' % (c['distribution'], c['distribution_version'])
    auto = c['branch'] == 'auto'
    first = ('nvidia_driver_branch=auto names no branch for %s: this collection has no table of the branches that '
             'release ships; set nvidia_driver_branch.' % where) if not c['branch_used'] else ''
    main = ('%s: nvidia_driver_source=%s (here %s), nvidia_driver_branch=%s%s, nvidia_driver_kernel_module=%s cannot be '
            'installed on %s. Sources here: %s.' % (c['host'], c['source'], c['source_used'], c['branch'],
                                                    ' (here %s)' % c['branch_used'] if auto else '', c['kernel_module'],
                                                    where, _join(c['sources'])))
    ships = ''
    if c['distribution_branches']:
        only = ('; only open kernel modules, set nvidia_driver_kernel_module=open: %s' % _join(c['open_only_branches'])
                if c['open_only_branches'] else '')
        ships = ('The distribution ships branches %s (open kernel modules: %s%s); other branches need '
                 'nvidia_driver_source=cuda_repo.' % (_join(c['distribution_branches']),
                                                      _join(c['open_branches']) or 'none', only))
    return _sentences(
        first, main, ships,
        'nvidia_driver_secure_boot=enroll needs nvidia_driver_mok_password.' if c['secure_boot'] == 'enroll' else '',
        ("nvidia_driver_module_source=prebuilt needs nvidia_driver_source=distribution (prebuilt modules are "
         "Canonical's, built for Ubuntu's own driver).") if c['module_source'] == 'prebuilt' else '',
        ('nvidia_driver_kernels, nvidia_driver_bake and nvidia_driver_module_source are for Debian and Ubuntu; on %s '
         'DKMS builds for the running kernel.' % c['os_family']) if c['package_manager'] != 'apt' else '')


def nvidia_driver_compat_refusal(c):
    """nvidia_driver's preflight: a branch that cannot drive these GPUs or run this CUDA version."""
    suggested = ''
    if c['suggested_driver_branch']:
        elsewhere = ''
        if c['source'] == 'distribution' and c['suggested_driver_branch'] not in c['distribution_branches']:
            elsewhere = " (from NVIDIA's repository, nvidia_driver_source=cuda_repo: %s ships %s)" % (
                c['distribution'], _join(c['distribution_branches']))
        suggested = 'A branch that would work: %s%s.' % (c['suggested_driver_branch'], elsewhere)
    return _sentences(
        '%s: NVIDIA driver branch %s (%s kernel module) does not fit %s with CUDA %s.' % (
            c['host'], c['branch'], c['kernel_module'], gpus_text(c['gpus']), c['cuda_version']),
        problems_text(c['problems']), suggested, 'Nothing was changed.')


def nvidia_driver_state(c):
    """nvidia_driver's verify: what is loaded, baked or pending."""
    if c['loaded']:
        return 'Loaded: %s, %s GPU(s), health %s.' % (c['driver_version'], c['gpu_count'], c['health'])
    if c['bake']:
        return ('Image baked for kernels %s: the module files are verified; loading the driver and the GPU health '
                'check are skipped (nvidia_driver_bake).' % (_join(c['kernels']) or '(not checked in check mode)'))
    if c['reboot_pending']:
        return 'A reboot is pending: the driver is not loaded yet.'
    container = (' in this %s container, whose kernel belongs to the host' % c['container']) if c['container'] else ''
    return 'No driver loaded (driver_loaded false)%s: %s' % (container, c['reason'] or 'not read in check mode')


def nvidia_driver_dkms_failure(c):
    """nvidia_driver's install: the first error of the newest DKMS build log, when there is one."""
    if not c['first_error']:
        return ''
    kernel = ('for kernel %s ' % c['kernel']) if c['kernel'] else ''
    return _sentences(
        'DKMS could not build the module %s(%s), first error: %s.' % (kernel, c['path'], c['first_error']),
        'The kernel is probably too new for branch %s: choose a newer branch (nvidia_driver_branch) or keep that '
        'kernel off the host. Kernels that had a module keep it.' % c['branch'])


def cuda_toolkit_source_refusal(c):
    """cuda_toolkit's preflight: versions that this source cannot install here."""
    where = '%s %s' % (c['distribution'], c['distribution_version'])
    if c['distribution_versions']:
        ships = ('%s ships CUDA %s only (one version: no side-by-side installs); other versions need '
                 'cuda_toolkit_source=cuda_repo (or auto): NVIDIA\'s repository or your mirror of it '
                 '(cuda_toolkit_repo_url).' % (where, _join(c['distribution_versions'])))
    else:
        ships = ('%s ships no CUDA toolkit: use cuda_toolkit_source=cuda_repo (NVIDIA\'s repository or your mirror, '
                 'cuda_toolkit_repo_url).' % where)
    return _sentences(
        '%s: CUDA %s from %s cannot be installed on %s.' % (c['host'], _join(c['versions']), c['source'], where),
        "cuda_toolkit_version takes X.Y (e.g. '11.8', quoted).", ships,
        'cuda_toolkit_cudnn is not implemented on EL yet.' if c['cudnn'] and c['package_manager'] == 'dnf' else '')


def cuda_toolkit_source(c):
    """cuda_toolkit's preflight: where the toolkit comes from."""
    origin = ('the distribution (nvidia-cuda-toolkit)' if c['source'] == 'distribution'
              else "NVIDIA's CUDA repository %s" % c['repo_url'])
    why = ''
    if c['requested_source'] == 'auto' and c['source'] == 'cuda_repo' and c['distribution_versions']:
        why = ': %s %s ships CUDA %s only' % (c['distribution'], c['distribution_version'],
                                              _join(c['distribution_versions']))
    return 'CUDA %s from %s%s.' % (_join(c['versions']), origin, why)


def _driver(c):
    return c['driver_version'] or 'branch %s (planned)' % c['driver_branch']


def _on_architectures(architectures):
    return (' on %s GPUs' % _join(architectures)) if architectures else ''


def cuda_toolkit_compat_refusal(c):
    """cuda_toolkit's preflight: each CUDA version that the driver or the GPUs cannot run (cuda_compat's results)."""
    parts = []
    for index, result in enumerate(c['results']):
        if result.get('compatible'):
            continue
        item = result.get('item')
        architectures = result.get('architectures') or []
        problems = result.get('problems') or []
        if not isinstance(architectures, (list, tuple)) or not isinstance(problems, (list, tuple)):
            raise ValueError('results[%d]: architectures and problems must be lists' % index)
        on = _on_architectures([show(a) for a in architectures])
        parts.append('%s: CUDA %s does not fit driver %s%s.' % (c['host'], show(item), _driver(c), on))
        parts.append(problems_text(problems))
        if result.get('suggested_driver_branch'):
            parts.append('A driver branch that would run it: %s.' % show(result['suggested_driver_branch']))
    parts.append('Nothing was changed.')
    return _sentences(*parts)


def cuda_toolkit_compat(c):
    """cuda_toolkit's preflight: how the driver runs one CUDA version (one cuda_compat result)."""
    r = c['result']
    architectures = r.get('architectures') or []
    notes = r.get('notes') or []
    if not isinstance(architectures, (list, tuple)) or not isinstance(notes, (list, tuple)):
        raise ValueError('cuda_toolkit_compat: result.architectures and result.notes must be lists')
    return _sentences('CUDA %s runs on driver %s with %s compatibility%s.' % (
        show(r.get('item')), _driver(c), 'full' if r.get('mode') == 'full' else 'minor version',
        _on_architectures([show(a) for a in architectures])), ' '.join(show(n) for n in notes))


def cuda_toolkit_repo_refusal(c):
    """cuda_toolkit's preflight: NVIDIA's repository, which the versions need, did not answer."""
    ships = ''
    if c['distribution_versions'] and c['requested_source'] == 'auto':
        ships = ' (%s %s ships CUDA %s only)' % (
            c['distribution'], c['distribution_version'], _join(c['distribution_versions']))
    instead = ''
    if c['distribution_versions']:
        instead = (", or set cuda_toolkit_version to '%s' to install the distribution's toolkit"
                   % c['distribution_versions'][0])
    return _sentences(
        '%s: CUDA %s needs NVIDIA\'s CUDA repository%s, but %sRelease did not answer (%s).' % (
            c['host'], _join(c['versions']), ships, c['repo_url'], c['answer']),
        'Point cuda_toolkit_repo_url (and cuda_toolkit_repo_key) at a mirror of it%s. Nothing was changed.' % instead)


def upgrade_driver_report(c):
    """upgrade_driver's last batch: one line per host of the play, its outcome or "not run"."""
    lines = []
    for host in c['hosts']:
        outcome = c['outcomes'].get(host)
        if outcome is None:
            outcome = {'status': 'not run'}
        if not isinstance(outcome, Mapping) or 'status' not in outcome:
            raise ValueError('upgrade_driver_report: outcomes[%s] must be a mapping with a status, got %r'
                             % (host, outcome))
        line = '%s: %s' % (show(host), show(outcome['status']))
        if 'from' in outcome:
            line += ' %s' % show(outcome['from'])
        if 'to' in outcome and outcome['to'] != outcome.get('from'):
            line += ' -> %s' % show(outcome['to'])
        if outcome.get('kernel'):
            line += '; kernel %s' % show(outcome['kernel'])
        if 'reason' in outcome:
            line += ' (%s)' % show(outcome['reason'])
        lines.append(line)
    return lines


def _kernels(c):
    k = c['kernels']
    for key in ('running', 'new_kernels', 'upgrades', 'newest_installed', 'newest_after', 'metapackages'):
        if key not in k:
            raise ValueError('kernels lacks %s' % key)
    return k


def upgrade_driver_plan(c):
    """upgrade_driver's PLAN line of a host (and the check-mode plan)."""
    if c['branch']:
        driver = 'driver %s -> branch %s' % (c['from'], c['branch'])
    else:
        driver = ("driver %s, branch kept (no gpuops_upgrade_driver_branch or upgrade_driver_branch: nvidia_driver_branch "
                  "is not passed, the inventory's %s applies)" % (c['from'], c['inventory_branch']))
    parts = ['PLAN %s: %s;' % (c['host'], driver)]
    kernel, container, reboot = c['kernel'], c['in_container'], c['reboot']
    k = _kernels(c) if kernel else None
    if kernel:
        if k['new_kernels']:
            upgrades = ', '.join('%s %s -> %s' % (show(u.get('name')), show(u.get('from')), show(u.get('to')))
                                 for u in k['upgrades'])
            new = 'new kernel %s (%s)' % (_join(show(n) for n in k['new_kernels']), upgrades)
        else:
            new = 'no kernel update; %s is installed and not running' % show(k['newest_installed'])
        parts.append('kernel %s%s -> %s;' % (show(k['running']), " (the Docker host's)" if container else '', new))
    parts.append('health before %s; %s; wait up to %s s for the GPUs\' compute processes;' % (
        c['health_before'], c['drain_plan'], c['wait_timeout']))
    if kernel and k['new_kernels']:
        parts.append('upgrade %s (the driver packages stay held);' % _join(show(m) for m in k['metapackages']))
    parts.append('nvidia_driver role (a module for every bootable kernel; reboot %s);' % (
        'when the new module needs it' if reboot else 'never: upgrade_driver_reboot (gpuops_upgrade_reboot) is false'))
    if kernel:
        after = show(k['newest_after'])
        if container:
            parts.append("no reboot into %s: the container's kernel is its Docker host's;" % after)
        elif not reboot:
            parts.append('no reboot into %s: upgrade_driver_reboot (gpuops_upgrade_reboot) is false (it stays pending);'
                         % after)
        else:
            parts.append('reboot into %s when it is not the running kernel;' % after)
    checks = ['loaded driver on %s' % c['branch_number'] if c['branch'] else 'driver loaded']
    if kernel and not container and reboot:
        checks.append('running kernel %s' % show(k['newest_after']))
    checks.append('gpu_health')
    if c['acceptance']:
        checks.append('acceptance test')
    parts.append('after: %s;' % ', '.join(checks))
    parts.append('then undrain.')
    return _sentences(*parts)


_FIX_NVIDIA = ('Fix: upgrade the driver in the same run (-e gpuops_upgrade_driver_branch=<branch>, the role\'s '
               'upgrade_driver_branch), or build the module with DKMS (nvidia_driver_module_source=dkms).')


def upgrade_driver_kernel_refused(c):
    """upgrade_driver's before: a kernel update that apt refuses, or whose prebuilt module needs another driver."""
    refusal = c['refusal']
    if refusal:
        what = 'apt refuses to upgrade %s (%s).' % (_join(c['metapackages']), show(refusal.get('message', '')))
    else:
        what = ("the new kernel's prebuilt NVIDIA module (%s) is branch %s, the driver is %s." % (
            _join(c['module_packages']), _join(c['module_branches']), c['from']))
    nvidia = ''
    if not refusal or refusal.get('nvidia'):
        nvidia = "The new kernel's prebuilt NVIDIA module needs another driver than the held one. " + _FIX_NVIDIA
    return _sentences('KERNEL UPDATE REFUSED on %s:' % c['host'], what, nvidia,
                      'The host was not drained and nothing was changed.')


def upgrade_driver_kernel_failed(c):
    """upgrade_driver's install: apt refused the kernel update during the upgrade."""
    nvidia = ("The new kernel's prebuilt NVIDIA module needs a newer driver than the held one. " + _FIX_NVIDIA
              if c['nvidia'] else '')
    return _sentences('apt refused to upgrade %s: %s.' % (_join(c['metapackages']), c['reason']), nvidia,
                      'The running kernel is unchanged.')


def cluster_unaddressed(c):
    """training_cluster's and slurm's question when a member has no address and an interface is named."""
    if not c['interface']:
        return ''
    return 'Is %s (%s) up with an IPv4 address on each of them?' % (c['interface'], c['variable'])


def slurm_refused_keys(c):
    """slurm's preflight: keys of slurm_config_extra that the role writes itself."""
    if not c['keys']:
        return ''
    return ("slurm_config_extra sets %s, which the role writes: set the role's variable for it instead."
            % _join(c['keys']))


# Message name -> (function, the context's keys and their kinds).
MESSAGES = {
    'compat_problems': (compat_problems, {'problems': DICTS}),
    'nvidia_driver_source_refusal': (nvidia_driver_source_refusal, {
        'host': TEXT, 'distribution': TEXT, 'distribution_version': TEXT, 'os_family': TEXT, 'source': TEXT,
        'source_used': TEXT, 'branch': TEXT, 'branch_used': TEXT, 'kernel_module': TEXT, 'sources': TEXTS,
        'distribution_branches': TEXTS, 'open_branches': TEXTS, 'open_only_branches': TEXTS, 'secure_boot': TEXT,
        'module_source': TEXT, 'package_manager': TEXT}),
    'nvidia_driver_compat_refusal': (nvidia_driver_compat_refusal, {
        'host': TEXT, 'branch': TEXT, 'kernel_module': TEXT, 'gpus': DICTS, 'cuda_version': TEXT, 'problems': DICTS,
        'suggested_driver_branch': TEXT, 'source': TEXT, 'distribution': TEXT, 'distribution_branches': TEXTS}),
    'nvidia_driver_state': (nvidia_driver_state, {
        'loaded': FLAG, 'driver_version': TEXT, 'gpu_count': TEXT, 'health': TEXT, 'bake': FLAG, 'kernels': TEXTS,
        'reboot_pending': FLAG, 'container': TEXT, 'reason': TEXT}),
    'nvidia_driver_dkms_failure': (nvidia_driver_dkms_failure, {
        'first_error': TEXT, 'kernel': TEXT, 'path': TEXT, 'branch': TEXT}),
    'cuda_toolkit_source_refusal': (cuda_toolkit_source_refusal, {
        'host': TEXT, 'versions': TEXTS, 'source': TEXT, 'distribution': TEXT, 'distribution_version': TEXT,
        'distribution_versions': TEXTS, 'cudnn': FLAG, 'package_manager': TEXT}),
    'cuda_toolkit_source': (cuda_toolkit_source, {
        'versions': TEXTS, 'source': TEXT, 'requested_source': TEXT, 'repo_url': TEXT, 'distribution': TEXT,
        'distribution_version': TEXT, 'distribution_versions': TEXTS}),
    'cuda_toolkit_compat_refusal': (cuda_toolkit_compat_refusal, {
        'host': TEXT, 'results': DICTS, 'driver_version': TEXT, 'driver_branch': TEXT}),
    'cuda_toolkit_compat': (cuda_toolkit_compat, {'result': DICT, 'driver_version': TEXT, 'driver_branch': TEXT}),
    'cuda_toolkit_repo_refusal': (cuda_toolkit_repo_refusal, {
        'host': TEXT, 'versions': TEXTS, 'requested_source': TEXT, 'distribution': TEXT, 'distribution_version': TEXT,
        'distribution_versions': TEXTS, 'repo_url': TEXT, 'answer': TEXT}),
    'upgrade_driver_report': (upgrade_driver_report, {'hosts': TEXTS, 'outcomes': DICT}),
    'upgrade_driver_plan': (upgrade_driver_plan, {
        'host': TEXT, 'from': TEXT, 'branch': TEXT, 'branch_number': TEXT, 'inventory_branch': TEXT, 'kernel': FLAG,
        'in_container': FLAG, 'reboot': FLAG, 'acceptance': FLAG, 'kernels': DICT, 'health_before': TEXT,
        'drain_plan': TEXT, 'wait_timeout': TEXT}),
    'upgrade_driver_kernel_refused': (upgrade_driver_kernel_refused, {
        'host': TEXT, 'refusal': DICT, 'metapackages': TEXTS, 'module_packages': TEXTS, 'module_branches': TEXTS,
        'from': TEXT}),
    'upgrade_driver_kernel_failed': (upgrade_driver_kernel_failed, {
        'metapackages': TEXTS, 'reason': TEXT, 'nvidia': FLAG}),
    'cluster_unaddressed': (cluster_unaddressed, {'interface': TEXT, 'variable': TEXT}),
    'slurm_refused_keys': (slurm_refused_keys, {'keys': TEXTS}),
}


def render(name, context):
    """The message NAME for CONTEXT (a string; a list of lines for upgrade_driver_report); ValueError naming the
    message and the key on a bad context."""
    if not isinstance(name, _TEXT) or name not in MESSAGES:
        raise ValueError('unknown message %r; known: %s' % (name, ', '.join(sorted(MESSAGES))))
    function, keys = MESSAGES[name]
    checked = _check(name, context, keys)
    try:
        return function(checked)
    except ValueError as e:
        raise ValueError('%s: %s' % (name, e))
    except (AttributeError, TypeError, KeyError) as e:
        raise ValueError('%s: a value of the context has the wrong shape (%s)' % (name, e))
