# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 29, property-based: whatever nvidia-smi prints, the reader answers with a report or NvidiaSmiParseError.

The recorded captures are mutated: field texts replaced with random strings, digit strings of thousands of digits,
inf/nan, non-ASCII digits; elements removed, duplicated and moved under other elements. Every report that comes
back must hold numbers-or-None where numbers belong (finite, never bool), text-or-None, flags-or-None, and must
go through gpu_facts' and gpu_health's own logic (_facts.from_report, _health.evaluate) and JSON without raising.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json
import math
import os
import xml.etree.ElementTree as ET

from hypothesis import HealthCheck, given, settings, strategies as st

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _facts
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi as nvsmi
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path, read_fixture

CAPTURES = sorted(f for f in os.listdir(fixture_path('nvidia_smi')) if f.endswith('.xml'))
TEXTS = dict((name, read_fixture('nvidia_smi', name)) for name in CAPTURES)
TREES = dict((name, ET.fromstring(nvsmi.strip_doctype(text))) for name, text in TEXTS.items())

SETTINGS = settings(max_examples=120, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

NUMBERS = ('minor_number', 'pcie_gen_current', 'pcie_gen_max', 'pcie_width_current', 'pcie_width_max',
           'mig_device_count', 'memory_total_mib', 'memory_used_mib', 'utilization_gpu_pct', 'temperature_c',
           'temperature_slowdown_c', 'temperature_shutdown_c', 'temperature_tlimit_c', 'temperature_slowdown_tlimit_c',
           'temperature_shutdown_tlimit_c', 'temperature_slowdown_margin_c', 'memory_temperature_c', 'power_draw_w',
           'power_limit_w', 'power_limit_max_w')
TEXT_FIELDS = ('name', 'brand', 'architecture', 'uuid', 'serial', 'vbios_version', 'pci_bus_id', 'pci_device_id',
               'pci_sub_system_id', 'recovery_action', 'temperature_threshold_source')
FLAGS = ('persistence_mode', 'mig_mode', 'mig_mode_pending', 'ecc_mode', 'ecc_mode_pending', 'reset_required')
# Sums and differences of two or four readings of at most 2**64 each.
BOUND = 2 ** 67

# Text that an XML document can carry (no control characters, no lone surrogates).
xml_chars = st.characters(blacklist_categories=('Cs', 'Cc'))
units = st.sampled_from(['', ' C', ' W', ' MiB', ' %', 'x', ' MHz', ' bank(s)'])
junk_text = st.one_of(
    st.text(xml_chars, max_size=24),
    st.builds(lambda n, u: '9' * n + u, st.integers(4290, 6000), units),                  # int() digit limit
    st.builds(lambda n, u: '9' * n + '.5' + u, st.integers(300, 400), units),             # float() -> inf
    st.builds(lambda n, u: '1' * n + u, st.integers(15, 25), units),                      # around 2**64
    st.builds(lambda f, u: repr(f) + u, st.floats(), units),                               # inf, nan, 1e+300 ...
    st.builds(lambda i, u: str(i) + u, st.integers(min_value=-2 ** 70, max_value=2 ** 70), units),
    st.sampled_from(['inf', '-inf W', 'nan C', 'NaN', 'Infinity', '1e999', '1e999 C', '-1e999 W', '\u0663\u0665 C',
                     '\uff13\uff15 C', '3\u0665 C', '\u0968\u0966 W', 'N/A', '[N/A]', '[Not Supported]', 'Enabled',
                     'Disabled', 'Active', '0x233010DE', '00000000:07:00.0', '+5', '-0', ' 7 ', '1_000', '0x10',
                     '18446744073709551616', '18446744073709551617 MiB']),
)


def _elements(tree):
    return list(tree.iter())


@st.composite
def mutated_report(draw):
    """A recorded capture with a few elements changed, removed, duplicated or moved, serialized again."""
    name = draw(st.sampled_from(CAPTURES))
    tree = copy.deepcopy(TREES[name])
    for _step in range(draw(st.integers(1, 8))):
        elements = _elements(tree)
        target = elements[draw(st.integers(0, len(elements) - 1))]
        action = draw(st.sampled_from(['text', 'text', 'text', 'remove', 'duplicate', 'move', 'attr', 'children']))
        parents = dict((child, parent) for parent in tree.iter() for child in parent)
        if action == 'text':
            target.text = draw(junk_text)
        elif action == 'attr':
            target.set('id', draw(junk_text))
        elif action == 'children':
            # A leaf that grows children, or a block that loses them: text where a block was.
            for child in list(target):
                target.remove(child)
            target.text = draw(junk_text)
        elif target in parents:
            parent = parents[target]
            if action == 'remove':
                parent.remove(target)
            elif action == 'duplicate':
                parent.insert(list(parent).index(target), copy.deepcopy(target))
            else:
                # Wrong nesting: the element moves under another one (never under itself or its descendants).
                inside = set(target.iter())
                hosts = [el for el in _elements(tree) if el not in inside]
                parent.remove(target)
                hosts[draw(st.integers(0, len(hosts) - 1))].append(target)
    return ET.tostring(tree, encoding='unicode')


def _check_report(report):
    assert isinstance(report, dict)
    assert sorted(report) == ['attached_gpus', 'cuda_version', 'driver_version', 'gpus', 'timestamp']
    _number_or_none(report['attached_gpus'])
    for key in ('timestamp', 'driver_version', 'cuda_version'):
        assert report[key] is None or isinstance(report[key], str)
    assert isinstance(report['gpus'], list)
    for gpu in report['gpus']:
        for key in NUMBERS:
            _number_or_none(gpu[key], key)
        for key in TEXT_FIELDS:
            assert gpu[key] is None or isinstance(gpu[key], str), (key, gpu[key])
        for key in FLAGS:
            assert gpu[key] is None or isinstance(gpu[key], bool), (key, gpu[key])
        for block in ('volatile', 'aggregate'):
            for key in ('corrected', 'uncorrected'):
                _number_or_none(gpu['ecc_errors'][block][key], key)
        for block in ('retired_pages', 'remapped_rows'):
            for key, v in (gpu[block] or {}).items():
                if key in ('pending', 'failure'):
                    assert v is None or isinstance(v, bool), (block, key, v)
                else:
                    _number_or_none(v, (block, key))
        reasons = gpu['clock_event_reasons']
        assert reasons is None or all(isinstance(r, str) for r in reasons)


def _number_or_none(v, key=None):
    if v is None:
        return
    assert isinstance(v, (int, float)) and not isinstance(v, bool), (key, v)
    assert math.isfinite(v) and abs(v) <= BOUND, (key, v)


def _through_the_modules(report):
    """What gpu_facts and gpu_health do with a report: facts, checks, and the JSON they return."""
    facts = _facts.from_report(report, [], pci_ids={})
    result = _health.evaluate(facts, expected_gpu_count=len(report['gpus']))
    assert result['status'] in ('ok', 'warn', 'fail')
    for check in result['checks']:
        assert isinstance(check['message'], str)
    _health.summary(dict(result, nvidia=facts))
    json.dumps(dict(facts=facts, checks=result['checks']), allow_nan=False)


def _parse_or_refuse(text):
    try:
        report = nvsmi.parse(text)
    except nvsmi.NvidiaSmiParseError:
        return None
    _check_report(report)
    _through_the_modules(report)
    return report


@SETTINGS
@given(mutated_report())
def test_mutated_captures_give_numbers_or_none(text):
    report = nvsmi.parse(text)         # well-formed XML with the right root: always a report, never an error
    _check_report(report)
    _through_the_modules(report)


@SETTINGS
@given(st.sampled_from(CAPTURES), st.data())
def test_raw_text_damage_gives_a_report_or_the_parse_error(name, data):
    """Bytes cut, inserted or replaced anywhere in the raw capture: a report or NvidiaSmiParseError."""
    text = TEXTS[name]
    for _step in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 40))
        text = text[:pos] + data.draw(st.one_of(junk_text, st.text(max_size=8), st.sampled_from(
            ['<', '>', '&', '&lol;', '<!ENTITY x "y">', '<!DOCTYPE x>', ']]>', '<![CDATA[', '</gpu>', '<gpu>',
             '\x00', '\ud800', '<?xml version="1.0"?>']))) + text[pos + cut:]
    _parse_or_refuse(data.draw(st.sampled_from([text, text.encode('utf-8', 'surrogatepass')])))


