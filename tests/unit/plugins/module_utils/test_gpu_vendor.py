# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU vendor from the PCI bus (site.yml's choice of roles), on hand-built and hostile sysfs trees."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_vendor


def bus(root, devices):
    """``devices``: slot -> {attribute: text}; returns the sysfs root."""
    base = root / 'bus' / 'pci' / 'devices'
    base.mkdir(parents=True)
    for slot, attrs in devices.items():
        d = base / slot
        d.mkdir()
        for name, text in attrs.items():
            (d / name).write_bytes(text if isinstance(text, bytes) else text.encode('utf-8'))
    return str(root)


def dev(vendor, device, pci_class):
    return {'vendor': vendor + '\n', 'device': device + '\n', 'class': pci_class + '\n'}


MI300X = dev('0x1002', '0x74a1', '0x120000')      # processing accelerator
MI250 = dev('0x1002', '0x740c', '0x038000')       # display controller, other
H100 = dev('0x10de', '0x2330', '0x030200')
ASPEED = dev('0x1a03', '0x2000', '0x030000')      # the BMC's VGA: neither vendor
AMD_AUDIO = dev('0x1002', '0xab38', '0x040300')   # a Radeon's HDMI audio function: not a GPU
NVSWITCH = dev('0x10de', '0x22a3', '0x068000')


def choose(root, choice='auto'):
    return _gpu_vendor.decide(_gpu_vendor.parse_choice(choice), _gpu_vendor.scan(root))


def test_amd_host_gets_amd(tmp_path):
    root = bus(tmp_path, {'0000:41:00.0': MI300X, '0000:c1:00.0': MI250, '0000:02:00.0': ASPEED,
                          '0000:41:00.1': AMD_AUDIO})
    found = _gpu_vendor.scan(root)
    assert [(d['pci_bus_id'], d['pci_device_id'], d['pci_class']) for d in found['devices']] == [
        ('0000:41:00.0', '1002:74a1', '0x1200'), ('0000:c1:00.0', '1002:740c', '0x0380')]
    assert found['vendors'] == ['amd'] and found['skipped'] == []
    assert choose(root)[0] == 'amd'


def test_nvidia_host_gets_nvidia_and_switches_are_no_gpus(tmp_path):
    root = bus(tmp_path, {'0000:07:00.0': H100, '0000:0a:00.0': NVSWITCH, '0000:02:00.0': ASPEED})
    found = _gpu_vendor.scan(root)
    assert [d['pci_bus_id'] for d in found['devices']] == ['0000:07:00.0']
    assert choose(root) == ('nvidia', 'auto: 1 NVIDIA GPU(s) on the PCI bus')


def test_nvidia_processing_accelerator_class_is_not_taken_for_a_gpu(tmp_path):
    """0x12 is AMD's accelerator class here; an NVIDIA function of that class is not one of NVIDIA's GPUs."""
    root = bus(tmp_path, {'0000:07:00.0': dev('0x10de', '0x2330', '0x120000')})
    assert _gpu_vendor.scan(root)['devices'] == []


@pytest.mark.parametrize('devices', [{}, {'0000:02:00.0': ASPEED}])
def test_no_gpu_keeps_the_nvidia_roles_as_before(tmp_path, devices):
    vendor, reason = choose(bus(tmp_path, devices))
    assert vendor == 'nvidia' and 'no NVIDIA or AMD GPU' in reason


def test_no_sysfs_keeps_the_nvidia_roles_and_says_so(tmp_path):
    vendor, reason = choose(str(tmp_path / 'nothing'))
    assert vendor == 'nvidia' and 'no PCI bus in sysfs' in reason


def test_both_vendors_on_one_host_are_refused_naming_the_variable(tmp_path):
    root = bus(tmp_path, {'0000:07:00.0': H100, '0000:41:00.0': MI300X})
    with pytest.raises(_gpu_vendor.VendorChoiceError) as e:
        choose(root)
    assert 'gpuops_gpu_vendor' in str(e.value) and '1002:74a1' in str(e.value) and '10de:2330' in str(e.value)
    # The variable decides where auto cannot.
    assert choose(root, 'amd')[0] == 'amd' and choose(root, 'nvidia')[0] == 'nvidia'


