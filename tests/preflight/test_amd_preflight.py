"""site.yml's vendor choice and the amd_driver role's refusals, through ansible-playbook in check mode, before any change."""
import os

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import needs_ansible_playbook, run_playbook

HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = needs_ansible_playbook


def fake_bus(root, vendor, device, pci_class):
    d = root / 'bus' / 'pci' / 'devices' / '0000:41:00.0'
    d.mkdir(parents=True)
    for name, text in (('vendor', vendor), ('device', device), ('class', pci_class)):
        (d / name).write_text(text + '\n')
    return str(root)


def play(*extra):
    return run_playbook(os.path.join(HERE, 'amd_driver_refuses.yml'), '--check', '--tags', 'amd_driver_preflight',
                        *extra, inventory='localhost,', timeout=300)


def test_mi300x_on_debian_12_firmware_is_refused_naming_backports(tmp_path):
    result = play('-e', 'gpuops_gpu_sysfs_root=%s' % fake_bus(tmp_path, '0x1002', '0x74a1', '0x120000'))
    said = ' '.join(result.stdout.split())
    assert result.returncode != 0, said
    assert 'VENDOR=amd' in said, said
    assert 'Refuse a kernel or firmware that cannot drive the AMD GPUs on the bus' in said, said
    assert 'Instinct MI300X (1002:74a1' in said and 'amdgpu/gc_9_4_3_mec.bin' in said, said
    assert 'bookworm-backports' in said and 'Nothing was changed.' in said, said


def test_mi300x_on_debian_13_passes_preflight(tmp_path):
    """The negative control of the refusal: the same bus on Debian 13, whose firmware holds the files, passes."""
    result = play('-e', 'gpuops_gpu_sysfs_root=%s' % fake_bus(tmp_path, '0x1002', '0x74a1', '0x120000'),
                  '-e', 'fake_major=13')
    said = ' '.join(result.stdout.split())
    assert result.returncode == 0, said
    assert 'Refuse a kernel or firmware' in said and 'Installing firmware-amd-graphics' in said, said


def test_mi250_on_debian_12_passes_preflight(tmp_path):
    result = play('-e', 'gpuops_gpu_sysfs_root=%s' % fake_bus(tmp_path, '0x1002', '0x740c', '0x038000'))
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize('value', ['AMD', 'true', '" amd"'])
def test_a_bad_gpuops_gpu_vendor_is_refused_before_any_change(tmp_path, value):
    result = play('-e', 'gpuops_gpu_sysfs_root=%s' % fake_bus(tmp_path, '0x1002', '0x74a1', '0x120000'),
                  '-e', '{"gpuops_gpu_vendor": %s}' % ('true' if value == 'true' else '"%s"' % value.strip('"')))
    said = ' '.join(result.stdout.split())
    assert result.returncode != 0, said
    assert 'gpuops_gpu_vendor: expected one of auto, nvidia, amd, none' in said, said
    assert 'Pretend to be a Debian 12 host' not in said, said


def test_an_nvidia_bus_does_not_run_the_amd_role(tmp_path):
    result = play('-e', 'gpuops_gpu_sysfs_root=%s' % fake_bus(tmp_path, '0x10de', '0x2330', '0x030200'))
    said = ' '.join(result.stdout.split())
    assert result.returncode == 0 and 'VENDOR=nvidia' in said, said
    assert 'amd_driver' not in said.split('Run the role', 1)[-1].split('PLAY RECAP')[0] or 'skipping' in said, said
