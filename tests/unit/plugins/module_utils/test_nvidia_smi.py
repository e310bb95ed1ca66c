# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi as nvsmi
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import load_yaml, read_fixture

EXPECTED = load_yaml('nvidia_smi', 'expected.yml')


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_parse_recorded_capture(name):
    expected = EXPECTED[name]
    report = nvsmi.parse(read_fixture('nvidia_smi', name))
    assert report['driver_version'] == expected['driver_version']
    assert report['cuda_version'] == expected['cuda_version']
    assert report['attached_gpus'] == expected['attached_gpus']
    assert len(report['gpus']) == expected['gpu_count']
    for index, fields in expected['gpus'].items():
        gpu = report['gpus'][index]
        for key, value in fields.items():
            assert gpu[key] == value, '%s GPU %s: %s is %r, expected %r' % (name, index, key, gpu[key], value)


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_numbers_are_numbers(name):
    """Every value that carries a unit in the XML comes back as int/float or None, never as text."""
    numeric = ('memory_total_mib', 'temperature_c', 'temperature_slowdown_c', 'temperature_tlimit_c',
               'temperature_slowdown_tlimit_c', 'temperature_slowdown_margin_c', 'power_draw_w', 'power_limit_w',
               'pcie_gen_current', 'pcie_gen_max', 'pcie_width_current', 'pcie_width_max', 'utilization_gpu_pct')
    for gpu in nvsmi.parse(read_fixture('nvidia_smi', name))['gpus']:
        for key in numeric:
            assert gpu[key] is None or isinstance(gpu[key], (int, float)), (key, gpu[key])
            assert not isinstance(gpu[key], bool)


@pytest.mark.parametrize('text,expected', [
    ('81559 MiB', 81559), ('35 C', 35), ('70.00 W', 70.0), ('16x', 16), ('  0 %  ', 0), ('N/A', None),
    ('[N/A]', None), ('[Not Supported]', None), ('Not Supported', None), ('[Unknown Error]', None), ('', None),
    (None, None), ('Enabled', None), ('-5 C', -5), ('2560 bank(s)', None),
])
def test_number(text, expected):
    assert nvsmi.number(text) == expected
    assert type(nvsmi.number(text)) is type(expected)


@pytest.mark.parametrize('text,expected', [
    ('Enabled', True), ('Disabled', False), ('Yes', True), ('No', False), ('Active', True), ('Not Active', False),
    ('N/A', None), ('[N/A]', None), ('Something', None),
])
def test_flag(text, expected):
    assert nvsmi.flag(text) is expected


@pytest.mark.parametrize('raw,expected', [
    ('233010DE', '10de:2330'), ('0x233010DE', '10de:2330'), ('0x20B010DE', '10de:20b0'), ('N/A', None), ('10DE', None),
])
def test_pci_device_id_byte_order(raw, expected):
    assert nvsmi.pci_device_id(raw) == expected


@pytest.mark.parametrize('raw,expected', [
    ('00000000:07:00.0', '0000:07:00.0'), ('00000000:AF:00.0', '0000:af:00.0'), ('0000:3b:00', '0000:3b:00.0'),
    ('00000001:18:00.0', '0001:18:00.0'),
])
def test_normalize_bus_id(raw, expected):
    assert nvsmi.normalize_bus_id(raw) == expected


def test_missing_doctype_and_whitespace():
    text = ('<nvidia_smi_log><driver_version> 550.54.15 </driver_version><attached_gpus>1</attached_gpus>'
            '<gpu id="00000000:01:00.0"><product_name>\n  NVIDIA L4\n </product_name>'
            '<fb_memory_usage><total>  23034 MiB </total></fb_memory_usage></gpu></nvidia_smi_log>')
    report = nvsmi.parse(text)
    assert report['driver_version'] == '550.54.15'
    assert report['cuda_version'] is None
    gpu = report['gpus'][0]
    assert gpu['name'] == 'NVIDIA L4'
    assert gpu['memory_total_mib'] == 23034
    # Blocks that this old/minimal capture lacks are None, not errors.
    assert gpu['clock_event_reasons'] is None
    assert gpu['remapped_rows'] is None
    assert gpu['ecc_errors'] == {'volatile': {'corrected': None, 'uncorrected': None},
                                 'aggregate': {'corrected': None, 'uncorrected': None}}


def test_inline_doctype_with_entities_is_not_resolved():
    """An internal subset that declares an entity is removed with the DOCTYPE: the entity stays unresolved."""
    text = ('<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [\n<!ENTITY boom "expanded">\n]>\n'
            '<nvidia_smi_log><driver_version>&boom;</driver_version></nvidia_smi_log>')
    with pytest.raises(nvsmi.NvidiaSmiParseError):
        nvsmi.parse(text)


def test_entity_outside_doctype_is_refused():
    with pytest.raises(nvsmi.NvidiaSmiParseError, match='entities'):
        nvsmi.parse('<nvidia_smi_log><!ENTITY x "y"></nvidia_smi_log>')


@pytest.mark.parametrize('text', ['', 'Failed to initialize NVML: Unknown Error', '<nvidia_smi_log><gpu>',
                                  '<other><nvidia_smi_log/></other>'])
