# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a kernel's amdgpu and the firmware can drive the AMD GPUs: the amd_driver role's refusal before change.

The firmware lists are the real ones: the MODULE_FIRMWARE names of amdgpu.ko in Debian's linux-image-6.1.0-57-amd64
(bookworm) and linux-image-6.12.95+deb12-amd64 (bookworm-backports) that concern these GPUs, read with modinfo on
2026-12-07 (the 6.1 module asks for arcturus_* and aldebaran_*, none of gc_9_4_3, psp_13_0_6, smu_13_0_6).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _amdgpu

KERNEL_6_1 = """amdgpu/aldebaran_mec.bin
amdgpu/aldebaran_rlc.bin
amdgpu/aldebaran_sos.bin
amdgpu/aldebaran_ta.bin
amdgpu/aldebaran_smc.bin
amdgpu/arcturus_mec.bin
amdgpu/arcturus_sos.bin
"""
KERNEL_6_12 = KERNEL_6_1 + """amdgpu/gc_9_4_3_mec.bin
amdgpu/gc_9_4_3_rlc.bin
amdgpu/gc_9_4_3_sjt_mec.bin
amdgpu/psp_13_0_6_sos.bin
amdgpu/psp_13_0_6_ta.bin
amdgpu/smu_13_0_6.bin
"""
# firmware-amd-graphics 20250410-2 (trixie, bookworm-backports): the files of the MI300 series, as dpkg -c lists them.
FIRMWARE_2025 = ['amdgpu/gc_9_4_3_mec.bin', 'amdgpu/gc_9_4_3_rlc.bin', 'amdgpu/gc_9_4_3_sjt_mec.bin',
                 'amdgpu/psp_13_0_6_sos.bin', 'amdgpu/psp_13_0_6_ta.bin', 'amdgpu/smu_13_0_6.bin']
MI300X = {'pci_bus_id': '0000:41:00.0', 'vendor': 'amd', 'pci_device_id': '1002:74a1'}
MI250 = {'pci_bus_id': '0000:c1:00.0', 'vendor': 'amd', 'pci_device_id': '1002:740c'}


def kernel(release, text, module='/lib/modules/x/amdgpu.ko'):
    return {'release': release, 'module': module, 'firmware': sorted(_amdgpu.parse_firmware_list(text))}


def test_mi300x_on_debian_12_stock_kernel_and_firmware_is_refused_for_both():
    found = _amdgpu.problems([MI300X], [kernel('6.1.0-57-amd64', KERNEL_6_1)], [])
    assert [(p['kind'], p['release']) for p in found] == [('kernel', '6.1.0-57-amd64'), ('firmware', None)]
    said = ' '.join(_amdgpu.describe(found))
    assert 'kernel 6.1.0-57-amd64' in said and 'Instinct MI300X (1002:74a1' in said and 'gc_9_4_3_mec.bin' in said


def test_mi300x_with_backports_kernel_and_firmware_passes():
    assert _amdgpu.problems([MI300X], [kernel('6.12.95+deb12-amd64', KERNEL_6_12)], FIRMWARE_2025) == []


def test_mi300x_with_backports_kernel_but_bookworm_firmware_is_a_firmware_problem_only():
    found = _amdgpu.problems([MI300X], [kernel('6.12.95+deb12-amd64', KERNEL_6_12)], [])
    assert [p['kind'] for p in found] == ['firmware']
    assert found[0]['missing'] == list(_amdgpu.REQUIREMENTS['1002:74a1']['firmware'])


def test_every_bootable_kernel_counts_not_only_the_newest():
    found = _amdgpu.problems([MI300X], [kernel('6.12.95+deb12-amd64', KERNEL_6_12), kernel('6.1.0-57-amd64', KERNEL_6_1)],
                             FIRMWARE_2025)
    assert [(p['kind'], p['release']) for p in found] == [('kernel', '6.1.0-57-amd64')]


