"""Verify the nvidia_container_toolkit role against the fixture repository: repository, key, pin, hold, runtime."""
import json

import pytest

from ansible_collections.gpuops.gpu_server.tests.fixtures.apt_repo.repo_checks import assert_vendor_repo


PINNED = "1.17.8-1"
NEWER = "1.18.0-1"
PACKAGES = ["nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
            "libnvidia-container1"]
IMAGE = "gpuops/busybox:test"


def test_repository_trusted_only_with_its_keyring(host):
    assert_vendor_repo(host, "nvidia-container-toolkit", "http://127.0.0.1:8765")
    listed = host.check_output("ls /etc/apt/trusted.gpg.d/ 2>/dev/null || true")
    assert "nvidia" not in listed


def test_apt_sees_both_fixture_versions_signed(host):
    out = host.check_output("apt-cache policy nvidia-container-toolkit")
    assert "http://127.0.0.1:8765" in out
    assert NEWER in out and PINNED in out
    # The index came through signature verification (an unsigned or wrongly signed repo has no lists file).
    assert host.run("ls /var/lib/apt/lists/ | grep -q '127.0.0.1:8765_InRelease'").rc == 0


@pytest.mark.parametrize("name", PACKAGES)
def test_package_pinned_not_newest(host, name):
    pkg = host.package(name)
    assert pkg.is_installed
    assert pkg.version == PINNED, "%s is %s; the pin is %s (and %s is available)" % (name, pkg.version, PINNED, NEWER)
    desc = host.check_output("dpkg-query -W -f='${Description}' %s" % name)
    assert "gpuops test fixture" in desc


@pytest.mark.parametrize("name", PACKAGES)
def test_package_held(host, name):
    assert host.check_output("dpkg-query -W -f='${Status}' %s" % name).startswith("hold ")
    assert name in host.check_output("apt-mark showhold").split()


def test_upgrade_would_not_move_the_toolkit(host):
    out = host.check_output("apt-get -s -o Debug::NoLocking=1 upgrade")
    for name in PACKAGES:
        assert "Inst %s " % name not in out


def test_daemon_json_has_the_runtime_and_the_docker_roles_keys(host):
    config = json.loads(host.file("/etc/docker/daemon.json").content_string)
    assert config["runtimes"]["nvidia"] == {"path": "nvidia-container-runtime", "args": []}
    assert "default-runtime" not in config
    # The docker role's keys (applied in prepare.yml) are still there.
    assert config["log-driver"] == "json-file"
    assert config["log-opts"] == {"max-size": "100m", "max-file": "3"}
    assert config["default-shm-size"] == "8G"


def test_docker_lists_the_nvidia_runtime(host):
    runtimes = json.loads(host.check_output("docker info --format '{{json .Runtimes}}'"))
    assert "nvidia" in runtimes
    assert runtimes["nvidia"]["path"] == "nvidia-container-runtime"
    assert host.service("docker").is_running


def test_container_runs_with_the_nvidia_runtime(host):
    host.check_output("tar -C / -c bin/busybox | docker import - %s" % IMAGE)
    out = host.check_output("docker run --rm --runtime=nvidia %s /bin/busybox echo through-nvidia" % IMAGE)
    assert out == "through-nvidia"


def test_containerd_configured_for_the_runtime(host):
    text = host.file("/etc/containerd/config.toml").content_string
    assert text.count('containerd.runtimes.nvidia]') == 1
    assert 'BinaryName = "/usr/bin/nvidia-container-runtime"' in text
    assert host.service("containerd").is_running


def test_no_gpu_so_no_cdi_spec(host):
    # The test container has no GPU: the GPU-only steps are skipped, not faked.
    assert not host.file("/etc/cdi/nvidia.yaml").exists
