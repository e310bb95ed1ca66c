# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""amd-smi and rocm-smi JSON (recorded captures, fixtures/amd_smi and fixtures/rocm_smi) into GPU records: both amd-smi
shapes told apart from the JSON, "MB" read as MiB, hostile documents refused with a reason, hostile values null."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amd_smi
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import read_fixture

STATIC_WRAPPED = read_fixture('amd_smi', 'static_mi210_gpu_data.json')
STATIC_FLAT = json.dumps(json.loads(STATIC_WRAPPED)['gpu_data'])          # the same records, ROCm 6.x shape
METRIC_FLAT = read_fixture('amd_smi', 'metric_power_flat.json')
METRIC_WRAPPED = json.dumps({'gpu_data': json.loads(METRIC_FLAT)})         # the same records, ROCm 7.x shape
TOPOLOGY = read_fixture('amd_smi', 'topology_flat.json')
ROCM_SMI = read_fixture('rocm_smi', 'mi250_rocm_smi_a.json')


def metric(**fields):
    """One amd-smi metric record with the keys amdsmi_cli/amdsmi_commands.py prints (commit 0ceca28f)."""
    rec = {'gpu': 0,
           'temperature': {'edge': {'value': 41, 'unit': 'C'}, 'hotspot': {'value': 48, 'unit': 'C'},
                           'mem': {'value': 55, 'unit': 'C'}},
           'power': {'socket_power': {'value': 210, 'unit': 'W'}, 'throttle_status': 'UNTHROTTLED'},
           'ecc': {'total_correctable_count': 3, 'total_uncorrectable_count': 0, 'total_deferred_count': 0},
           'mem_usage': {'total_vram': {'value': 196592, 'unit': 'MB'}},
           'usage': {'gfx_activity': {'value': 12, 'unit': '%'}}}
    rec.update(fields)
    return rec


# Both shapes ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('static,metric_text,shapes', [
    (STATIC_WRAPPED, METRIC_FLAT, {'static': 'gpu_data', 'metric': 'list'}),
    (STATIC_FLAT, METRIC_WRAPPED, {'static': 'list', 'metric': 'gpu_data'}),
    (STATIC_FLAT, METRIC_FLAT, {'static': 'list', 'metric': 'list'}),
    (STATIC_WRAPPED, METRIC_WRAPPED, {'static': 'gpu_data', 'metric': 'gpu_data'}),
])
def test_both_shapes_give_the_same_gpu(static, metric_text, shapes):
    gpus, found = _amd_smi.parse_amd_smi(static, metric_text)
    assert found == shapes
    [gpu] = gpus
    assert (gpu['index'], gpu['name'], gpu['pci_device_id'], gpu['model'], gpu['gfx_target']) == \
        (0, 'AMD Instinct MI210', '1002:740f', 'MI210', 'gfx90a')
    assert gpu['memory_total_mib'] == 65520                     # "MB" is MiB as amd-smi means it
    assert gpu['power_limit_w'] == 300 and gpu['power_draw_w'] == 10
    assert gpu['temperature_limits_c'] == {'edge': {'critical': 99, 'emergency': 99},
                                           'junction': {'critical': 100, 'emergency': 105},
                                           'mem': {'critical': 94, 'emergency': 99}}
    assert gpu['throttled'] is False and gpu['throttle_reasons'] == []


def _shape_by_version(text, amd_smi_version):
    """A weak parser (the negative control): it picks the shape from amd-smi's version, ROCm 7 (amd-smi 25+) wrapped."""
    data = json.loads(text)
    return data['gpu_data'] if int(amd_smi_version.split('.')[0]) >= 25 else data


def test_negative_control_a_version_trusting_parser_is_caught():
    """A 7.x document under a 6.x version string (a backported amd-smi, a container's tool on another host's ROCm):
    the version-trusting parser sees no GPU list; the real one reads the JSON and finds the MI210."""
    weak = _shape_by_version(STATIC_WRAPPED, '24.7.1')
    assert not isinstance(weak, list)                           # the check below catches the weak parser
    gpus, shapes = _amd_smi.parse_amd_smi(STATIC_WRAPPED, METRIC_FLAT)
    assert shapes['static'] == 'gpu_data' and len(gpus) == 1
    with pytest.raises((TypeError, KeyError)):
        _shape_by_version(STATIC_FLAT, '25.0.0')                # ... and fails on the other combination


