# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import gpu

FILTERS = gpu.FilterModule().filters()


def test_every_filter_is_exported():
    assert sorted(FILTERS) == ['cuda_driver_compatible', 'cuda_min_driver', 'driver_supports_architecture',
                               'gpu_architecture', 'torch_cuda_variants']


@pytest.mark.parametrize('args,result', [
    (('11.8',), '520.61.05'), (('12.0', 'toolkit'), '525.60.13'), (('11.8', 'minor'), '450.80.02'),
    ((13.0,), '580.65.06'),
])
def test_cuda_min_driver(args, result):
    assert FILTERS['cuda_min_driver'](*args) == result


@pytest.mark.parametrize('args,fragment', [
    (('12.7',), 'not in the table'), (('11.8', 'full'), "mode must be 'toolkit' or 'minor'"),
    (([],), 'expected a version string'), (('10.0', 'minor'), 'no minor version compatibility'),
])
def test_cuda_min_driver_errors(args, fragment):
    with pytest.raises(AnsibleFilterError, match='cuda_min_driver') as e:
        FILTERS['cuda_min_driver'](*args)
    assert fragment in str(e.value)


@pytest.mark.parametrize('args,result', [
    (('535.104.05', '12.2'), True), (('535.104.05', '12.4'), False), (('535.104.05', '12.4', True), True),
    (('470.182.03', '12.0', True), False),
])
def test_cuda_driver_compatible(args, result):
    assert FILTERS['cuda_driver_compatible'](*args) is result


def test_cuda_driver_compatible_errors():
    with pytest.raises(AnsibleFilterError, match='minor must be a boolean'):
        FILTERS['cuda_driver_compatible']('535.104.05', '12.2', 'yes')
    with pytest.raises(AnsibleFilterError, match='expected a version string'):
        FILTERS['cuda_driver_compatible'](None, '12.2')


@pytest.mark.parametrize('value,arch', [('10de:2330', 'Hopper'), ('NVIDIA GeForce RTX 4090', 'Ada Lovelace'),
                                        ('Tesla V100-SXM2-32GB', 'Volta')])
def test_gpu_architecture(value, arch):
    assert FILTERS['gpu_architecture'](value) == arch


@pytest.mark.parametrize('value', [None, 2330, '', ['10de:2330']])
def test_gpu_architecture_errors(value):
    with pytest.raises(AnsibleFilterError, match='expected a PCI id'):
        FILTERS['gpu_architecture'](value)


@pytest.mark.parametrize('args,result', [(('470', 'Hopper'), False), (('535.104.05', 'Hopper'), True),
                                         ((470, 'Kepler'), True), (('590', 'Volta'), False)])
def test_driver_supports_architecture(args, result):
    assert FILTERS['driver_supports_architecture'](*args) is result


@pytest.mark.parametrize('args,fragment', [(('535', 'Fermi'), 'unknown GPU architecture'),
                                           (('latest', 'Hopper'), 'expected a driver branch'),
                                           ((None, 'Hopper'), 'expected a driver branch')])
def test_driver_supports_architecture_errors(args, fragment):
    with pytest.raises(AnsibleFilterError) as e:
        FILTERS['driver_supports_architecture'](*args)
    assert fragment in str(e.value)


def test_torch_cuda_variants():
    assert FILTERS['torch_cuda_variants']('1.13.1') == ['cu116', 'cu117']
    assert 'cu118' not in FILTERS['torch_cuda_variants']('1.13.1+cu118')
    with pytest.raises(AnsibleFilterError, match='torch 0.4.1 is not in the table'):
        FILTERS['torch_cuda_variants']('0.4.1')


@pytest.mark.parametrize('value,arch', [('GP108 [GeForce GT 1030]', 'Pascal'), ('TU116', 'Turing'),
                                        ('10de:1d01', 'Pascal'), ('NVIDIA GeForce GT 1030', 'Pascal')])
def test_gpu_architecture_of_chip_names_and_old_gpus(value, arch):
    assert FILTERS['gpu_architecture'](value) == arch


@pytest.mark.parametrize('value,message', [
    ('10de:ffff', "PCI id '10de:ffff' is not in the table of known NVIDIA GPUs; expected the id of an NVIDIA GPU"),
    ('Matrox G200', "no GPU architecture is known for 'Matrox G200'; expected an NVIDIA product name"),
])
def test_gpu_architecture_unknown_is_an_error(value, message):
    with pytest.raises(AnsibleFilterError) as e:
        FILTERS['gpu_architecture'](value)
    assert message in str(e.value)