def test_not_a_report(text):
    with pytest.raises(nvsmi.NvidiaSmiParseError):
        nvsmi.parse(text)


def test_new_and_old_clock_reason_names_agree():
    old = ('<nvidia_smi_log><gpu id="0"><clocks_throttle_reasons><clocks_throttle_reason_hw_slowdown>Active'
           '</clocks_throttle_reason_hw_slowdown><clocks_throttle_reason_gpu_idle>Not Active'
           '</clocks_throttle_reason_gpu_idle></clocks_throttle_reasons></gpu></nvidia_smi_log>')
    new = old.replace('throttle', 'event')
    assert nvsmi.parse(old)['gpus'][0]['clock_event_reasons'] == ['hw_slowdown']
    assert nvsmi.parse(new)['gpus'][0]['clock_event_reasons'] == ['hw_slowdown']


def test_power_readings_old_and_new_names():
    old = ('<nvidia_smi_log><gpu id="0"><power_readings><power_draw>62.34 W</power_draw>'
           '<power_limit>400.00 W</power_limit></power_readings></gpu></nvidia_smi_log>')
    new = ('<nvidia_smi_log><gpu id="0"><gpu_power_readings><power_draw>N/A</power_draw>'
           '<instant_power_draw>62.34 W</instant_power_draw><current_power_limit>400.00 W</current_power_limit>'
           '</gpu_power_readings></gpu></nvidia_smi_log>')
    for text in (old, new):
        gpu = nvsmi.parse(text)['gpus'][0]
        assert (gpu['power_draw_w'], gpu['power_limit_w']) == (62.34, 400.0)


# Issue 29: no junk in a field makes the parse raise; a figure that is no reading is unreadable (None), like N/A.

HUGE_DIGITS = '9' * 5000                 # more than the 4300 digits int() converts
OVERFLOWING = '9' * 400 + '.5'           # float() of it is infinity


def _with_field(tag, text, fixture='h200_sxm_r580_idle.xml'):
    """The recorded capture with the first ``<tag>`` holding ``text``."""
    xml = read_fixture('nvidia_smi', fixture)
    start = xml.index('<%s>' % tag) + len(tag) + 2
    return xml[:start] + text + xml[xml.index('</%s>' % tag, start):]


def test_number_of_more_than_4300_digits_is_unreadable():
    """Issue 29: a 5000-digit figure raised ValueError (Python's int string-conversion limit)."""
    gpu = nvsmi.parse(_with_field('gpu_temp', HUGE_DIGITS + ' C'))['gpus'][0]
    assert gpu['temperature_c'] is None
    assert gpu['name'] == 'NVIDIA H200'


def test_number_that_overflows_to_infinity_is_unreadable():
    """Issue 29: a figure that overflows a float came back as inf (and made gpu_health raise OverflowError)."""
    gpu = nvsmi.parse(_with_field('instant_power_draw', OVERFLOWING + ' W'))['gpus'][0]
    assert gpu['power_draw_w'] == 80.32      # the next spelling that holds a number
    gpu = nvsmi.parse(_with_field('gpu_temp', OVERFLOWING + ' C'))['gpus'][0]
    assert gpu['temperature_c'] is None


@pytest.mark.parametrize('text', ['\u0663\u0665 C', '\uff13\uff15 C', '3\u0665 C', '\u0663\u0665.0 W'])
def test_non_ascii_digits_are_unreadable(text):
    """Issue 29: int() and a plain \\d read Arabic-Indic and fullwidth digits as numbers."""
    assert nvsmi.number(text) is None


@pytest.mark.parametrize('text,expected', [
    ('18446744073709551615', 2 ** 64 - 1), ('18446744073709551617', None), ('-18446744073709551617', None),
    ('1e999 C', None), ('inf W', None), ('nan W', None), ('Infinity', None), ('000000000000000000000000042 MiB', 42),
    ('1' * 21, None), ('9' * 20 + '.5 W', None), ('12345678901234567890.5 W', 12345678901234567890.5),
])
def test_number_bounds(text, expected):
    assert nvsmi.number(text) == expected


@pytest.mark.parametrize('text', [
    '<!DOCTYPE a><!DOCTYPE nvidia_smi_log [<!ATTLIST gpu id CDATA "00000000:01:00.0">]><nvidia_smi_log><gpu/>'
    '</nvidia_smi_log>',
    '<!DOCTYPE nvidia_smi_log [ <!ATTLIST gpu id CDATA "x"> <nvidia_smi_log/>',
    '<nvidia_smi_log><driver_version>\ud800</driver_version></nvidia_smi_log>',
    '<nvidia_smi_log>&xxe;</nvidia_smi_log>',
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
    '<nvidia_smi_log><driver_version>&lol2;</driver_version></nvidia_smi_log>',
    5, None, ['<nvidia_smi_log/>'],
])
def test_hostile_reports_are_refused(text):
    with pytest.raises(nvsmi.NvidiaSmiParseError):
        nvsmi.parse(text)


def test_deep_nesting_is_read():
    depth = 100000
    text = '<nvidia_smi_log><gpu id="0">%s%s</gpu></nvidia_smi_log>' % ('<a>' * depth, '</a>' * depth)
    assert nvsmi.parse(text)['gpus'][0]['pci_bus_id'] == '0'
