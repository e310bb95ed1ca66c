# -*- coding: utf-8 -*-
"""_apt_driver_lock: the install and lock plan of a driver branch from NVIDIA's repository, old and new schemes
(NVIDIA Driver Installation Guide r590, section 4.1), and the check that the pinning package and the holds agree."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils._apt_driver_lock import (
    driver_plan, installed_versions, lock_problems, madison_versions, pinning_package, uses_pinning, version_branch)

PATTERNS = ['^nvidia-', '^libnvidia-', '^cuda-drivers']
# package_facts' shape.
ON_590 = {'cuda-drivers': [{'version': '590.48.01-1'}], 'nvidia-fabricmanager': [{'version': '590.48.01-1'}],
          'nvidia-persistenced': [{'version': '590.48.01-1'}], 'nvidia-driver-pinning-590': [{'version': '590-1'}],
          'bash': [{'version': '5.2.15-2+b7'}]}
MADISON = """cuda-drivers | 610.43.02-1 | http://127.0.0.1:8765  Packages
cuda-drivers | 595.58.03-1 | http://127.0.0.1:8765  Packages
cuda-drivers | 590.48.01-1 | http://127.0.0.1:8765  Packages
nvidia-driver-pinning-590 |      590-1 | http://127.0.0.1:8765  Packages
nvidia-driver-pinning-595 |      595-1 | http://127.0.0.1:8765  Packages
"""


@pytest.mark.parametrize('branch, pinned', [('535', False), ('580', False), ('590', True), ('595', True), ('610', True)])
def test_the_scheme_changes_at_590(branch, pinned):
    assert uses_pinning(branch) is pinned
    assert pinning_package(branch) == ('nvidia-driver-pinning-' + branch if pinned else '')


@pytest.mark.parametrize('bad', ['59', '5900', 'auto', '590-open', '', None])
def test_a_bad_branch_is_refused(bad):
    with pytest.raises(ValueError, match='three-digit'):
        uses_pinning(bad)


def test_version_branch():
    assert version_branch('590.48.01-1') == '590'
    assert version_branch('1:595.58.03-0ubuntu1') == '595'
    assert version_branch('590-1') == ''
    assert version_branch(None) == ''


def test_installed_versions_takes_package_facts_or_plain_dicts():
    assert installed_versions(ON_590)['cuda-drivers'] == '590.48.01-1'
    assert installed_versions({'a': '1.0', 'b': {'version': '2'}, 'c': []}) == {'a': '1.0', 'b': '2', 'c': ''}


def test_madison():
    assert madison_versions(MADISON)['cuda-drivers'] == ['610.43.02-1', '595.58.03-1', '590.48.01-1']
    assert madison_versions('') == {}


def test_before_590_the_names_carry_the_branch_and_nothing_is_pinned():
    plan = driver_plan('580', ['cuda-drivers-580'], holdable=['nvidia-fabricmanager-580'], holds=[], installed={})
    assert plan == {'pinned': False, 'pinning_package': '', 'install': ['cuda-drivers-580'],
                    'hold': ['cuda-drivers-580', 'nvidia-fabricmanager-580'], 'release': [], 'remove': [], 'missing': [],
                    'offered': {}}


def test_fresh_590_installs_the_pinning_package_first_and_the_branch_by_version():
    plan = driver_plan('590', ['cuda-drivers'], holdable=['nvidia-fabricmanager'], holds=['bash'], installed={},
                       patterns=PATTERNS, available=MADISON)
    assert plan['pinned'] is True
    assert plan['pinning_package'] == 'nvidia-driver-pinning-590'
    # The newest cuda-drivers is 610: without the version, apt would install it whatever the pin file said later.
    assert plan['install'] == ['cuda-drivers=590.*']
    assert plan['hold'] == ['nvidia-driver-pinning-590', 'cuda-drivers', 'nvidia-fabricmanager']
    assert plan['release'] == [] and plan['remove'] == [] and plan['missing'] == []


def test_same_branch_again_changes_nothing():
    holds = ['nvidia-driver-pinning-590', 'cuda-drivers', 'nvidia-fabricmanager']
    plan = driver_plan('590', ['cuda-drivers'], holdable=['nvidia-fabricmanager'], holds=holds, installed=ON_590,
                       patterns=PATTERNS)
    assert plan['release'] == [] and plan['remove'] == []


def test_590_to_595_releases_the_same_names_held_on_the_old_branch():
    holds = ['nvidia-driver-pinning-590', 'cuda-drivers', 'nvidia-fabricmanager', 'bash', 'nvidia-persistenced']
    plan = driver_plan('595', ['cuda-drivers'], holdable=['nvidia-fabricmanager'], holds=holds, installed=ON_590,
                       patterns=PATTERNS, available=MADISON)
    # cuda-drivers and Fabric Manager keep their names but are on 590; the old pinning package is not wanted;
    # bash is not the driver's; nvidia-persistenced is a driver package no longer wanted (a user's hold on it goes).
    assert plan['release'] == ['nvidia-driver-pinning-590', 'cuda-drivers', 'nvidia-fabricmanager', 'nvidia-persistenced']
    assert plan['remove'] == ['nvidia-driver-pinning-590']
    assert plan['install'] == ['cuda-drivers=595.*']
    assert plan['missing'] == []


def test_back_to_the_old_scheme_removes_the_pinning_package():
    plan = driver_plan('580', ['cuda-drivers-580'], holds=['nvidia-driver-pinning-590', 'cuda-drivers'], installed=ON_590,
                       patterns=PATTERNS)
    assert plan['release'] == ['nvidia-driver-pinning-590', 'cuda-drivers']
    assert plan['remove'] == ['nvidia-driver-pinning-590']


def test_535_to_550_releases_the_old_names_only():
    installed = {'cuda-drivers-535': '535.261.03-1', 'nvidia-fabricmanager-535': '535.261.03-1'}
    plan = driver_plan('550', ['cuda-drivers-550'], holdable=['nvidia-fabricmanager-550'],
                       holds=['cuda-drivers-535', 'nvidia-fabricmanager-535'], installed=installed, patterns=PATTERNS)
    assert plan['release'] == ['cuda-drivers-535', 'nvidia-fabricmanager-535']
    assert plan['remove'] == []


def test_a_branch_the_repository_lacks_is_missing():
    plan = driver_plan('600', ['cuda-drivers'], installed={}, available=MADISON)
    assert plan['missing'] == ['nvidia-driver-pinning-600', 'cuda-drivers']
    # Before 590 only the pinning package would be checked, and there is none.
    assert driver_plan('580', ['cuda-drivers-580'], available=MADISON)['missing'] == []


def test_a_version_pinning_package_is_removed_in_favour_of_the_branch_one():
    installed = dict(ON_590, **{'nvidia-driver-pinning-590.48.01': [{'version': '590.48.01-1'}]})
    plan = driver_plan('590', ['cuda-drivers'], holds=[], installed=installed, patterns=PATTERNS)
    assert plan['remove'] == ['nvidia-driver-pinning-590.48.01']


def test_the_lock_agrees_on_590():
    holds = ['nvidia-driver-pinning-590', 'cuda-drivers', 'nvidia-fabricmanager', 'bash']
    held = ['nvidia-driver-pinning-590', 'cuda-drivers', 'nvidia-fabricmanager']
    assert lock_problems('590', installed=ON_590, holds=holds, held=held, patterns=PATTERNS) == []


def test_the_lock_disagrees():
    installed = dict(ON_590, **{'nvidia-driver-pinning-595': [{'version': '595-1'}]})
    installed.pop('nvidia-driver-pinning-590')
    holds = ['nvidia-driver-pinning-595', 'cuda-drivers']
    problems = lock_problems('590', installed=installed, holds=holds,
                             held=['nvidia-driver-pinning-590', 'cuda-drivers', 'nvidia-fabricmanager'], patterns=PATTERNS)
    assert problems == [
        'the pinning package nvidia-driver-pinning-590 is not installed',
        'pinning packages of another branch or version are installed: nvidia-driver-pinning-595',
        'nvidia-driver-pinning-590 is not held',
        'nvidia-fabricmanager is not held',
        'nvidia-driver-pinning-595 is held, but the branch is 590',
    ]


def test_a_held_package_of_another_branch_is_a_problem():
    on_595_pin = dict(ON_590, **{'nvidia-driver-pinning-595': '595-1'})
    on_595_pin.pop('nvidia-driver-pinning-590')
    problems = lock_problems('595', installed=on_595_pin,
                             holds=['nvidia-driver-pinning-595', 'cuda-drivers'], held=[], patterns=PATTERNS)
    # Only when the role holds it (held): the role's own hold on the old branch's version.
    assert problems == []
    problems = lock_problems('595', installed=on_595_pin,
                             holds=['nvidia-driver-pinning-595', 'cuda-drivers'], held=['cuda-drivers'], patterns=PATTERNS)
    assert problems == ['cuda-drivers is held at 590.48.01-1, which is not branch 595']


def test_the_container_toolkit_holds_are_not_the_drivers():
    installed = dict(ON_590, **{'nvidia-container-toolkit': '1.17.8-1', 'libnvidia-container1': '1.17.8-1'})
    holds = ['nvidia-driver-pinning-590', 'cuda-drivers', 'nvidia-container-toolkit', 'libnvidia-container1']
    plan = driver_plan('590', ['cuda-drivers'], holds=holds, installed=installed, patterns=PATTERNS)
    assert plan['release'] == []
    assert lock_problems('590', installed=installed, holds=holds, held=['nvidia-driver-pinning-590', 'cuda-drivers'],
                         patterns=PATTERNS) == []


def test_holds_off_needs_only_the_pinning_package():
    assert lock_problems('595', installed={'nvidia-driver-pinning-595': '595-1', 'cuda-drivers': '595.58.03-1'},
                         holds=[], held=[], patterns=PATTERNS) == []


def test_before_590_holds_only():
    installed = {'cuda-drivers-550': '550.163.01-1'}
    assert lock_problems('550', installed=installed, holds=['cuda-drivers-550'], held=['cuda-drivers-550'],
                         patterns=PATTERNS) == []
    assert lock_problems('550', installed=installed, holds=[], held=['cuda-drivers-550'],
                         patterns=PATTERNS) == ['cuda-drivers-550 is not held']


# Ubuntu's archive on 2026-12-04 (noble-updates, restricted): the Packages index offers 580.196.07 while
# jammy-security still has 580.178.04; an exact version is what a fleet pins.
UBUNTU_MADISON = """nvidia-utils-580-server | 580.196.07-0ubuntu0.22.04.1 | http://archive.ubuntu.com/ubuntu jammy-updates/restricted amd64 Packages
nvidia-utils-580-server | 580.178.04-0ubuntu0.22.04.1 | http://archive.ubuntu.com/ubuntu jammy-security/restricted amd64 Packages
libnvidia-compute-580-server | 580.196.07-0ubuntu0.22.04.1 | http://archive.ubuntu.com/ubuntu jammy-updates/restricted amd64 Packages
"""
UBUNTU_PACKAGES = ['nvidia-utils-580-server', 'libnvidia-compute-580-server']


def test_a_version_installs_each_package_at_it_and_names_what_the_sources_lack():
    plan = driver_plan('580', UBUNTU_PACKAGES, available=UBUNTU_MADISON, version='580.178.04')
    assert plan['install'] == ['nvidia-utils-580-server=580.178.04-*', 'libnvidia-compute-580-server=580.178.04-*']
    assert plan['missing'] == ['libnvidia-compute-580-server']
    assert plan['offered'] == {'libnvidia-compute-580-server': ['580.196.07']}
    assert plan['pinned'] is False and plan['pinning_package'] == ''
    # Negative control: without a version nothing is missing before 590 (the newest is taken).
    assert driver_plan('580', UBUNTU_PACKAGES, available=UBUNTU_MADISON)['missing'] == []
    assert driver_plan('580', UBUNTU_PACKAGES, available=UBUNTU_MADISON, version='580.196.07')['missing'] == []


def test_a_version_releases_the_holds_of_packages_installed_at_another_one():
    installed = {'nvidia-utils-580-server': '580.196.07-0ubuntu0.22.04.1',
                 'libnvidia-compute-580-server': '580.178.04-0ubuntu0.22.04.1'}
    holds = ['nvidia-utils-580-server', 'libnvidia-compute-580-server']
    plan = driver_plan('580', UBUNTU_PACKAGES, holds=holds, installed=installed, patterns=PATTERNS, version='580.178.04')
    assert plan['release'] == ['nvidia-utils-580-server']
    assert driver_plan('580', UBUNTU_PACKAGES, holds=holds, installed=installed, patterns=PATTERNS)['release'] == []


def test_a_version_leaves_the_prebuilt_kernel_modules_at_their_kernels_version_and_checks_the_dkms_package():
    """Ubuntu's prebuilt module packages are versioned by their kernel (6.8.0-149.149): with an exact driver version they
    are installed and held as they are, never released for "another version"; the DKMS package is the driver's own
    (kernels scenario, 2026-12-04: the role refused nvidia-dkms-580-server as not offered, apt-cache madison had not
    been asked about it)."""
    module = 'linux-modules-nvidia-580-server-6.8.0-149-generic'
    packages = UBUNTU_PACKAGES + ['nvidia-dkms-580-server', module]
    madison = UBUNTU_MADISON + (
        "libnvidia-compute-580-server | 580.178.04-0ubuntu0.22.04.1 | http://archive.ubuntu.com/ubuntu jammy-security/restricted amd64 Packages\n"
        "nvidia-dkms-580-server | 580.178.04-0ubuntu0.22.04.1 | http://archive.ubuntu.com/ubuntu jammy-security/restricted amd64 Packages\n"
        "%s | 6.8.0-149.149~22.04.1 | http://archive.ubuntu.com/ubuntu jammy-updates/restricted amd64 Packages\n" % module)
    plan = driver_plan('580', packages, available=madison, version='580.178.04', holds=[module],
                       installed={module: '6.8.0-149.149~22.04.1'}, patterns=PATTERNS + ['^linux-modules-nvidia-'])
    assert plan['install'][-2:] == ['nvidia-dkms-580-server=580.178.04-*', module]
    assert plan['missing'] == [] and plan['release'] == [] and module in plan['hold']
    # Negative control: the DKMS package is checked against the version like any driver package.
    lacking = driver_plan('580', packages, available=UBUNTU_MADISON, version='580.178.04')
    assert 'nvidia-dkms-580-server' in lacking['missing'] and module not in lacking['missing']


def test_a_version_from_590_on_replaces_the_branch_wildcard():
    plan = driver_plan('590', ['cuda-drivers'], available=MADISON, version='590.48.01')
    assert plan['install'] == ['cuda-drivers=590.48.01-*'] and plan['missing'] == []
    assert driver_plan('590', ['cuda-drivers'], available=MADISON, version='590.44.01')['missing'] == ['cuda-drivers']


@pytest.mark.parametrize('version, message', [
    ('580', 'expected an exact driver version'),
    ('580.178.04-0ubuntu1', 'expected an exact driver version'),
    ('latest', 'expected an exact driver version'),
    ('595.112.07', 'driver version 595.112.07 is of branch 595, not of branch 580'),
])
def test_a_bad_version_is_refused(version, message):
    with pytest.raises(ValueError, match=message):
        driver_plan('580', UBUNTU_PACKAGES, version=version)


def test_ubuntus_archive_has_no_pinning_package_from_590_on():
    """Ubuntu's nvidia-*-595-server packages keep the branch in their names: no nvidia-driver-pinning-595 to install,
    hold or ask for (noble-updates/multiverse, 595.112.07, 2026-12-04)."""
    packages = ['nvidia-utils-595-server', 'libnvidia-compute-595-server']
    plan = driver_plan('595', packages, holds=[], installed={}, pinning=False, version='595.112.07')
    assert plan['pinned'] is False and plan['pinning_package'] == ''
    assert plan['install'] == ['nvidia-utils-595-server=595.112.07-*', 'libnvidia-compute-595-server=595.112.07-*']
    assert plan['hold'] == packages
    installed = {'nvidia-utils-595-server': '595.112.07-0ubuntu0.24.04.1', 'libnvidia-compute-595-server': '595.112.07-0ubuntu0.24.04.1'}
    assert lock_problems('595', installed=installed, holds=packages, held=packages, pinning=False) == []
    # Negative control: NVIDIA's repository (pinning unset) wants its pinning package.
    assert driver_plan('595', packages)['pinning_package'] == 'nvidia-driver-pinning-595'
    assert lock_problems('595', installed=installed, holds=packages, held=packages) == [
        'the pinning package nvidia-driver-pinning-595 is not installed']
