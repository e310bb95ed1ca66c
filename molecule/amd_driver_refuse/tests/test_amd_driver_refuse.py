"""Every refusal of amd_driver_refuse happened before any change: no package, no hold, no file of the role."""
import pytest


def test_no_package_installed_or_removed(host):
    before = host.file("/root/gpuops-dpkg-before").content_string
    now = host.check_output("dpkg-query -W -f '${Package} ${Version} ${Status}\\n'")
    assert now.strip() == before.strip()


def test_nothing_held(host):
    assert host.check_output("apt-mark showhold") == host.file("/root/gpuops-holds-before").content_string.strip()


@pytest.mark.parametrize("path", [
    "/etc/apt/apt.conf.d/51gpuops-amd-driver",
    "/etc/apt/sources.list.d/amdgpu.sources",
    "/etc/apt/preferences.d/amdgpu",
    "/etc/apt/keyrings/amdgpu.asc",
])
def test_nothing_written(host, path):
    assert not host.file(path).exists


def test_the_kernel_files_are_real(host):
    """The refusal read a real amdgpu.ko of the distribution's kernel, through modinfo."""
    release = host.file("/root/gpuops-test-kernel").content_string.strip()
    out = host.check_output("find /lib/modules/%s -name 'amdgpu.ko*' -exec modinfo -F firmware {} +" % release)
    assert "amdgpu/aldebaran_mec.bin" in out
    assert ("amdgpu/gc_9_4_3_mec.bin" in out) == release.startswith("6.12")
