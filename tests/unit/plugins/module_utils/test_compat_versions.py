# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 17: versions are parsed strictly; floats that lost a trailing zero are refused."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_torch
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_versions
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_lookup


@pytest.mark.parametrize('value,text', [('12.4', '12.4'), (' 12.10 ', '12.10'), (12, '12'), (13.0, '13.0'),
                                        (580, '580')])
def test_version_text(value, text):
    assert _compat_versions.version_text(value) == text


@pytest.mark.parametrize('value', [12.1, 12.4, 11.8, 2.1, 535.104, 1e20, float('nan'), True, None, [12]])
def test_version_text_refuses(value):
    with pytest.raises(ValueError):
        _compat_versions.version_text(value)


def test_float_message_says_to_quote():
    with pytest.raises(ValueError, match=r"12\.10 becomes 12\.1.*Quote it \('12\.1' or '12\.10'\)"):
        _compat_cuda.cuda_min_driver(12.1)


@pytest.mark.parametrize('cuda,parsed', [('12.4', (12, 4, 0)), ('12.2.2', (12, 2, 2)), ('11.4.4', (11, 4, 4)),
                                         ('12.10', (12, 10, 0)), ('13.0', (13, 0, 0))])
def test_parse_cuda(cuda, parsed):
    assert _compat_versions.parse_cuda(cuda) == parsed


@pytest.mark.parametrize('cuda', ['11.8abc', '12.4.0.0.1', '12.2.91', '12', 'v12.4', '12.4.', '12..4', '', '12.4 beta'])
def test_parse_cuda_refuses(cuda):
    with pytest.raises(ValueError):
        _compat_versions.parse_cuda(cuda)


@pytest.mark.parametrize('text', ['535.x', '535.104.05.1', 'latest', '5', '12345', '535-', 'x535'])
def test_driver_branch_strict(text):
    with pytest.raises(ValueError, match='expected a driver branch'):
        _compat_versions.driver_branch(text)


@pytest.mark.parametrize('text,branch', [('535-server-open', 535), ('cuda-drivers-570', 570), ('580-open', 580)])
def test_driver_branch_forms(text, branch):
    assert _compat_versions.driver_branch(text) == branch


@pytest.mark.parametrize('text', ['535.x', '535.104.05.1', '535-server', 'latest'])
def test_driver_version_strict(text):
    with pytest.raises(ValueError, match='expected a driver version'):
        _compat_cuda.cuda_driver_compatible(text, '12.2')


@pytest.mark.parametrize('text,parsed', [('2.4.1', ((2, 4, 1), None)), ('1.13.1+cu117', ((1, 13, 1), 'cu117')),
                                         ('2.4', ((2, 4), None))])
def test_parse_torch(text, parsed):
    assert _compat_versions.parse_torch(text) == parsed


@pytest.mark.parametrize('text', ['2.4.1abc', '2', '2.4.1.2', '2.4.1+', 2.1])
def test_parse_torch_refuses(text):
    with pytest.raises(ValueError):
        _compat_versions.parse_torch(text)


@pytest.mark.parametrize('args', [dict(cuda='11.8abc'), dict(cuda=12.1), dict(cuda='12.4', driver='535.x'),
                                  dict(cuda='12.4', branch='535.x'), dict(torch='2.4.1abc'), dict(cuda='12.2.91')])
def test_check_raises_on_malformed_versions(args):
    with pytest.raises(ValueError):
        _compat.check(architectures=['Hopper'], **args)


# Issue 29: contradictory inputs, versions outside the documented forms and non-ASCII digits are refused.

ARABIC_550 = '\u0665\u0665\u0660'             # '550' in Arabic-Indic digits
FULLWIDTH_550 = '\uff15\uff15\uff10'          # '550' in fullwidth digits


def test_driver_version_of_another_branch_than_the_branch_is_refused():
    """Issue 29: branch 470 with driver 550.54.15 was judged compatible (by the version), the branch ignored."""
    with pytest.raises(ValueError) as e:
        _compat.check(cuda='12.4', driver='550.54.15', branch='470', architectures=['Hopper'])
    assert "'550.54.15'" in str(e.value) and "'470'" in str(e.value)
    assert 'contradict' in str(e.value)


@pytest.mark.parametrize('branch', ['550', '550-server', 'nvidia-driver-550-open', 550, '550.54.15'])
def test_driver_version_and_branch_of_the_same_branch_agree(branch):
    assert _compat.check(cuda='12.4', driver='550.54.15', branch=branch, architectures=['Hopper'])['mode'] == 'full'