# Issue 17: unquoted YAML versions and loose version strings are refused, saying what form is expected.

@pytest.mark.parametrize('name,args,fragment', [
    ('cuda_min_driver', (12.1,), 'got the number 12.1, not a string'),
    ('cuda_min_driver', (12.4,), "Quote it ('12.4' or '12.40')"),
    ('cuda_min_driver', ('11.8abc',), "expected 'X.Y' or 'X.Y.U'"),
    ('cuda_min_driver', ('12.4.0.0.1',), "expected 'X.Y' or 'X.Y.U'"),
    ('cuda_min_driver', ('12.2.91',), '91 is not an update number'),
    ('cuda_min_driver', ('12',), "expected 'X.Y' or 'X.Y.U'"),
    ('cuda_driver_compatible', ('535.x', '12.2'), "expected a driver version such as '535.104.05'"),
    ('cuda_driver_compatible', (535.104, '12.2'), 'got the number 535.104'),
    ('cuda_driver_compatible', ('535.104.05', 12.2), 'got the number 12.2'),
    ('driver_supports_architecture', ('535.x', 'Hopper'), "expected a driver branch such as '535'"),
    ('driver_supports_architecture', (535.5, 'Hopper'), 'got the number 535.5'),
    ('torch_cuda_variants', (2.1,), 'got the number 2.1'),
    ('torch_cuda_variants', ('2.4.1abc',), "expected 'X.Y' or 'X.Y.Z'"),
])
def test_loose_versions_are_refused(name, args, fragment):
    with pytest.raises(AnsibleFilterError, match=name) as e:
        FILTERS[name](*args)
    assert fragment in str(e.value), str(e.value)


def test_cuda_update_numbers_still_count():
    """12.2.2 (Update 2) still counts as an update; 12.2.91 (nvcc's build number) is refused above."""
    assert FILTERS['cuda_min_driver']('12.2.2') == '535.104.05'
    assert FILTERS['cuda_min_driver']('12.2.0') == '535.54.03'


# Issue 29: the filters refuse what the module refuses, with AnsibleFilterError only.

@pytest.mark.parametrize('name,args,fragment', [
    ('cuda_driver_compatible', ('550', '12.4'), 'a branch alone'),
    ('cuda_driver_compatible', (550, '12.4'), 'a branch alone'),
    ('cuda_driver_compatible', ('\u0665\u0665\u0660.54.15', '12.4'), "expected a driver version such as '535.104.05'"),
    ('cuda_driver_compatible', ('550.54.15', '\uff11\uff12.4'), "expected 'X.Y' or 'X.Y.U'"),
    ('cuda_min_driver', ('\u0661\u0662.4',), "expected 'X.Y' or 'X.Y.U'"),
    ('driver_supports_architecture', ('\uff15\uff15\uff10', 'Hopper'), "expected a driver branch such as '535'"),
    ('torch_cuda_variants', ('\u0662.4.1',), "expected 'X.Y' or 'X.Y.Z'"),
])
def test_bare_branches_and_non_ascii_digits_are_refused(name, args, fragment):
    """Issue 29: a bare branch was read as the driver version NNN.0.0; non-ASCII digits were read as numbers."""
    with pytest.raises(AnsibleFilterError, match=name) as e:
        FILTERS[name](*args)
    assert fragment in str(e.value), str(e.value)


@pytest.mark.parametrize('name,args', [
    ('cuda_driver_compatible', ('550.54.15', '1' * 5000)), ('cuda_driver_compatible', (10 ** 5000, '12.4')),
    ('cuda_min_driver', (float('nan'),)), ('cuda_min_driver', ('12.4', ['minor'])),
    ('driver_supports_architecture', ('550', ['Hopper'])), ('driver_supports_architecture', ('550', None)),
    ('torch_cuda_variants', ('2.' + '4' * 5000,)), ('gpu_architecture', ('10de:' + 'f' * 5000,)),
], ids=lambda v: v if isinstance(v, str) else None)
def test_junk_gets_a_short_filter_error(name, args):
    with pytest.raises(AnsibleFilterError, match=name) as e:
        FILTERS[name](*args)
    assert len(str(e.value)) < 600
