"""Verify the docker role's Docker-repository path against the fixture repository: key, signed-by, packages."""
import json

import pytest

from ansible_collections.gpuops.gpu_server.tests.fixtures.apt_repo.repo_checks import assert_vendor_repo

PACKAGES = ["docker-ce", "docker-ce-cli", "containerd.io", "docker-buildx-plugin", "docker-compose-plugin"]


def test_repository_trusted_only_with_its_keyring(host):
    arch = host.check_output("dpkg --print-architecture")
    assert_vendor_repo(host, "docker", "http://127.0.0.1:8765", architectures=arch)


@pytest.mark.parametrize("name", PACKAGES)
def test_packages_from_the_repository(host, name):
    assert host.package(name).is_installed
    assert "gpuops test fixture" in host.check_output("dpkg-query -W -f='${Description}' %s" % name)
    assert "http://127.0.0.1:8765" in host.check_output("apt-cache policy %s" % name)


def test_engine_runs_with_merged_settings(host):
    assert host.service("docker").is_enabled and host.service("docker").is_running
    info = json.loads(host.check_output("docker info --format '{{json .}}'"))
    assert info["LoggingDriver"] == "json-file"
    config = json.loads(host.file("/etc/docker/daemon.json").content_string)
    assert config["log-opts"] == {"max-size": "100m", "max-file": "3"}
    assert config["default-shm-size"] == "8G"


def test_engine_is_the_one_from_the_docker_ce_package(host):
    # dockerd came with the fixture docker-ce (not with docker.io, which conflicts with it).
    assert host.check_output("dpkg -S /usr/bin/dockerd").startswith("docker-ce:")
    assert not host.package("docker.io").is_installed
    assert host.check_output("docker version --format '{{.Server.Version}}'")


def test_user_keys_absent_file_created(host):
    # No daemon.json before converge: the module created it (and /etc/docker when missing).
    f = host.file("/etc/docker/daemon.json")
    assert (f.user, f.group, f.mode) == ("root", "root", 0o644)


def test_docker_group_from_the_package(host):
    assert "docker" in host.user("root").groups