@pytest.mark.parametrize('choice', ['nvidia', 'amd', 'none'])
def test_forced_choice_wins_over_the_bus(tmp_path, choice):
    root = bus(tmp_path, {'0000:41:00.0': MI300X})
    assert choose(root, choice) == (choice, 'gpuops_gpu_vendor=%s' % choice)


@pytest.mark.parametrize('value', [
    True, False, None, 0, 1, 1.0, ['amd'], {'amd': 1}, '', ' ', 'AMD', 'Nvidia', ' amd', 'amd ', 'amd\n', 'amd\r',
    'a\u200bmd', 'ａｍｄ', 'amdgpu', 'nvidia,amd', 'auto\n', 'none\r\n', 'x' * 100000,
])
def test_vendor_choice_is_parsed_strictly(value):
    with pytest.raises(_gpu_vendor.VendorChoiceError) as e:
        _gpu_vendor.parse_choice(value)
    message = str(e.value)
    assert message.startswith('gpuops_gpu_vendor: expected one of auto, nvidia, amd, none'), message
    assert len(message) < 400 or value == 'x' * 100000


def test_vendor_choice_error_names_the_variable_given_and_hints_the_spelling():
    with pytest.raises(_gpu_vendor.VendorChoiceError) as e:
        _gpu_vendor.parse_choice(' AMD\n', 'my_vendor')
    assert str(e.value).startswith('my_vendor:') and "did you mean 'amd'" in str(e.value)
    with pytest.raises(_gpu_vendor.VendorChoiceError) as e:
        _gpu_vendor.parse_choice(True)
    assert 'quote it in YAML' in str(e.value)


@pytest.mark.parametrize('attrs,reason', [
    ({'vendor': '0x1002\n', 'device': '0x74a1\n'}, 'cannot read class'),
    ({'device': '0x74a1\n', 'class': '0x120000\n'}, 'cannot read vendor'),
    (dev('0x1002', '0x74a1', 'junk'), 'class is'),
    (dev('0x1002', '0x74a1', '0x12'), 'class is'),
    (dev('0x1002', '0x74a1', '0x1200000'), 'class is'),
    (dev('0x1002', '0x74a1', '120000'), 'class is'),
    (dev('0x1002', '0x74a1', '0x12000g'), 'class is'),
    (dev('0x1002', '0x74a1', '0x\u0661\u0662\u0660\u0660\u0660\u0660'), 'not ASCII'),   # Arabic-Indic digits
    (dev('0x1002', '0x74a1', '0x120000\r'), 'class is'),
    (dev('0x1002', '0x74a1', '0x120000\n0x030000'), 'class is'),
    (dev('0x1002', '0x74a1', ' 0x120000'), 'class is'),
    (dev('0x1002', '', '0x120000'), 'device is'),
    (dev('0x1002', '0x74a1' * 20, '0x120000'), 'longer than a PCI attribute'),
    ({'vendor': b'0x1002\n', 'device': b'0x74\xff1\n', 'class': b'0x120000\n'}, 'not ASCII'),
    (dev('0X1002', '0x74a1', '0x120000'), 'vendor is'),
])
def test_junk_attributes_are_skipped_with_the_reason(tmp_path, attrs, reason):
    root = bus(tmp_path, {'0000:41:00.0': attrs})
    found = _gpu_vendor.scan(root)
    assert found['devices'] == [] and found['vendors'] == []
    assert len(found['skipped']) == 1 and found['skipped'][0]['entry'] == '0000:41:00.0'
    assert reason in found['skipped'][0]['reason'], found['skipped'][0]
    assert choose(root)[0] == 'nvidia'


def test_upper_case_hex_from_the_kernel_is_not_expected(tmp_path):
    """The kernel writes lower-case hex (sysfs's %#06x); anything else is not the kernel's and is skipped."""
    root = bus(tmp_path, {'0000:41:00.0': dev('0x1002', '0x74A1', '0x120000')})
    assert _gpu_vendor.scan(root)['skipped'][0]['reason'].startswith('device is')