def test_compressed_firmware_files_count_as_the_files():
    """Ubuntu and Debian 13 ship /lib/firmware/amdgpu/*.bin.zst (or .xz); the kernel asks for the .bin name."""
    assert _amdgpu.problems([MI300X], [], [f + '.zst' for f in FIRMWARE_2025]) == []
    assert _amdgpu.problems([MI300X], [], [f + '.xz' for f in FIRMWARE_2025]) == []


def test_mi200_and_mi100_need_nothing_beyond_every_kernel():
    assert _amdgpu.problems([MI250, dict(MI250, pci_device_id='1002:738c')], [kernel('6.1.0-57-amd64', KERNEL_6_1)],
                            []) == []


def test_a_kernel_without_an_amdgpu_module_yet_is_not_judged():
    found = _amdgpu.problems([MI300X], [{'release': '6.8.0-155-generic', 'module': None, 'firmware': []}], FIRMWARE_2025)
    assert found == []


def test_eight_gpus_give_one_problem_per_kind_not_eight():
    gpus = [dict(MI300X, pci_bus_id='0000:%02x:00.0' % i) for i in range(8)]
    assert len(_amdgpu.problems(gpus, [kernel('6.1.0-57-amd64', KERNEL_6_1)], [])) == 2


def test_modinfo_lines_that_are_no_file_names_are_dropped():
    names = _amdgpu.parse_firmware_list('amdgpu/gc_9_4_3_mec.bin\n\n  \nrm -rf /\n\x1b[31m\namdgpu/a b.bin\n'
                                        + 'x' * 300 + '\namdgpu/smu_13_0_6.bin\r\n')
    assert names == {'amdgpu/gc_9_4_3_mec.bin', 'amdgpu/smu_13_0_6.bin'}


def test_negative_control_a_check_that_trusts_the_kernel_version_string_misses_the_gap():
    """A kernel named like a new one but whose module does not ask for the files is still refused: the check reads
    the module, not the name."""
    found = _amdgpu.problems([MI300X], [kernel('6.12.95+deb12-amd64', KERNEL_6_1)], FIRMWARE_2025)
    assert [p['kind'] for p in found] == ['kernel']


def test_modules_extra_for_kernels_without_amdgpu_and_the_metapackage_that_keeps_it():
    kernels = [{'release': '6.8.0-155-generic', 'module': None}, {'release': '6.8.0-150-generic', 'module': '/x'},
               {'release': '6.8.0-149-generic', 'module': None}]
    metas = {'6.8.0-155-generic': 'linux-image-virtual', '6.8.0-149-generic': 'linux-image-virtual'}
    assert _amdgpu.modules_extra_packages(kernels, metas, {'linux-image-virtual': 'linux-image-generic'}) == [
        'linux-modules-extra-6.8.0-155-generic', 'linux-image-generic', 'linux-modules-extra-6.8.0-149-generic']
    assert _amdgpu.modules_extra_packages(kernels, {'6.8.0-155-generic': 'linux-image-generic'},
                                          {'linux-image-virtual': 'linux-image-generic'}) == [
        'linux-modules-extra-6.8.0-155-generic', 'linux-modules-extra-6.8.0-149-generic']
    assert _amdgpu.modules_extra_packages([], {}, {}) == []


def test_the_kernel_checks_mi300_list_and_the_data_tables_ids_agree():
    """Every id of _data_amd.PCI_IDS whose models are gfx942 is judged by the kernel check, and every id the check
    judges is one of those or MI308X (74a2, which the data table leaves out for want of sourced figures)."""
    from ansible_collections.gpuops.gpu_server.plugins.module_utils import _data_amd
    gfx = dict((row[0], row[2]) for row in _data_amd.INSTINCT_MODELS)
    gfx942 = set(pci_id for pci_id, (_name, models) in _data_amd.PCI_IDS.items()
                 if set(gfx[m] for m in models) == {'gfx942'})
    assert gfx942 and gfx942 <= set(_amdgpu.REQUIREMENTS)
    assert set(_amdgpu.REQUIREMENTS) - gfx942 == {'1002:74a2'}
