"""Verify the rocm role on a fake MI250 node: the archive's ROCm installed, its libraries carrying gfx90a on disk,
the user in render and video, the CDI specification of the devices present, and Docker left alone (absent)."""
import json

import pytest

# What the role installs per platform (plugins/module_utils/_data_rocm.py DISTRIBUTION_PACKAGES).
PACKAGES = {
    "13": ["rocminfo", "rocm-smi", "amd-smi", "libamdhip64-5", "libhsa-runtime64-1", "librocblas0", "librccl1"],
    "24.04": ["rocminfo", "rocm-smi", "libamdhip64-5", "libhsa-runtime64-1", "librocblas0", "librccl1"],
    "26.04": ["rocminfo", "rocm-smi", "amd-smi", "libamdhip64-7", "libhsa-runtime64-1", "librocblas5", "librccl1"],
}
ROCBLAS = {"13": "librocblas0", "24.04": "librocblas0", "26.04": "librocblas5"}


def _release(host):
    info = host.system_info
    return info.release if info.distribution == "ubuntu" else info.release.split(".")[0]


def test_packages_installed_from_the_archive(host):
    release = _release(host)
    for name in PACKAGES[release]:
        assert host.package(name).is_installed, name
    # From the distribution's archive, not a vendor repository: no ROCm source or pin was written.
    assert not host.file("/etc/apt/sources.list.d/rocm.sources").exists
    assert not host.file("/etc/apt/preferences.d/rocm-pin-600").exists


def test_rocblas_carries_gfx90a_and_not_what_the_table_says_it_lacks(host):
    """The compat table's claim, on disk: the MI250's gfx90a has code objects; gfx942 only on Ubuntu 26.04."""
    release = _release(host)
    files = host.check_output("dpkg -L %s" % ROCBLAS[release])
    assert "gfx90a" in files
    assert ("gfx942" in files) is (release == "26.04")


def test_rocminfo_runs_and_reports_no_gpu_driver(host):
    """rocminfo is the archive's binary and runs; without amdgpu (a container) it says the kernel driver is absent."""
    cmd = host.run("rocminfo")
    assert cmd.rc != 0
    assert "ROCk module" in cmd.stdout + cmd.stderr or "kfd" in (cmd.stdout + cmd.stderr).lower()


def test_user_in_render_and_video(host):
    groups = host.user("gpuops-rocm").groups
    assert "render" in groups and "video" in groups


def test_cdi_spec_of_the_devices_present(host):
    spec = json.loads(host.file("/etc/cdi/amd.json").content_string)
    assert spec["kind"] == "amd.com/gpu"
    names = [d["name"] for d in spec["devices"]]
    assert names == [str(i) for i in range(8)] + ["all"]
    first = spec["devices"][0]["containerEdits"]["deviceNodes"]
    assert first == [{"path": "/dev/dri/renderD128", "hostPath": "/srv/gpuops-fake-dev/dri/renderD128"}]
    assert len(spec["devices"][-1]["containerEdits"]["deviceNodes"]) == 8
    assert spec["containerEdits"]["deviceNodes"] == [{"path": "/dev/kfd", "hostPath": "/srv/gpuops-fake-dev/kfd"}]
    assert host.file("/etc/cdi/amd.json").mode == 0o644


@pytest.mark.parametrize("path", ["/etc/docker/daemon.json"])
def test_docker_left_alone_where_absent(host, path):
    assert not host.file(path).exists