def _reads_the_mi210_as_mib():
    """The check: the MI210 capture's VRAM is the 65520 MiB amd-smi printed (64 GiB = 65536 MiB, 16 below)."""
    gpus, _shapes = _amd_smi.parse_amd_smi(STATIC_WRAPPED, METRIC_FLAT)
    return gpus[0]['memory_total_mib'] == 65520


def test_mb_is_read_as_mib():
    assert _reads_the_mi210_as_mib()


def test_negative_control_mb_read_as_decimal_megabytes_is_caught(monkeypatch):
    """A parser that reads amd-smi's MB as 10^6 bytes gets 62484 MiB for the MI210: the check catches it."""
    monkeypatch.setitem(_amd_smi._MIB_PER_UNIT, 'MB', 10 ** 6 / (1024.0 * 1024))
    gpus, _shapes = _amd_smi.parse_amd_smi(STATIC_WRAPPED, METRIC_FLAT)
    assert int(gpus[0]['memory_total_mib']) == 62484
    assert not _reads_the_mi210_as_mib()


def test_topology_links():
    gpus, shapes = _amd_smi.parse_amd_smi(STATIC_FLAT, METRIC_FLAT, TOPOLOGY)
    assert shapes['topology'] == 'list'
    assert gpus[0]['xgmi_links'] == []                          # the capture's two GPUs are joined by PCIe only
    rec = {'gpu': 0, 'links': [
        {'gpu': 0, 'bdf': '0000:0c:00.0', 'link_type': 'SELF', 'link_status': 'ENABLED'},
        {'gpu': 1, 'bdf': '0000:22:00.0', 'link_type': 'XGMI', 'link_status': 'ENABLED'},
        {'gpu': 2, 'bdf': '0000:38:00.0', 'link_type': 'XGMI', 'link_status': 'DISABLED'},
        'junk', {'gpu': True, 'bdf': 'x', 'link_type': 'XGMI', 'link_status': 7}]}
    assert _amd_smi.xgmi_links(rec) == [
        {'peer': 1, 'peer_bus_id': '0000:22:00.0', 'status': 'ENABLED'},
        {'peer': 2, 'peer_bus_id': '0000:38:00.0', 'status': 'DISABLED'},
        {'peer': None, 'peer_bus_id': None, 'status': None}]


def test_full_metric_record():
    gpus, _shapes = _amd_smi.parse_amd_smi(STATIC_FLAT, json.dumps([metric()]))
    gpu = gpus[0]
    assert gpu['temperatures_c'] == {'edge': 41, 'junction': 48, 'mem': 55} and gpu['temperature_c'] == 48
    assert gpu['ecc_errors']['volatile'] == {'corrected': 3, 'uncorrected': 0}
    assert gpu['ecc_errors']['aggregate'] == {'corrected': None, 'uncorrected': None}
    assert gpu['memory_total_mib'] == 196592 and gpu['gpu_busy_percent'] == 12


@pytest.mark.parametrize('throttle,throttled,reasons', [
    ({'ppt_violation_status': 1, 'socket_thermal_violation_status': 0}, True, ['ppt']),
    ({'ppt_violation_status': True, 'hbm_thermal_violation_status': True}, True, ['hbm_thermal', 'ppt']),
    ({'ppt_violation_status': 0, 'prochot_violation_status': False}, False, []),
    ({'ppt_violation_status': 'N/A'}, False, []),              # unknown: throttle_status (UNTHROTTLED) answers
    ({'ppt_violation_status': 2, 'x_violation_status': '1'}, False, []),
])
def test_throttle_reasons(throttle, throttled, reasons):
    gpus, _shapes = _amd_smi.parse_amd_smi(STATIC_FLAT, json.dumps([metric(throttle=throttle)]))
    assert (gpus[0]['throttled'], gpus[0]['throttle_reasons']) == (throttled, reasons)


def test_rocm_smi_capture():
    [gpu] = _amd_smi.parse_rocm_smi(ROCM_SMI)
    assert (gpu['index'], gpu['pci_bus_id'], gpu['pci_device_id']) == (0, '0000:2f:00.0', '1002:740c')
    assert gpu['model'] == 'MI250' and gpu['gfx_target'] == 'gfx90a'    # the name resolves the two-model id
    assert gpu['temperatures_c'] == {'edge': 32.0, 'junction': 35.0, 'mem': 43.0} and gpu['temperature_c'] == 35.0
    assert (gpu['power_draw_w'], gpu['power_limit_w'], gpu['memory_total_mib']) == (89.0, 560.0, None)
    assert gpu['source'] == 'rocm-smi'


