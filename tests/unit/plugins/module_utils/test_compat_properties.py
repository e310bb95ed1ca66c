# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 29, property-based: every public function of _compat answers or raises CompatError; the gpu filters
answer or raise AnsibleFilterError. Arguments are random strings, ints, floats, None, lists and dicts, and
version-like strings with junk: thousands of digits, non-ASCII digits, trailing newlines.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

import pytest

from hypothesis import given, settings, strategies as st

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import gpu as gpu_filters
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_torch
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_versions
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_lookup

# The compatibility modules (issue 54 split _compat.py by concern) and the exact lookups they ask.
COMPAT_MODULES = (_compat_versions, _compat_cuda, _compat_gpu, _compat_torch, _compat, _gpu_lookup)


def _own_functions(module):
    return dict((name, value) for name, value in vars(module).items()
                if callable(value) and not name.startswith('_') and not isinstance(value, type)
                and getattr(value, '__module__', None) == module.__name__)


def public_function(name):
    """The public function NAME of the compatibility modules, from the module that defines it."""
    [function] = [f for m in COMPAT_MODULES for n, f in _own_functions(m).items() if n == name]
    return function


SETTINGS = settings(max_examples=150, deadline=None, database=None)

# Digits that int() and str.isdigit() accept and that no version is written with.
FOREIGN_DIGITS = ['\u0660', '\u0665', '\u06f5', '\u0966', '\uff15', '\uff10', '\U0001d7d3']
KNOWN_BRANCHES = ['470', '525', '535', '550', '570', '580', '590']

version_like = st.one_of(
    st.from_regex(r'[0-9]{1,4}(\.[0-9]{1,4}){0,3}', fullmatch=True),
    st.sampled_from(['12.4', '12.2.2', '11.8', '13.0', '535.104.05', '550.54.15', '390.116', '580', '550-server',
                     'nvidia-driver-570-open', '2.4.1', '1.13.1+cu117', 'cu118', '10de:2330', 'Hopper', 'GP108']),
    st.builds(lambda n: '9' * n, st.integers(4290, 6000)),
    st.builds(lambda n: '12.' + '4' * n, st.integers(4290, 6000)),
    st.builds(lambda v, d: v.replace('5', d), st.sampled_from(['550', '550.54.15', '12.5', '2.5.1', 'cu125']),
              st.sampled_from(FOREIGN_DIGITS)),
    st.builds(lambda v, tail: v + tail, st.sampled_from(['12.4', '550.54.15', '535', '2.4.1']),
              st.sampled_from(['\n', ' ', '\x00', '.', '..', '-', '+', '+cu', 'abc', '\u0665'])),
)
# Ints of over 4300 digits are built from small draws: Hypothesis could not print the draw itself.
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.builds(lambda n: 10 ** n, st.integers(4300, 4400)),
                    st.floats(), st.text(max_size=20), version_like, st.binary(max_size=8))
junk = st.one_of(scalars, st.lists(scalars, max_size=3), st.tuples(scalars, scalars),
                 st.tuples(st.integers(), st.integers()), st.dictionaries(st.text(max_size=5), scalars, max_size=2))
architectures = st.one_of(junk, st.lists(st.one_of(st.sampled_from(_compat_gpu.ARCHITECTURE_ORDER + ('ada', 'Rubin')), scalars),
                                         max_size=4))

# Every public function, with how many arguments it takes (keywords are drawn separately for check()).
PUBLIC = [
    ('version_text', 1), ('version_text', 3), ('parse_version', 1), ('parse_cuda', 1), ('parse_driver_version', 1),
    ('version_str', 1), ('compare_versions', 2), ('version_ge', 2), ('driver_branch', 1), ('cuda_major_minor', 1),
    ('cuda_min_driver', 1), ('cuda_min_driver', 2), ('driver_cuda_version', 1), ('cuda_driver_mode', 2),
    ('cuda_driver_compatible', 2), ('cuda_driver_compatible', 3), ('canonical_architecture', 1),
    ('architecture_info', 1), ('driver_supports_architecture', 2), ('branch_architecture_problems', 2),
    ('architectures_for_branch', 1), ('normalize_pci_id', 1), ('pci_id_info', 1), ('chip_architecture', 1),
    ('product_architecture', 1), ('gpu_architecture', 1), ('parse_torch', 1), ('torch_cuda_variants', 1),
    ('cuda_tag', 1), ('tag_cuda', 1), ('torch_missing_architectures', 2), ('word', 1), ('word', 2),
    ('suggest_branch', 4), ('check', 8), ('known_cuda_versions', 0), ('short_repr', 1),
    ('unknown_branch_problem', 1), ('branch_kernel_module_problem', 2),
]


def test_every_public_function_is_exercised():
    # The compatibility modules' own functions and the exact lookups of _gpu_lookup but memory_bandwidth_gbps (below).
    public = set(name for module in COMPAT_MODULES for name in _own_functions(module)) - {'memory_bandwidth_gbps'}
    # memory_bandwidth_gbps is no _compat question (the acceptance test's): it is fuzzed in test_gpu_lookup.py.
    assert set(name for name, value in vars(_gpu_lookup).items()
               if callable(value) and getattr(value, '__module__', None) == _gpu_lookup.__name__) - \
        {'memory_bandwidth_gbps'} <= public
    assert public == set(name for name, _n in PUBLIC)


