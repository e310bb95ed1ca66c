# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 52: a GPU's nominal memory bandwidth comes from the row that names its whole model, never from a shorter
model's row that its name happens to contain (the RTX 3090 Ti was judged with the RTX 3090's 936 GB/s)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _acceptance
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_lookup

lookup = _gpu_lookup.memory_bandwidth_gbps
EXAMPLES = [row[2] for row in _data_gpu.MEMORY_BANDWIDTH_GBPS]

# Pairs of one family whose names contain one another, as nvidia-smi prints them, with each one's figure (None: no
# row names that model, so no figure). The figures are the table's own, each sourced there.
FAMILIES = [
    ('NVIDIA GeForce RTX 3090', 936), ('NVIDIA GeForce RTX 3090 Ti', None),
    ('NVIDIA GeForce RTX 4090', 1008), ('NVIDIA GeForce RTX 4090 D', None),
    ('NVIDIA GeForce RTX 4090 Laptop GPU', None),
    ('NVIDIA A100-SXM4-80GB', 2039), ('NVIDIA A100-SXM4-40GB', 1555), ('NVIDIA A100-PCIE-40GB', 1555),
    ('NVIDIA A100 80GB PCIe', 1935), ('NVIDIA A100-PCIE-80GB', 1935), ('NVIDIA A800-SXM4-80GB', 2039),
    ('NVIDIA A800 40GB Active', None), ('NVIDIA A100X', None),
    ('NVIDIA H100 80GB HBM3', 3350), ('NVIDIA H100 PCIe', 2000), ('NVIDIA H100 NVL', 3900),
    ('NVIDIA H800', 3350), ('NVIDIA H800 PCIe', 2000),
    ('NVIDIA H200', 4800), ('NVIDIA H200 NVL', 4800), ('NVIDIA GH200 480GB', 4000), ('NVIDIA GH200 144G HBM3e', 4900),
    ('NVIDIA B200', 8000), ('NVIDIA GB200', 8000), ('NVIDIA B200A', None),
    ('NVIDIA A10', 600), ('NVIDIA A10G', 600), ('NVIDIA L4', 300), ('NVIDIA L40', 864), ('NVIDIA L40S', 864),
    ('Tesla V100-SXM2-32GB', 900), ('Tesla V100-PCIE-16GB', 900), ('Tesla V100S-PCIE-32GB', 1134),
    ('Tesla P100-PCIE-12GB', 549), ('Tesla P100-PCIE-16GB', 732), ('Tesla P100-SXM2-16GB', 732),
    ('GeForce GTX 1660 Ti', 288), ('NVIDIA GeForce GTX 1660 SUPER', None), ('NVIDIA GeForce GTX 1660', None),
    ('GeForce GT 1030', 48), ('Tesla K80', 240),
]


@pytest.mark.parametrize('name,gbps', FAMILIES, ids=[n for n, g in FAMILIES])
def test_each_model_gets_its_own_figure_or_none(name, gbps):
    assert lookup(name) == gbps
    assert _acceptance.nominal_bandwidth(name) == ((float(gbps), 'datasheet') if gbps else (None, None))


def test_the_rtx_3090_ti_is_an_unknown_model_for_the_acceptance_test():
    """The issue's reproduction, through the verdict: the 3090's figure is not the 3090 Ti's."""
    gpu = {'index': 0, 'name': 'NVIDIA GeForce RTX 3090 Ti', 'pci_bus_id': '00000000:01:00.0'}
    verdict = _acceptance.bandwidth_verdict(gpu, 'bandwidth_gbps=800\n', 0.85)
    assert verdict['nominal_gbps'] is None and not verdict['ok']
    assert 'no nominal figure is known for this model' in verdict['message']
    assert _acceptance.bandwidth_verdict(gpu, 'bandwidth_gbps=800\n', 0.85, [['RTX 3090 Ti', 1008]])['minimum_gbps'] \
        == pytest.approx(856.8)


# What makes another model when it follows a model's name (a suffix of NVIDIA's product names), or joins its number.
OTHER_MODEL = [' Ti', ' SUPER', ' D', ' Laptop GPU', ' Max-Q', ' Active', ' Ti SUPER', 'X', 'A', 'S', '5', ' 2']