TAGS = ['nvidia_smi_log', 'gpu', 'driver_version', 'cuda_version', 'attached_gpus', 'pci', 'pci_bus_id', 'pci_device_id',
        'pci_gpu_link_info', 'pcie_gen', 'current_link_gen', 'link_widths', 'current_link_width', 'max_link_width',
        'temperature', 'gpu_temp', 'gpu_temp_slow_threshold', 'gpu_temp_tlimit', 'gpu_temp_slow_tlimit_threshold',
        'gpu_power_readings', 'power_readings', 'power_draw', 'instant_power_draw', 'current_power_limit',
        'fb_memory_usage', 'total', 'used', 'ecc_errors', 'volatile', 'aggregate', 'single_bit', 'double_bit',
        'sram_correctable', 'dram_uncorrectable', 'retired_pages', 'pending_retirement', 'remapped_rows',
        'remapped_row_corr', 'remapped_row_pending', 'clocks_event_reasons', 'clocks_event_reason_hw_slowdown',
        'mig_mode', 'current_mig', 'mig_devices', 'mig_device', 'persistence_mode', 'gpu_recovery_action',
        'gpu_reset_status', 'reset_required', 'product_name', 'product_architecture', 'minor_number', 'x']


def _element(tag, text, children):
    el = ET.Element(tag)
    el.text = text
    el.extend(children)
    return el


element = st.recursive(
    st.builds(_element, st.sampled_from(TAGS), st.one_of(st.none(), junk_text), st.just([])),
    lambda kids: st.builds(_element, st.sampled_from(TAGS), st.one_of(st.none(), junk_text),
                           st.lists(kids, max_size=5)),
    max_leaves=20)


@settings(SETTINGS, max_examples=80)
@given(st.lists(element, max_size=4), st.lists(st.tuples(st.sampled_from(['id', 'x']), junk_text), max_size=2))
def test_any_nesting_of_known_elements_gives_a_report(children, attrs):
    """Elements nvidia-smi prints, nested any way, with any text: always a report, never an error."""
    root = _element('nvidia_smi_log', None, children)
    for gpu in root.iter('gpu'):
        for key, value in attrs:
            gpu.set(key, value)
    report = nvsmi.parse(ET.tostring(root, encoding='unicode'))
    _check_report(report)
    _through_the_modules(report)


@SETTINGS
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300),
                 st.builds(lambda a, b: '%s<nvidia_smi_log%s' % (a, b), st.text(max_size=60), st.text(max_size=200)),
                 st.none(), st.integers(), st.lists(st.text(max_size=5), max_size=3)))
def test_any_input_gives_a_report_or_the_parse_error(value):
    _parse_or_refuse(value)


@SETTINGS
@given(junk_text)
def test_number_is_a_bounded_number_or_none(text):
    n = nvsmi.number(text)
    _number_or_none(n)
    if n is not None:
        assert abs(n) <= nvsmi.NUMBER_MAX
        assert not any(ch.isdigit() and not ch.isascii() for ch in text), text