@pytest.mark.parametrize('driver', ['550', 550, '550.0.0.1', '550.1234', '550.54.1234', '5500.54', '550.54.', '.550'])
def test_bare_branch_and_other_forms_are_no_driver_version(driver):
    """Issue 29: driver version '550' (documented: NNN.NN or NNN.NN.NN) was read as 550.0.0."""
    with pytest.raises(ValueError, match="expected a driver version such as '535.104.05'"):
        _compat.check(cuda='12.4', driver=driver)
    with pytest.raises(ValueError, match='a branch alone'):
        _compat_cuda.cuda_driver_compatible(driver, '12.4')


@pytest.mark.parametrize('driver,parsed', [('535.104.05', (535, 104, 5)), ('390.116', (390, 116)),
                                           ('540.4.0', (540, 4, 0)), (' 570.86.15 ', (570, 86, 15))])
def test_driver_version_forms(driver, parsed):
    assert _compat_versions.parse_driver_version(driver) == parsed


@pytest.mark.parametrize('call', [
    lambda: _compat_versions.driver_branch(ARABIC_550),
    lambda: _compat_versions.driver_branch(FULLWIDTH_550),
    lambda: _compat_versions.driver_branch('nvidia-driver-%s-open' % ARABIC_550),
    lambda: _compat_versions.parse_driver_version(ARABIC_550 + '.54.15'),
    lambda: _compat_versions.parse_driver_version('550.\u0665\u0664.15'),
    lambda: _compat_versions.parse_cuda('\u0661\u0662.4'),
    lambda: _compat_versions.parse_cuda('12.\uff14'),
    lambda: _compat_versions.parse_version('\uff11\uff12.4'),
    lambda: _compat_versions.parse_torch('\u0662.4.1'),
    lambda: _compat_torch.tag_cuda('cu\u0661\u0661\u0668'),
    lambda: _compat.check(cuda='12.4', driver=FULLWIDTH_550 + '.54.15'),
    lambda: _compat.check(cuda='12.4', branch=ARABIC_550),
    lambda: _compat_cuda.cuda_min_driver('\u0661\u0662.4'),
])
def test_non_ascii_digits_are_refused(call):
    """Issue 29: int(), str.isdigit() and a plain \\d read Arabic-Indic and fullwidth digits as numbers."""
    with pytest.raises(ValueError, match='expected'):
        call()


def test_non_ascii_digits_name_no_chip():
    assert _gpu_lookup.chip_architecture('GP\u0661\u0660\u0668 [GeForce GT 1030]') is None
    assert _gpu_lookup.chip_architecture('GP108 [GeForce GT 1030]') == 'Pascal'


@pytest.mark.parametrize('call', [
    lambda: _compat_versions.parse_version('1' * 5000),
    lambda: _compat_versions.parse_version('12.' + '4' * 5000),
    lambda: _compat_versions.parse_cuda('12.' + '4' * 5000),
    lambda: _compat_versions.parse_torch('2.' + '4' * 5000),
    lambda: _compat_versions.version_text(10 ** 5000),
    lambda: _compat_versions.driver_branch(10 ** 5000),
    lambda: _compat_versions.version_str((10 ** 5000,)),
    lambda: _compat_versions.parse_version((1, 'x')),
    lambda: _compat_versions.compare_versions(('12', 4), '12.4'),
])
def test_huge_numbers_are_refused_with_the_module_error(call):
    """Issue 29: int() of over 4300 digits raised Python's own ValueError, not the module's."""
    with pytest.raises(_compat_versions.CompatError):
        call()


@pytest.mark.parametrize('value', [float('inf'), float('-inf'), float('nan'), -1.0, -3, 1e300])
def test_numbers_that_are_no_version(value):
    with pytest.raises(_compat_versions.CompatError, match='version'):
        _compat_versions.version_text(value)


def test_error_messages_do_not_echo_megabytes():
    with pytest.raises(_compat_versions.CompatError) as e:
        _compat_versions.parse_cuda('x' * 10 ** 6)
    assert len(str(e.value)) < 400


@pytest.mark.parametrize('architectures', [5, 'Hopper', {'Hopper': 1}, object()])
def test_architectures_must_be_a_list(architectures):
    with pytest.raises(_compat_versions.CompatError, match='architectures: expected a list'):
        _compat.check(cuda='12.4', architectures=architectures)
    with pytest.raises(_compat_versions.CompatError, match='architectures: expected a list'):
        _compat.suggest_branch('12.4', architectures)


def test_word_reads_only_string_names():
    assert _compat.word('set {driver_branch}', {'driver_branch': 5}) == 'set driver_branch'
    assert _compat.word('set {driver_branch}', {'driver_branch': 'nvidia_driver_branch'}) == 'set nvidia_driver_branch'
    with pytest.raises(_compat_versions.CompatError):
        _compat.word(None)
    with pytest.raises(_compat_versions.CompatError):
        _compat.word('x', ['driver_branch'])