# Hostile documents: a reason, never a traceback ------------------------------------------------------------------

@pytest.mark.parametrize('doc,needle', [
    ('', 'printed nothing'), ('  \n', 'printed nothing'),
    (STATIC_WRAPPED[:len(STATIC_WRAPPED) // 2], 'no valid JSON'),             # truncated
    ('{"gpu_data": {"gpu": 0}}', 'not a list of GPUs'),
    ('{"gpus": []}', 'neither a list of GPUs nor an object with "gpu_data"'),
    ('"N/A"', 'a str'), ('42', 'a int'), ('null', 'a NoneType'),
    ('[1, 2]', 'GPU entry 0 is a int'), ('[{"gpu": 0}, "x"]', 'GPU entry 1 is a str'),
    ('[' * 5000 + ']' * 5000, 'nested deeper'),
    ('[{"gpu": NaN}]', 'no valid JSON'), ('[{"gpu": Infinity}]', 'no valid JSON'),
    (json.dumps([{}] * 1025), 'more than any host holds'),
    ('\ufeff[]', 'no valid JSON'),
])
def test_hostile_documents_are_refused_with_a_reason(doc, needle):
    with pytest.raises(_amd_smi.AmdSmiParseError, match='amd-smi static --json') as e:
        _amd_smi.parse_amd_smi(doc, METRIC_FLAT)
    assert needle in str(e.value)


@pytest.mark.parametrize('doc', ['[]', '{"card0": 5}', '{"card0": {"GPU ID": "0x740c"}, "system": 1}', '[{}]',
                                 '{', '{"card0": {}}' * 2])
def test_hostile_rocm_smi_documents(doc):
    try:
        gpus = _amd_smi.parse_rocm_smi(doc)
    except _amd_smi.AmdSmiParseError as e:
        assert 'rocm-smi -a --json' in str(e)
    else:
        assert isinstance(gpus, list)


# Hostile values: null, never an error or a wrong figure ---------------------------------------------------------

@pytest.mark.parametrize('raw', [
    'N/A', None, True, False, '', ' ', '\n', '\r', [], {}, '\u0663\u0665',           # Arabic-Indic 35
    '\uff13\uff15', '35\n36', '1' * 30, 2 ** 70, -2 ** 70, 1e300, {'value': 'N/A', 'unit': 'C'},
    {'value': True, 'unit': 'C'}, {'value': 35, 'unit': 'F'}, {'value': [35], 'unit': 'C'},
])
def test_hostile_temperatures_are_null(raw):
    rec = metric(temperature={'edge': raw, 'hotspot': raw, 'mem': raw})
    gpus, _shapes = _amd_smi.parse_amd_smi(STATIC_FLAT, json.dumps([rec]) if not isinstance(raw, float) else
                                           json.dumps([rec]).replace('1e+300', '1e300'))
    assert gpus[0]['temperatures_c'] == {'edge': None, 'junction': None, 'mem': None}
    assert gpus[0]['temperature_c'] is None


@pytest.mark.parametrize('raw,expected', [
    ({'value': 65520, 'unit': 'MB'}, 65520), ({'value': 64, 'unit': 'GB'}, 65536),
    ({'value': 68702699520, 'unit': 'B'}, 65520), (65520, 65520), ('65520', 65520),
    ({'value': 65520, 'unit': 'MiB?'}, None), ({'value': 65520}, None), ({'value': '6\u0665520', 'unit': 'MB'}, None),
    ({'value': -1, 'unit': 'MB'}, None), ({'value': 10 ** 30, 'unit': 'MB'}, None), ('N/A', None),
])
def test_memory_units(raw, expected):
    assert _amd_smi.mib(raw) == expected


@pytest.mark.parametrize('raw', [-1, 1.5, '3', True, 'N/A', 2 ** 65, None])
def test_ecc_counts_must_be_whole_non_negative_numbers(raw):
    expected = 3 if raw == '3' else None
    rec = metric(ecc={'total_correctable_count': raw, 'total_uncorrectable_count': raw})
    gpus, _shapes = _amd_smi.parse_amd_smi(STATIC_FLAT, json.dumps([rec]))
    assert gpus[0]['ecc_errors']['volatile'] == {'corrected': expected, 'uncorrected': expected}


@pytest.mark.parametrize('raw,expected', [
    ('0000:2F:00.0', '0000:2f:00.0'), ('0000:2f:00.0\n', '0000:2f:00.0'), ('2f:00.0', None), ('0000:2f:00.8', None),
    ('0000:2f:00.0; rm -rf /', None), (47, None), ('\uff10000:2f:00.0', None),
])
def test_bus_ids(raw, expected):
    assert _amd_smi.bus_id(raw) == expected


def test_gpu_index_of_a_wrong_type_falls_back_to_the_position():
    static = json.loads(STATIC_FLAT)
    static[0]['gpu'] = '0'
    gpus, _shapes = _amd_smi.parse_amd_smi(json.dumps(static * 2), '[]')
    assert [g['index'] for g in gpus] == [0, 1]


def test_a_gpu_described_twice_is_refused():
    with pytest.raises(_amd_smi.AmdSmiParseError, match='amd-smi static --json describes GPU 0 twice'):
        _amd_smi.parse_amd_smi(json.dumps(json.loads(STATIC_FLAT) * 2), '[]')
    with pytest.raises(_amd_smi.AmdSmiParseError, match='amd-smi metric --json describes GPU 0 twice'):
        _amd_smi.parse_amd_smi(STATIC_FLAT, json.dumps([metric(), metric()]))


@pytest.mark.parametrize('raw,expected', [
    ('AMD\x00 Instinct\x1b[31m MI210', 'AMD Instinct [31m MI210'), ('\u200bN/A', None), ('n/a', None),
    ('  ', None), (5, None),
])
def test_text_drops_control_characters(raw, expected):
    assert _amd_smi.text(raw) == expected


def test_names_with_line_breaks_are_one_line():
    static = json.loads(STATIC_FLAT)
    static[0]['asic']['market_name'] = 'AMD Instinct\r\nMI210 '
    static[0]['asic']['target_graphics_version'] = 'gfx90a\n; echo'
    gpus, _shapes = _amd_smi.parse_amd_smi(json.dumps(static), '[]')
    assert gpus[0]['name'] == 'AMD Instinct MI210'
    assert gpus[0]['gfx_target'] == 'gfx90a'                  # from the PCI id table, not the odd text


# Any JSON at all: GPU records or AmdSmiParseError, never another exception ---------------------------------------

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2 ** 80, max_value=2 ** 80),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
                     st.sampled_from(['N/A', 'MB', 'C', 'W', '0x1002', '0x74a1', '0000:0c:00.0', 'XGMI', 'ENABLED']))
