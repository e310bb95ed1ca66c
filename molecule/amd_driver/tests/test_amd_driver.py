"""Verify the amd_driver role in a container of each platform: the distribution's AMD firmware for the in-tree amdgpu,
with the MI300 series' files, held, out of unattended upgrades; the render and video groups with the GPU user."""
import pytest

FIRMWARE = {"debian": "firmware-amd-graphics", "ubuntu": "linux-firmware-amd-graphics"}
# The MI300 series' files (GC 9.4.3, PSP 13.0.6, SMU 13.0.6), compressed on every platform here.
MI300_FILES = ["gc_9_4_3_mec.bin", "gc_9_4_3_rlc.bin", "psp_13_0_6_sos.bin", "psp_13_0_6_ta.bin", "smu_13_0_6.bin"]


@pytest.fixture(scope="module")
def firmware(host):
    return FIRMWARE[host.system_info.distribution]


def test_firmware_package_installed_and_held(host, firmware):
    assert host.package(firmware).is_installed
    assert firmware in host.check_output("apt-mark showhold").split()


@pytest.mark.parametrize("name", MI300_FILES)
def test_mi300_firmware_files_on_disk(host, name):
    found = host.run("ls /lib/firmware/amdgpu/%s* /usr/lib/firmware/amdgpu/%s* 2>/dev/null" % (name, name)).stdout.split()
    assert found, name


def test_unattended_upgrades_keep_away(host, firmware):
    f = host.file("/etc/apt/apt.conf.d/51gpuops-amd-driver")
    assert f.exists and f.user == "root" and f.mode == 0o644
    text = f.content_string
    assert "Unattended-Upgrade::Package-Blacklist" in text and '"%s$";' % firmware.replace("-", "\\-") in text, text


@pytest.mark.parametrize("group", ["render", "video"])
def test_gpu_user_in_group(host, group):
    assert host.group(group).exists
    assert group in host.user("gpuuser").groups


def test_no_dkms_and_no_amd_repository(host):
    assert not host.package("amdgpu-dkms").is_installed
    assert not host.file("/etc/apt/sources.list.d/amdgpu.sources").exists
