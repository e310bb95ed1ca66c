"""Verify the nvidia_driver role in a container of each platform: user-space driver of the branch the platform
maintains (nvidia_driver_branch=auto), held, honest about no driver."""
import re

import pytest
from testinfra.modules.ansible import AnsibleException

# Per platform: the user-space packages and the branch that auto installs.
PLATFORMS = {
    ("debian", "12"): (["nvidia-smi", "libnvidia-ml1", "libcuda1"], "535"),
    ("debian", "13"): (["nvidia-smi", "libnvidia-ml1", "libcuda1"], "550"),
    ("ubuntu", "22.04"): (["nvidia-utils-580-server", "libnvidia-compute-580-server"], "580"),
    ("ubuntu", "24.04"): (["nvidia-utils-580-server", "libnvidia-compute-580-server"], "580"),
    ("ubuntu", "26.04"): (["nvidia-utils-580-server", "libnvidia-compute-580-server"], "580"),
}


def pinned_version(host):
    """The exact driver version the inventory pins (nvidia_driver_version: inventories/demo-platforms), or ''."""
    return str(host.ansible.get_variables().get("nvidia_driver_version") or "")


@pytest.fixture(scope="module")
def expected(host):
    info = host.system_info
    names, branch = PLATFORMS[(info.distribution, info.release.split(".")[0] if info.distribution == "debian" else info.release)]
    version = pinned_version(host)
    if version:
        # nvidia_driver_branch=auto takes the pinned version's branch.
        pinned = version.split(".", maxsplit=1)[0]
        names, branch = [n.replace("-%s-" % branch, "-%s-" % pinned) for n in names], pinned
    return names, branch


def test_driver_at_the_pinned_version(host, expected):
    """Where the inventory pins an exact version: every driver package at it, apt pinned to its source package."""
    version = pinned_version(host)
    if not version:
        pytest.skip("no nvidia_driver_version in this inventory")
    for name in expected[0]:
        assert host.package(name).version.startswith(version + "-"), (name, host.package(name).version)
    policy = host.check_output("apt-cache policy %s" % expected[0][0])
    assert re.search(r"Candidate: %s-" % re.escape(version), policy), policy
    pin = host.file("/etc/apt/preferences.d/gpuops-nvidia-driver-version").content_string
    assert "Package: src:nvidia-graphics-drivers-%s-server" % expected[1] in pin, pin


def test_userspace_packages_installed_at_the_branch(host, expected):
    names, branch = expected
    for name in names:
        pkg = host.package(name)
        assert pkg.is_installed, name
        assert pkg.version.startswith(branch + "."), (name, pkg.version)


def test_packages_held(host, expected):
    holds = host.check_output("apt-mark showhold").split()
    for name in expected[0]:
        assert name in holds, name


def test_nvidia_smi_belongs_to_the_branch(host, expected):
    # The binary on PATH comes from a package of the branch the role held, not from a transition's target.
    # Debian reaches it through alternatives (/usr/lib/nvidia/current/nvidia-smi): ask dpkg about the real file.
    owner = host.check_output("dpkg -S \"$(readlink -f /usr/bin/nvidia-smi)\"").split(":")[0]
    version = host.package(owner).version
    assert version.startswith(expected[1] + "."), (owner, version)


def test_no_package_of_a_refused_transitional_branch(host):
    # Ubuntu: the converge first asked for 535 (a transition to 580) and was refused before any install.
    out = host.run("dpkg-query -W -f='${Package} ${Status}\\n' '*535-server*'").stdout
    assert "install ok installed" not in out, out


def test_no_kernel_module_in_container(host):
    # The host owns the kernel: no DKMS module, no headers, no initramfs tools pulled in by the role.
    out = host.run("dpkg-query -W -f='${Package} ${Status}\\n' 'nvidia-kernel-dkms' 'nvidia-dkms-*' "
                   "'linux-headers-*' 'linux-modules-nvidia-*' 'nvidia-driver' 'nvidia-driver-*'").stdout
    assert "install ok installed" not in out, out


def test_nouveau_blacklisted(host):
    f = host.file("/etc/modprobe.d/gpuops-blacklist-nouveau.conf")
    assert f.exists and f.mode == 0o644
    assert re.search(r"^blacklist nouveau$", f.content_string, re.M)
    assert re.search(r"^options nouveau modeset=0$", f.content_string, re.M)
    # nova_core (Linux 6.15 on, so Ubuntu 26.04's 7.0 kernels) would take GSP-based GPUs as nouveau would.
    assert re.search(r"^blacklist nova_core$", f.content_string, re.M)


def test_unattended_upgrades_blacklist(host):
    f = host.file("/etc/apt/apt.conf.d/51gpuops-nvidia-driver")
    assert f.exists
    assert "Unattended-Upgrade::Package-Blacklist" in f.content_string
    assert '"^nvidia-";' in f.content_string and '"^libcuda1";' in f.content_string
    # apt itself parses the drop-in.
    dump = host.check_output("apt-config dump Unattended-Upgrade::Package-Blacklist")
    assert "^libnvidia-" in dump


def test_real_nvidia_smi_says_no_driver(host):
    # The real nvidia-smi, without a GPU or kernel module: NVML cannot start.
    r = host.run("nvidia-smi")
    assert r.rc != 0
    assert "NVML" in r.stdout + r.stderr or "couldn't communicate with the NVIDIA driver" in r.stdout + r.stderr


def test_gpu_facts_reports_no_driver_honestly(host):
    # Run the collection's module on the container the way the role does.
    r = host.ansible("gpuops.gpu_server.gpu_facts", "", check=False)
    nvidia = r["ansible_facts"]["nvidia"]
    assert nvidia["driver_loaded"] is False
    assert nvidia["reason"], nvidia
    assert nvidia["gpu_count"] == 0


def gpu_health(host, args):
    """gpu_health's result; testinfra raises on a failed module (older Ansible) or returns it (2.19 drops "failed")."""
    try:
        return host.ansible("gpuops.gpu_server.gpu_health", args, check=False)
    except AnsibleException as failed:
        return failed.result


def test_gpu_health_fails_without_a_driver_naming_the_check(host):
    # The same real nvidia-smi: gpu_health fails (its default fail_on) naming the driver, and with fail_on=never it
    # returns the same verdict without failing (no failure message).
    result = gpu_health(host, "")
    assert result["status"] == "fail", result
    assert result.get("msg", "").startswith("GPU health is fail: NVIDIA driver not usable"), result
    report = gpu_health(host, "fail_on=never")
    assert "msg" not in report and not report.get("failed"), report
    driver = [c for c in report["checks"] if c["check"] == "driver_loaded"]
    assert report["status"] == "fail" and [c["status"] for c in driver] == ["fail"], report
    assert report["nvidia"]["reason"], report["nvidia"]
