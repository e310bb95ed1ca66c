"""Verify the nvidia_driver role in a Debian 12 container: user-space driver, held, honest about no driver."""
import re

import pytest

USERSPACE = ["nvidia-smi", "libnvidia-ml1", "libcuda1"]


@pytest.mark.parametrize("name", USERSPACE)
def test_userspace_package_installed(host, name):
    pkg = host.package(name)
    assert pkg.is_installed
    assert pkg.version.startswith("535."), pkg.version


@pytest.mark.parametrize("name", USERSPACE)
def test_package_held(host, name):
    holds = host.check_output("apt-mark showhold").split()
    assert name in holds


def test_no_kernel_module_in_container(host):
    # The host owns the kernel: no DKMS module, no headers, no initramfs tools pulled in by the role.
    out = host.run("dpkg-query -W -f='${Package} ${Status}\\n' 'nvidia-kernel-dkms' 'linux-headers-*' 'nvidia-driver'").stdout
    assert "install ok installed" not in out, out


def test_nouveau_blacklisted(host):
    f = host.file("/etc/modprobe.d/gpuops-blacklist-nouveau.conf")
    assert f.exists and f.mode == 0o644
    assert re.search(r"^blacklist nouveau$", f.content_string, re.M)
    assert re.search(r"^options nouveau modeset=0$", f.content_string, re.M)


def test_unattended_upgrades_blacklist(host):
    f = host.file("/etc/apt/apt.conf.d/51gpuops-nvidia-driver")
    assert f.exists
    assert "Unattended-Upgrade::Package-Blacklist" in f.content_string
    assert '"^nvidia-";' in f.content_string and '"^libcuda1";' in f.content_string
    # apt itself parses the drop-in.
    dump = host.check_output("apt-config dump Unattended-Upgrade::Package-Blacklist")
    assert "^libnvidia-" in dump


def test_real_nvidia_smi_says_no_driver(host):
    # The real Debian nvidia-smi, without a GPU or kernel module: NVML cannot start.
    r = host.run("nvidia-smi")
    assert r.rc != 0
    assert "NVML" in r.stdout + r.stderr


def test_gpu_facts_reports_no_driver_honestly(host):
    # Run the collection's module on the container the way the role does.
    r = host.ansible("gpuops.gpu_server.gpu_facts", "", check=False)
    nvidia = r["ansible_facts"]["nvidia"]
    assert nvidia["driver_loaded"] is False
    assert "NVML" in nvidia["reason"], nvidia["reason"]
    assert nvidia["gpu_count"] == 0