_KEYS = st.sampled_from(['gpu', 'gpu_data', 'asic', 'bus', 'bdf', 'vram', 'size', 'value', 'unit', 'limit',
                         'temperature', 'edge', 'hotspot', 'power', 'socket_power', 'ecc', 'mem_usage', 'total_vram',
                         'throttle', 'ppt_violation_status', 'links', 'link_type', 'link_status', 'ras',
                         'bad_page_threshold', 'device_id', 'vendor_id', 'market_name', 'card0', 'PCI Bus',
                         'GPU ID', 'VRAM Total Memory (B)'])
_JSON = st.recursive(_SCALARS, lambda children: st.one_of(st.lists(children, max_size=4),
                                                          st.dictionaries(_KEYS, children, max_size=6)),
                     max_leaves=30)


@settings(max_examples=150)
@given(static=_JSON, metric_doc=_JSON, topology=_JSON)
def test_any_json_gives_records_or_a_reason(static, metric_doc, topology):
    try:
        gpus, _shapes = _amd_smi.parse_amd_smi(json.dumps(static), json.dumps(metric_doc), json.dumps(topology))
    except _amd_smi.AmdSmiParseError as e:
        assert str(e).startswith('amd-smi ')
    else:
        json.dumps(gpus)
        for gpu in gpus:
            assert set(gpu) == set(_amd_smi.empty_gpu(0))
            for key in ('memory_total_mib', 'power_draw_w', 'power_limit_w', 'temperature_c'):
                assert gpu[key] is None or (isinstance(gpu[key], (int, float)) and not isinstance(gpu[key], bool))


@settings(max_examples=100)
@given(doc=_JSON)
def test_any_json_gives_rocm_smi_records_or_a_reason(doc):
    try:
        gpus = _amd_smi.parse_rocm_smi(json.dumps(doc))
    except _amd_smi.AmdSmiParseError as e:
        assert str(e).startswith('rocm-smi ')
    else:
        json.dumps(gpus)
