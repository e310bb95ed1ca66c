# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 17: versions are parsed strictly; floats that lost a trailing zero are refused."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat as c


@pytest.mark.parametrize('value,text', [('12.4', '12.4'), (' 12.10 ', '12.10'), (12, '12'), (13.0, '13.0'),
                                        (580, '580')])
def test_version_text(value, text):
    assert c.version_text(value) == text


@pytest.mark.parametrize('value', [12.1, 12.4, 11.8, 2.1, 535.104, 1e20, float('nan'), True, None, [12]])
def test_version_text_refuses(value):
    with pytest.raises(ValueError):
        c.version_text(value)


def test_float_message_says_to_quote():
    with pytest.raises(ValueError, match=r"12\.10 becomes 12\.1.*Quote it \('12\.1' or '12\.10'\)"):
        c.cuda_min_driver(12.1)


@pytest.mark.parametrize('cuda,parsed', [('12.4', (12, 4, 0)), ('12.2.2', (12, 2, 2)), ('11.4.4', (11, 4, 4)),
                                         ('12.10', (12, 10, 0)), ('13.0', (13, 0, 0))])
def test_parse_cuda(cuda, parsed):
    assert c.parse_cuda(cuda) == parsed


@pytest.mark.parametrize('cuda', ['11.8abc', '12.4.0.0.1', '12.2.91', '12', 'v12.4', '12.4.', '12..4', '', '12.4 beta'])
def test_parse_cuda_refuses(cuda):
    with pytest.raises(ValueError):
        c.parse_cuda(cuda)


@pytest.mark.parametrize('text', ['535.x', '535.104.05.1', 'latest', '5', '12345', '535-', 'x535'])
def test_driver_branch_strict(text):
    with pytest.raises(ValueError, match='expected a driver branch'):
        c.driver_branch(text)


@pytest.mark.parametrize('text,branch', [('535-server-open', 535), ('cuda-drivers-570', 570), ('580-open', 580)])
def test_driver_branch_forms(text, branch):
    assert c.driver_branch(text) == branch


@pytest.mark.parametrize('text', ['535.x', '535.104.05.1', '535-server', 'latest'])
def test_driver_version_strict(text):
    with pytest.raises(ValueError, match='expected a driver version'):
        c.cuda_driver_compatible(text, '12.2')


@pytest.mark.parametrize('text,parsed', [('2.4.1', ((2, 4, 1), None)), ('1.13.1+cu117', ((1, 13, 1), 'cu117')),
                                         ('2.4', ((2, 4), None))])
def test_parse_torch(text, parsed):
    assert c.parse_torch(text) == parsed


@pytest.mark.parametrize('text', ['2.4.1abc', '2', '2.4.1.2', '2.4.1+', 2.1])
def test_parse_torch_refuses(text):
    with pytest.raises(ValueError):
        c.parse_torch(text)


@pytest.mark.parametrize('args', [dict(cuda='11.8abc'), dict(cuda=12.1), dict(cuda='12.4', driver='535.x'),
                                  dict(cuda='12.4', branch='535.x'), dict(torch='2.4.1abc'), dict(cuda='12.2.91')])
def test_check_raises_on_malformed_versions(args):
    with pytest.raises(ValueError):
        c.check(architectures=['Hopper'], **args)
