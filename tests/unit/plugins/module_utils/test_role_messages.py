# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 54: the refusals and reports that were Jinja blocks in task files (plugins/module_utils/_role_messages.py).

The oracle is the old templates themselves (tests/unit/fixtures/role_messages/old_templates.yml), rendered with Jinja
from the variables the task reads, case by case: the new text must be theirs, word for word (whitespace folded as
YAML's `>-` folded it). Then the hostile contexts: every key missing, each of the wrong type, control characters.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

import jinja2
import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import role_message as plugin
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _role_messages as messages
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import load_yaml

OLD = load_yaml('role_messages', 'old_templates.yml')
ROLE_MESSAGE = plugin.FilterModule().filters()['role_message']

_ENV = jinja2.Environment(undefined=jinja2.ChainableUndefined)
_ENV.filters['bool'] = bool
_ENV.tests['search'] = lambda value, pattern: re.search(pattern, value) is not None


def old(name, **variables):
    return ' '.join(_ENV.from_string(OLD[name]).render(**variables).split())


def new(name, context):
    text = ROLE_MESSAGE(context, name)
    return text if isinstance(text, list) else ' '.join(text.split())


FACTS = {'distribution': 'Debian', 'distribution_version': '12.8', 'os_family': 'Debian'}
UBUNTU = {'distribution': 'Ubuntu', 'distribution_version': '24.04', 'os_family': 'Debian'}
ROCKY = {'distribution': 'Rocky', 'distribution_version': '9.4', 'os_family': 'RedHat'}
PROBLEMS = [{'variable': 'nvidia_driver_branch', 'message': 'driver branch 470 does not run CUDA 12.4', 'fix': 'set 550'},
            {'variable': 'nvidia_driver_kernel_module', 'message': 'Pascal has no open kernel modules', 'fix': 'proprietary'}]
GPUS = [{'product': 'H100 SXM5 80GB', 'pci_device_id': '10de:2330', 'architecture': 'Hopper', 'pci_bus_id': '0000:17:00.0'},
        {'product': '', 'pci_device_id': '10de:ffff', 'architecture': None, 'pci_bus_id': '0000:18:00.0'}]


@pytest.mark.parametrize('problems', [[], PROBLEMS[:1], PROBLEMS])
def test_compat_problems_read_as_before(problems):
    result = {'problems': problems, 'compatible': False}
    assert old('known', inventory_hostname='h1', __nvidia_driver_known_branch=result) == \
        'h1: ' + (new('compat_problems', result) + ' Nothing was changed.').strip()


SOURCE_CASES = [
    # (facts, variables of the role): Debian 12 with a branch it does not ship; auto with no table; Ubuntu open-only;
    # Rocky (dnf) with every optional sentence.
    (FACTS, dict(nvidia_driver_source='auto', source='distribution', nvidia_driver_branch='550', branch='550',
                 module='proprietary', branches=['535', '470'], open=['535'], open_only=[], sb='fail', ms='auto', pm='apt')),
    (UBUNTU, dict(nvidia_driver_source='distribution', source='distribution', nvidia_driver_branch='auto', branch='',
                  module='proprietary', branches=[], open=[], open_only=[], sb='fail', ms='auto', pm='apt')),
    (UBUNTU, dict(nvidia_driver_source='auto', source='distribution', nvidia_driver_branch='auto', branch='615',
                  module='proprietary', branches=['580', '615'], open=[], open_only=['615'], sb='enroll', ms='prebuilt',
                  pm='apt')),
    (ROCKY, dict(nvidia_driver_source='cuda_repo', source='cuda_repo', nvidia_driver_branch='580', branch='580',
                 module='open', branches=[], open=[], open_only=[], sb='enroll', ms='prebuilt', pm='dnf')),
]


@pytest.mark.parametrize('facts,v', SOURCE_CASES)
def test_nvidia_driver_source_refusal_reads_as_before(facts, v):
    sources = {'distribution': {}, 'cuda_repo': {}}
    want = old('source', inventory_hostname='h1', ansible_facts=facts, nvidia_driver_source=v['nvidia_driver_source'],
               _nvidia_driver_source=v['source'], nvidia_driver_branch=v['nvidia_driver_branch'],
               _nvidia_driver_branch=v['branch'], nvidia_driver_kernel_module=v['module'],
               _nvidia_driver_packages_by_source=sources, _nvidia_driver_distribution_branches=v['branches'],
               _nvidia_driver_distribution_open_branches=v['open'],
               _nvidia_driver_distribution_open_only_branches=v['open_only'], nvidia_driver_secure_boot=v['sb'],
               nvidia_driver_module_source=v['ms'], _nvidia_driver_package_manager=v['pm'])
    got = new('nvidia_driver_source_refusal', dict(
        host='h1', distribution=facts['distribution'], distribution_version=facts['distribution_version'],
        os_family=facts['os_family'], source=v['nvidia_driver_source'], source_used=v['source'],
        branch=v['nvidia_driver_branch'], branch_used=v['branch'], kernel_module=v['module'], sources=list(sources),
        distribution_branches=v['branches'], open_branches=v['open'], open_only_branches=v['open_only'],
        secure_boot=v['sb'], module_source=v['ms'], package_manager=v['pm']))
    assert got == want


@pytest.mark.parametrize('gpus', [[], GPUS[:1], GPUS])
@pytest.mark.parametrize('suggested,source', [('', 'distribution'), ('580', 'distribution'), ('535', 'distribution'),
                                              ('580', 'cuda_repo')])
def test_nvidia_driver_compat_refusal_reads_as_before(gpus, suggested, source):
    compat = {'problems': PROBLEMS, 'suggested_driver_branch': suggested or None, 'compatible': False}
    want = old('compat', inventory_hostname='h1', _nvidia_driver_branch='470', nvidia_driver_kernel_module='open',
               _nvidia_driver_pci_gpus=gpus, nvidia_driver_cuda_version='12.4', __nvidia_driver_compat=compat,
               _nvidia_driver_source=source, ansible_facts=FACTS, _nvidia_driver_distribution_branches=['535', '470'])
    got = new('nvidia_driver_compat_refusal', dict(
        host='h1', branch='470', kernel_module='open', gpus=gpus, cuda_version='12.4', problems=PROBLEMS,
        suggested_driver_branch=suggested, source=source, distribution='Debian', distribution_branches=['535', '470']))
    assert got == want


STATE_CASES = [
    dict(nvidia={'driver_loaded': True, 'driver_version': '580.95.05', 'gpu_count': 8}, health='pass'),
    dict(nvidia={'driver_loaded': False, 'reason': 'no module'}, bake=True, kernels=['6.1.0-40-amd64', '6.12.0-1']),
    dict(nvidia=None, bake=True, kernels=[]),
    dict(nvidia={'driver_loaded': False, 'reason': 'no module'}, reboot=True),
    dict(nvidia={'driver_loaded': False, 'reason': 'NVML: driver not loaded'}, container='docker'),
    dict(nvidia=None),
]


@pytest.mark.parametrize('case', STATE_CASES)
def test_nvidia_driver_state_reads_as_before(case):
    facts = {'virtualization_type': case.get('container') or 'kvm'}
    if case['nvidia'] is not None:
        facts['nvidia'] = case['nvidia']
    variables = dict(_nvidia_driver_installed_version='580.95.05', _nvidia_driver_source='distribution',
                     _nvidia_driver_userspace_only=False, nvidia_driver_kernel_module='open', nvidia_driver_hold=True,
                     ansible_facts=facts, nvidia_driver_bake=case.get('bake', False),
                     _nvidia_driver_reboot_pending=case.get('reboot', False),
                     _nvidia_driver_in_container=bool(case.get('container')))
    if 'health' in case:
        variables['__nvidia_driver_health'] = {'status': case['health']}
    if 'kernels' in case:
        variables['__nvidia_driver_kernel_check'] = {'kernels': [{'release': k} for k in case['kernels']]}
    nvidia = case['nvidia'] or {}
    got = new('nvidia_driver_state', dict(
        loaded=bool(nvidia.get('driver_loaded')), driver_version=nvidia.get('driver_version', ''),
        gpu_count=nvidia.get('gpu_count', 0), health=case.get('health', 'not checked'), bake=case.get('bake', False),
        kernels=case.get('kernels', []), reboot_pending=case.get('reboot', False), container=case.get('container', ''),
        reason=nvidia.get('reason', '')))
    want = old('state', **variables)
    assert want.endswith(' ' + got), (want, got)
    assert want == 'NVIDIA driver 580.95.05 from distribution (open kernel module), held. ' + got


@pytest.mark.parametrize('log', [{}, {'first_error': 'error: implicit declaration', 'kernel': '6.16.0-1-amd64',
                                      'path': '/var/lib/dkms/nvidia/550/build/make.log'},
                                 {'first_error': 'error: x', 'kernel': '', 'path': '/var/lib/dkms/make.log'}])
def test_nvidia_driver_dkms_failure_reads_as_before(log):
    want = old('dkms', inventory_hostname='h1', _nvidia_driver_branch='550',
               ansible_failed_result={'msg': 'E: apt failed'}, __nvidia_driver_dkms_log={'dkms_log': log})
    got = new('nvidia_driver_dkms_failure', dict(first_error=log.get('first_error', ''), kernel=log.get('kernel', ''),
                                                 path=log.get('path', ''), branch='550'))
    assert want == ' '.join(('h1: installing NVIDIA driver branch 550 failed: E: apt failed ' + got).split())


@pytest.mark.parametrize('facts,shipped,source,cudnn,pm', [
    (FACTS, ['11.8'], 'distribution', False, 'apt'), (UBUNTU, [], 'distribution', False, 'apt'),
    (ROCKY, [], 'cuda_repo', True, 'dnf'), (FACTS, ['11.8'], 'cuda_repo', True, 'apt')])
def test_cuda_toolkit_source_refusal_reads_as_before(facts, shipped, source, cudnn, pm):
    want = old('ct_source', inventory_hostname='h1', _cuda_toolkit_versions=['12.4', '11.8'], _cuda_toolkit_source=source,
               ansible_facts=facts, _cuda_toolkit_distribution_versions=shipped, cuda_toolkit_cudnn=cudnn,
               _cuda_toolkit_package_manager=pm)
    got = new('cuda_toolkit_source_refusal', dict(
        host='h1', versions=['12.4', '11.8'], source=source, distribution=facts['distribution'],
        distribution_version=facts['distribution_version'], distribution_versions=shipped, cudnn=cudnn, package_manager=pm))
    assert got == want


@pytest.mark.parametrize('requested,source,shipped', [('auto', 'cuda_repo', ['11.8']), ('auto', 'distribution', ['11.8']),
                                                      ('cuda_repo', 'cuda_repo', ['11.8']), ('auto', 'cuda_repo', [])])
def test_cuda_toolkit_source_and_repo_refusal_read_as_before(requested, source, shipped):
    url = 'https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/'
    variables = dict(inventory_hostname='h1', _cuda_toolkit_versions=['12.4'], _cuda_toolkit_source=source,
                     cuda_toolkit_source=requested, cuda_toolkit_repo_url=url, ansible_facts=FACTS,
                     _cuda_toolkit_distribution_versions=shipped)
    common = dict(versions=['12.4'], requested_source=requested, distribution='Debian', distribution_version='12.8',
                  distribution_versions=shipped, repo_url=url)
    assert new('cuda_toolkit_source', dict(common, source=source)) == old('ct_where', **variables)
    for probe, answer in (({'msg': 'Status code was -1: timed out'}, 'Status code was -1: timed out'),
                          ({'status': 404}, 'HTTP 404'), ({}, 'HTTP ?')):
        want = old('ct_repo', __cuda_toolkit_repo_probe=probe, **variables)
        assert new('cuda_toolkit_repo_refusal', dict(common, host='h1', answer=answer)) == want


RESULTS = [
    {'item': '12.4', 'compatible': False, 'architectures': ['Volta'], 'problems': PROBLEMS, 'suggested_driver_branch': '550',
     'mode': 'minor', 'notes': []},
    {'item': '11.8', 'compatible': True, 'architectures': ['Volta'], 'problems': [], 'suggested_driver_branch': None,
     'mode': 'full', 'notes': ['Full compatibility.', 'Another note.']},
    {'item': '10.2', 'compatible': False, 'architectures': [], 'problems': PROBLEMS[:1], 'suggested_driver_branch': None,
     'mode': 'minor', 'notes': ['A note.']},
]


@pytest.mark.parametrize('driver', ['', '550.163.01'])
def test_cuda_toolkit_compat_messages_read_as_before(driver):
    variables = dict(inventory_hostname='h1', _cuda_toolkit_driver_version=driver, _cuda_toolkit_driver_branch='470')
    want = old('ct_compat', __cuda_toolkit_compat={'results': RESULTS}, **variables)
    got = new('cuda_toolkit_compat_refusal', dict(host='h1', results=RESULTS, driver_version=driver, driver_branch='470'))
    assert got == want
    for result in RESULTS:
        got = new('cuda_toolkit_compat', dict(result=result, driver_version=driver, driver_branch='470'))
        assert got == old('ct_runs', item=result, **variables)


def test_upgrade_driver_report_reads_as_before():
    outcomes = {'a': {'status': 'upgraded', 'from': '535.261.03', 'to': '550.163.01'},
                'b': {'status': 'already', 'from': '550.163.01', 'to': '550.163.01'},
                'c': {'status': 'upgraded', 'from': '550.163.01', 'kernel': '6.1.0-40 -> 6.1.0-41 (installed)'},
                'd': {'status': 'SKIPPED', 'reason': 'GPU health is fail'}}
    hosts = ['a', 'b', 'c', 'd', 'e']
    hostvars = {h: {'upgrade_driver_outcome': o} for h, o in outcomes.items()}
    hostvars['e'] = {}
    rendered = _ENV.from_string(OLD['ud_report'].replace('{{ out }}', '{{ out | join("\\n") }}')).render(
        ansible_play_hosts_all=hosts, hostvars=hostvars)
    got = ROLE_MESSAGE({'hosts': hosts, 'outcomes': dict((h, outcomes.get(h)) for h in hosts)}, 'upgrade_driver_report')
    assert got == rendered.split('\n')
    assert got[-1] == 'e: not run'


KERNELS = {'running': '6.1.0-40-cloud-amd64', 'new_kernels': ['6.1.0-41-cloud-amd64'], 'newest_installed': '6.1.0-40-cloud-amd64',
           'newest_after': '6.1.0-41-cloud-amd64', 'metapackages': ['linux-image-cloud-amd64'],
           'upgrades': [{'name': 'linux-image-cloud-amd64', 'from': '6.1.158-1', 'to': '6.1.159-1'},
                        {'name': 'linux-headers-cloud-amd64', 'from': '6.1.158-1', 'to': '6.1.159-1'}]}
NO_NEW = dict(KERNELS, new_kernels=[], upgrades=[], newest_installed='6.1.0-41-cloud-amd64')


@pytest.mark.parametrize('kernel', [False, True])
@pytest.mark.parametrize('kernels', [KERNELS, NO_NEW])
@pytest.mark.parametrize('container', [False, True])
@pytest.mark.parametrize('reboot', [False, True])
@pytest.mark.parametrize('branch', ['', '550'])
def test_upgrade_driver_plan_reads_as_before(kernel, kernels, container, reboot, branch):
    for acceptance in (False, True):
        want = old('ud_plan', inventory_hostname='h1', _upgrade_driver_from='535.261.03', _upgrade_driver_branch=branch,
                   nvidia_driver_branch='535', upgrade_driver_kernel=kernel, __upgrade_driver_kernels=kernels,
                   _upgrade_driver_in_container=container, __upgrade_driver_before={'status': 'pass'},
                   _upgrade_driver_drain_plan='drain with slurm', upgrade_driver_wait_timeout=600,
                   upgrade_driver_reboot=reboot, _upgrade_driver_branch_number=branch, upgrade_driver_acceptance=acceptance)
        got = new('upgrade_driver_plan', {
            'host': 'h1', 'from': '535.261.03', 'branch': branch, 'branch_number': branch, 'inventory_branch': '535',
            'kernel': kernel, 'in_container': container, 'reboot': reboot, 'acceptance': acceptance,
            'kernels': kernels if kernel else {}, 'health_before': 'pass', 'drain_plan': 'drain with slurm',
            'wait_timeout': 600})
        assert got == want


@pytest.mark.parametrize('refusal', [None, {'message': 'linux-modules-nvidia-580 : Depends: x', 'nvidia': True},
                                     {'message': 'libc6 : Breaks: y', 'nvidia': False}])
def test_upgrade_driver_kernel_refusals_read_as_before(refusal):
    modules = [{'key': 'linux-modules-nvidia-580-server-6.8.0-151-generic', 'value': '580'}]
    want = old('ud_refused', inventory_hostname='h1', __upgrade_driver_kernels={'refusal': refusal, 'metapackages': ['linux-generic']},
               _upgrade_driver_module_branches=modules, _upgrade_driver_from='535.274.02')
    got = new('upgrade_driver_kernel_refused', {
        'host': 'h1', 'refusal': refusal or {}, 'metapackages': ['linux-generic'], 'module_packages': [modules[0]['key']],
        'module_branches': ['580'], 'from': '535.274.02'})
    assert got == want
    want = old('ud_failed', __upgrade_driver_kernels={'metapackages': ['linux-generic']},
               __upgrade_driver_kernel_refusal={'refusal': refusal} if refusal else {}, ansible_failed_result={'msg': 'E: x'})
    reason = (refusal or {}).get('message') or 'E: x'
    got = new('upgrade_driver_kernel_failed', {'metapackages': ['linux-generic'], 'reason': reason,
                                               'nvidia': bool((refusal or {}).get('nvidia'))})
    assert got == want


def test_cluster_and_slurm_sentences():
    assert new('cluster_unaddressed', {'interface': 'ib0', 'variable': 'slurm_interface'}) == \
        'Is ib0 (slurm_interface) up with an IPv4 address on each of them?'
    assert new('cluster_unaddressed', {'interface': '', 'variable': 'slurm_interface'}) == ''
    assert new('slurm_refused_keys', {'keys': []}) == ''
    assert new('slurm_refused_keys', {'keys': ['SlurmctldPort', 'ClusterName']}) == (
        "slurm_config_extra sets SlurmctldPort, ClusterName, which the role writes: set the role's variable for it instead.")


# Hostile contexts: each message, each key missing or of each wrong kind, fails naming the message and the key.
WRONG = {messages.TEXT: [None, True, [], {}, ['x']], messages.FLAG: [None, 'true', 1, 'yes', []],
         messages.TEXTS: [None, 'a, b', {}, [None], [True], [{}]], messages.DICTS: [None, 'x', {}, ['x'], [None]],
         messages.DICT: [None, 'x', [], 1]}


@pytest.mark.parametrize('name', sorted(messages.MESSAGES))
def test_every_key_is_checked(name):
    keys = messages.MESSAGES[name][1]
    for key, kind in keys.items():
        with pytest.raises(AnsibleFilterError, match=r'role_message: %s: the context lacks %s' % (name, key)):
            ROLE_MESSAGE({k: None for k in keys if k != key}, name)
        for value in WRONG[kind]:
            context = {k: None for k in keys}
            context[key] = value
            with pytest.raises(AnsibleFilterError, match=r'role_message: %s: ' % name):
                ROLE_MESSAGE(context, name)


@pytest.mark.parametrize('context', [None, 'host=h1', ['host'], 3])
def test_a_context_that_is_no_mapping_is_refused(context):
    with pytest.raises(AnsibleFilterError, match='expected a mapping'):
        ROLE_MESSAGE(context, 'compat_problems')


@pytest.mark.parametrize('name', [None, '', 'compat problems', 'COMPAT_PROBLEMS', ['compat_problems'], 'compat_problems\n'])
def test_an_unknown_message_is_refused_by_name(name):
    with pytest.raises(AnsibleFilterError, match='unknown message'):
        ROLE_MESSAGE({'problems': []}, name)


@pytest.mark.parametrize('problems', [[{'variable': 'x'}], [None], ['text'], [{'variable': 'x', 'message': 'm'}]])
def test_malformed_problems_are_refused(problems):
    with pytest.raises(AnsibleFilterError, match=r'compat_problems: '):
        ROLE_MESSAGE({'problems': problems}, 'compat_problems')


@pytest.mark.parametrize('results', [[{'item': '12.4', 'architectures': 'Volta', 'problems': []}],
                                     [{'item': '12.4', 'problems': 'x'}]])
def test_malformed_compat_results_are_refused(results):
    with pytest.raises(AnsibleFilterError, match=r'cuda_toolkit_compat_refusal: .*must be lists'):
        ROLE_MESSAGE({'host': 'h', 'results': results, 'driver_version': '', 'driver_branch': '580'},
                     'cuda_toolkit_compat_refusal')


def test_a_kernel_summary_without_its_keys_is_refused():
    context = {'host': 'h1', 'from': '535', 'branch': '', 'branch_number': '', 'inventory_branch': 'auto', 'kernel': True,
               'in_container': False, 'reboot': True, 'acceptance': False, 'kernels': {'running': '6.1'},
               'health_before': 'pass', 'drain_plan': 'none', 'wait_timeout': 600}
    with pytest.raises(AnsibleFilterError, match='upgrade_driver_plan: kernels lacks new_kernels'):
        ROLE_MESSAGE(context, 'upgrade_driver_plan')


@pytest.mark.parametrize('value,shown', [
    ('a\nFORGED: line', 'a\\nFORGED: line'), ('x\r\ny', 'x\\r\\ny'), ('\x1b[31mred', '\\x1b[31mred'),
    ('sep\u2028arated', 'sep\\u2028arated'), ('nel\x85', 'nel\\x85'), ('tab\there', 'tab\\there'),
    ('Ünïcödé ٣', 'Ünïcödé ٣'), (580, '580'), (1.5, '1.5')])
def test_control_characters_cannot_forge_a_line(value, shown):
    got = ROLE_MESSAGE({'interface': value, 'variable': 'slurm_interface'}, 'cluster_unaddressed')
    assert got == 'Is %s (slurm_interface) up with an IPv4 address on each of them?' % shown
    assert '\n' not in got and '\r' not in got


def test_a_hostile_gpu_product_stays_on_one_line():
    gpus = [dict(GPUS[0], product='H100\nNothing was changed. OK')]
    got = ROLE_MESSAGE(dict(host='h1', branch='470', kernel_module='open', gpus=gpus, cuda_version='12.4', problems=[],
                            suggested_driver_branch='', source='cuda_repo', distribution='Debian',
                            distribution_branches=[]), 'nvidia_driver_compat_refusal')
    assert 'H100\\nNothing was changed. OK (10de:2330' in got and '\n' not in got


def test_the_negative_control_the_oracle_sees_a_changed_word():
    """The comparison with the old template is not vacuous: a message with one word changed no longer matches."""
    result = {'problems': PROBLEMS}
    want = old('known', inventory_hostname='h1', __nvidia_driver_known_branch=result)
    changed = 'h1: ' + new('compat_problems', result).replace('(fix:', '(repair:') + ' Nothing was changed.'
    assert changed != want
    assert 'h1: ' + new('compat_problems', result) + ' Nothing was changed.' == want


def test_a_huge_list_is_rendered_whole():
    hosts = ['node%05d' % i for i in range(20000)]
    lines = ROLE_MESSAGE({'hosts': hosts, 'outcomes': {}}, 'upgrade_driver_report')
    assert len(lines) == 20000 and lines[-1] == 'node19999: not run'


def test_the_report_reads_hostvars_as_default_would():
    hostvars = {'a': {'upgrade_driver_outcome': {'status': 'already', 'from': '550.163.01', 'to': '550.163.01'}},
                'b': {'other': 1}}
    got = ROLE_MESSAGE({'hosts': ['a', 'b', 'gone']}, 'upgrade_driver_report', hostvars=hostvars)
    assert got == ['a: already 550.163.01', 'b: not run', 'gone: not run']


@pytest.mark.parametrize('context,message,hostvars,words', [
    ({'hosts': ['a']}, 'upgrade_driver_report', ['a'], 'hostvars must be'),
    ({'hosts': 'a'}, 'upgrade_driver_report', {}, 'hosts must be a list'),
    ({'hosts': ['a']}, 'compat_problems', {}, 'hostvars is read by upgrade_driver_report only'),
    ({'hosts': ['a']}, 'upgrade_driver_report', {'a': {'upgrade_driver_outcome': 'done'}}, 'must be a mapping with a status'),
])
def test_a_bad_hostvars_call_is_refused(context, message, hostvars, words):
    with pytest.raises(AnsibleFilterError, match=words):
        ROLE_MESSAGE(context, message, hostvars=hostvars)