def test_links_to_other_files_and_devices_are_not_read(tmp_path):
    secret = tmp_path / 'secret'
    secret.write_text('0x1002\n')
    root = bus(tmp_path / 'sys', {'0000:41:00.0': {'device': '0x74a1\n', 'class': '0x120000\n'},
                                  '0000:42:00.0': {'device': '0x74a1\n', 'class': '0x120000\n'},
                                  '0000:43:00.0': {'device': '0x74a1\n', 'class': '0x120000\n'},
                                  '0000:44:00.0': {'device': '0x74a1\n', 'class': '0x120000\n'}})
    base = os.path.join(root, 'bus', 'pci', 'devices')
    os.symlink('/dev/zero', os.path.join(base, '0000:41:00.0', 'vendor'))           # endless: never read whole
    os.symlink(str(tmp_path / 'missing'), os.path.join(base, '0000:42:00.0', 'vendor'))   # dangling
    os.symlink('vendor', os.path.join(base, '0000:43:00.0', 'vendor'))               # a loop
    os.mkfifo(os.path.join(base, '0000:44:00.0', 'vendor'))                          # would block an open()
    found = _gpu_vendor.scan(root)
    assert found['devices'] == []
    reasons = dict((s['entry'], s['reason']) for s in found['skipped'])
    assert reasons['0000:41:00.0'] == 'vendor is not a regular file'
    assert reasons['0000:42:00.0'].startswith('cannot read vendor')
    assert reasons['0000:43:00.0'].startswith('cannot read vendor')
    assert reasons['0000:44:00.0'] == 'vendor is not a regular file'


def test_a_link_to_a_regular_file_is_read_as_sysfs_links_devices(tmp_path):
    """Real sysfs: /sys/bus/pci/devices/<slot> are links into /sys/devices; those are followed."""
    real = tmp_path / 'devices' / 'pci0000:40' / '0000:41:00.0'
    real.mkdir(parents=True)
    for name, text in MI300X.items():
        (real / name).write_text(text)
    os.symlink('../../../../drivers/amdgpu', str(real / 'driver'))
    base = tmp_path / 'bus' / 'pci' / 'devices'
    base.mkdir(parents=True)
    os.symlink(str(real), str(base / '0000:41:00.0'))
    found = _gpu_vendor.scan(str(tmp_path))
    assert found['devices'][0]['pci_device_id'] == '1002:74a1' and found['devices'][0]['driver'] == 'amdgpu'


@pytest.mark.parametrize('name', ['not-a-slot', '0000:41:00.8', '0000:41:00', '0000:4G:00.0', '\u0660000:41:00.0',
                                  '0000:41:00.0\n'])
def test_entries_that_are_no_pci_slot_are_skipped(tmp_path, name):
    root = bus(tmp_path, {name: MI300X})
    found = _gpu_vendor.scan(root)
    assert found['devices'] == [] and found['skipped'] == [{'entry': name, 'reason': 'not a PCI slot name'}]


def test_negative_control_a_lax_parser_would_take_junk_for_an_amd_gpu(tmp_path, monkeypatch):
    """The strict attribute patterns are what keep junk out: with int(text, 16) as the parser (the NVIDIA reader's
    way, which accepts blanks, upper case and non-ASCII digits) the same junk bus becomes an AMD host."""
    root = bus(tmp_path, {'0000:41:00.0': dev(' 0X1002 ', '0x74a1', '0x\uff11\uff12\uff10\uff10\uff10\uff10')})
    assert _gpu_vendor.scan(root)['vendors'] == []

    class Lax(object):
        def __init__(self, width):
            self.width = width

        def match(self, text):
            try:
                value = '%0*x' % (self.width, int(text.strip(), 16))
            except ValueError:
                return None
            return type('M', (), {'group': lambda self_, i: value})()

    monkeypatch.setattr(_gpu_vendor, '_ID_RE', Lax(4))
    monkeypatch.setattr(_gpu_vendor, '_CLASS_RE', Lax(6))
    monkeypatch.setattr(_gpu_vendor, '_read_attribute', lambda path: (open(path, encoding='utf-8').read(), None))
    assert _gpu_vendor.scan(root)['vendors'] == ['amd']


def test_too_many_entries_are_cut_and_said(tmp_path, monkeypatch):
    monkeypatch.setattr(_gpu_vendor, 'MAX_ENTRIES', 2)
    root = bus(tmp_path, {'0000:01:00.0': ASPEED, '0000:02:00.0': ASPEED, '0000:41:00.0': MI300X})
    found = _gpu_vendor.scan(root)
    assert found['devices'] == [] and 'more than a PCI bus holds' in found['skipped'][0]['reason']