# version_text's ``what`` and ``form`` are words the caller chose for its messages: any text, of a sensible length.
ARGUMENTS = {('version_text', 3): [junk, st.text(max_size=40), st.text(max_size=80)]}


def _answers_or_refuses(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except _compat_versions.CompatError as e:
        assert len(str(e)) < 1000, str(e)[:200]
        return e


@pytest.mark.parametrize('name,arity', PUBLIC, ids=['%s/%d' % p for p in PUBLIC])
def test_public_function_answers_or_raises_compat_error(name, arity):
    @settings(SETTINGS, max_examples=60)
    @given(st.tuples(*ARGUMENTS.get((name, arity), [junk] * arity)))
    def run(args):
        _answers_or_refuses(public_function(name), *args)
    run()


@SETTINGS
@given(st.fixed_dictionaries({}, optional=dict(
    cuda=st.one_of(version_like, junk), driver=st.one_of(version_like, junk), branch=st.one_of(version_like, junk),
    architectures=architectures, kernel_module=st.one_of(st.sampled_from(['open', 'proprietary']), junk),
    torch=st.one_of(version_like, junk), allow_minor=junk, allow_unknown_branch=junk)))
def test_check_answers_in_shape_or_raises_compat_error(kwargs):
    result = _answers_or_refuses(_compat.check, **kwargs)
    if isinstance(result, _compat_versions.CompatError):
        return
    assert sorted(result) == ['mode', 'notes', 'ok', 'problems', 'suggested_driver_branch']
    assert result['ok'] is (not result['problems'])
    assert result['mode'] in (None, 'full', 'minor', 'none')
    for problem in result['problems']:
        assert problem['subject'] in _compat.SUBJECTS
        assert isinstance(problem['message'], str) and isinstance(_compat.word(problem['fix'], {}), str)
    assert all(isinstance(n, str) for n in result['notes'])


driver_versions = st.builds(lambda b, m, p: '%s.%d%s' % (b, m, '' if p is None else '.%02d' % p),
                            st.sampled_from(KNOWN_BRANCHES), st.integers(0, 999), st.one_of(st.none(), st.integers(0, 99)))
branches = st.builds(lambda b, pre, post: pre + b + post, st.sampled_from(KNOWN_BRANCHES),
                     st.sampled_from(['', 'nvidia-driver-', 'cuda-drivers-']), st.sampled_from(['', '-server', '-open']))


@SETTINGS
@given(driver_versions, branches, st.sampled_from(['11.8', '12.4', '13.0']))
def test_a_driver_version_and_a_branch_agree_or_are_refused(driver, branch, cuda):
    """Issue 29: a driver version of another branch than the branch is refused, naming both; the same branch is judged."""
    same = driver[:3] == re.search(r'[0-9]{3}', branch).group(0)
    try:
        result = _compat.check(cuda=cuda, driver=driver, branch=branch, architectures=['Hopper'])
    except _compat_versions.CompatError as e:
        assert not same, str(e)
        assert repr(driver) in str(e) and repr(branch) in str(e)
    else:
        assert same
        assert result['mode'] == _compat.check(cuda=cuda, driver=driver, architectures=['Hopper'])['mode']


DRIVER_VERSION_FORM = re.compile(r'[0-9]{3}\.[0-9]{1,3}(\.[0-9]{1,3})?\Z')


@SETTINGS
@given(st.one_of(version_like, st.text(max_size=12)))
def test_only_the_documented_driver_version_form_is_read(text):
    """NNN.NN or NNN.NN.NN in ASCII digits (surrounding blanks aside): nothing else, a bare branch neither."""
    result = _answers_or_refuses(_compat_versions.parse_driver_version, text)
    assert isinstance(result, _compat_versions.CompatError) is not bool(DRIVER_VERSION_FORM.match(text.strip()))


@SETTINGS
@given(version_like, st.sampled_from(['parse_version', 'parse_cuda', 'parse_driver_version', 'driver_branch',
                                      'parse_torch', 'tag_cuda']))
def test_no_foreign_digit_is_read(text, name):
    result = _answers_or_refuses(public_function(name), text)
    if any(ch.isdigit() and not ch.isascii() for ch in text):
        assert isinstance(result, _compat_versions.CompatError), (name, text, result)


FILTERS = gpu_filters.FilterModule().filters()
FILTER_ARITY = {'cuda_min_driver': (1, 2), 'cuda_driver_compatible': (2, 3), 'gpu_architecture': (1,),
                'driver_supports_architecture': (2,), 'torch_cuda_variants': (1,)}


@pytest.mark.parametrize('name', sorted(FILTERS))
def test_filter_answers_or_raises_ansible_filter_error(name):
    assert sorted(FILTER_ARITY) == sorted(FILTERS)

    @settings(SETTINGS, max_examples=80)
    @given(st.sampled_from(FILTER_ARITY[name]).flatmap(
        lambda n: st.lists(st.one_of(version_like, junk, st.sampled_from(_compat_gpu.ARCHITECTURE_ORDER)), min_size=n,
                           max_size=n)))
    def run(args):
        try:
            FILTERS[name](*args)
        except AnsibleFilterError as e:
            assert str(e).startswith(name), str(e)[:200]
            assert len(str(e)) < 1200, str(e)[:200]
    run()