@pytest.mark.parametrize('suffix', OTHER_MODEL)
@pytest.mark.parametrize('example', EXAMPLES)
def test_a_longer_model_name_is_never_a_shorter_models(example, suffix):
    """The class: every row's own example, with what would make it another model after it, gets no figure from the
    table (unless a row names that longer model itself: none does)."""
    assert lookup(example + suffix) is None, example + suffix


# What may follow a model's name and leave it the same model (memory size and type, form factor).
SAME_MODEL = [' 80GB', '-80GB', ' HBM3', ' HBM3e', ' GDDR6X', ' PCIe', '-PCIE', '-SXM4', ' NVL', ' ', ' 94GB HBM2e']


@pytest.mark.parametrize('suffix', SAME_MODEL)
def test_memory_and_form_factor_after_a_model_keep_it(suffix):
    assert lookup('NVIDIA H200' + suffix) == 4800
    assert lookup('NVIDIA L40S' + suffix) == 864


def longest_matches(name):
    """The figures of the rows whose match for ``name`` is the longest that names the model (the test's own reading
    of the rule, from the regular expressions and the variant tail)."""
    found = []
    for pattern, gbps, _example in _data_gpu.MEMORY_BANDWIDTH_GBPS:
        for match in re.finditer(pattern, name):
            if _gpu_lookup._VARIANT_TAIL_RE.match(name, match.end()):
                found.append((match.end() - match.start(), gbps))
    top = max([length for length, gbps in found] or [None])
    return set(gbps for length, gbps in found if length == top)


NAMES = [n for n, g in FAMILIES] + EXAMPLES
# Two rows match this name equally long with different figures; the first row (80GB PCIe) wins.
TIES = ['NVIDIA A100-PCIE-80GB']


def test_the_most_specific_row_wins_in_any_table_order():
    """Longest match, not first match: the figures do not depend on the order of the rows (but for the one tie)."""
    assert [n for n in NAMES if len(longest_matches(n)) > 1] == TIES
    names = [n for n in NAMES if n not in TIES]
    expected = [lookup(n) for n in names]
    assert all(lookup(n) in (longest_matches(n) or {None}) for n in names)
    rows = list(_data_gpu.MEMORY_BANDWIDTH_GBPS)
    shuffler = random.Random(52)
    for _round in range(20):
        shuffler.shuffle(rows)
        assert [lookup(n, rows) for n in names] == expected
    rows.reverse()
    assert [lookup(n, rows) for n in names] == expected
    assert lookup('NVIDIA A100-PCIE-80GB') == 1935


def test_negative_control_the_first_substring_match_takes_the_3090s_figure():
    """The old lookup (the first row whose pattern is found anywhere in the name) fails the tests above."""
    def first_match(name):
        for pattern, gbps, _example in _data_gpu.MEMORY_BANDWIDTH_GBPS:
            if re.search(pattern, name):
                return gbps
        return None
    assert first_match('NVIDIA GeForce RTX 3090 Ti') == 936
    wrong = [(name, gbps) for name, gbps in FAMILIES if first_match(name) != gbps]
    assert ('NVIDIA GeForce RTX 3090 Ti', None) in wrong and ('NVIDIA GeForce RTX 4090 D', None) in wrong
    assert sum(1 for e in EXAMPLES for s in OTHER_MODEL if first_match(e + s) is not None) > len(EXAMPLES)


@pytest.mark.parametrize('name', [None, 5, b'NVIDIA H200', '', '   ', ['NVIDIA H200'], 'nvidia h200'])
def test_what_is_no_name_has_no_figure(name):
    assert lookup(name) is None


JUNK = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.binary(max_size=8), st.text(max_size=60),
                 st.lists(st.text(max_size=5), max_size=2),
                 st.builds(lambda name, tail: name + tail, st.sampled_from(EXAMPLES),
                           st.text(st.characters(codec='utf-8'), max_size=12)))


@settings(max_examples=300)
@given(name=JUNK)
def test_any_value_gets_a_figure_of_the_table_or_none(name):
    """Never raises; a figure is always one of the table's, and only for text that holds the row's match."""
    gbps = lookup(name)
    assert gbps is None or (isinstance(name, str) and gbps in set(row[1] for row in _data_gpu.MEMORY_BANDWIDTH_GBPS))
