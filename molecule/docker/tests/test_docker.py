"""Verify the docker role on the converged host: engine, merged daemon.json, group, and a running container."""
import json

import pytest

IMAGE = "gpuops/busybox:test"


@pytest.fixture(scope="module")
def info(host):
    return json.loads(host.check_output("docker info --format '{{json .}}'"))


@pytest.fixture(scope="module")
def image(host):
    # No registry is reachable: build an image from the host's busybox-static.
    host.check_output("tar -C / -c bin/busybox | docker import - %s" % IMAGE)
    return IMAGE


def test_engine_installed_enabled_running(host):
    assert host.package("docker.io").is_installed
    docker = host.service("docker")
    assert docker.is_enabled
    assert docker.is_running


def test_daemon_json_merged_and_user_keys_kept(host):
    config = json.loads(host.file("/etc/docker/daemon.json").content_string)
    # Written by the administrator in prepare.yml: untouched.
    assert config["registry-mirrors"] == ["https://mirror.gpuops.invalid"]
    assert config["data-root"] == "/srv/docker"
    assert config["insecure-registries"] == ["registry.gpuops.invalid:5000"]
    # Merged by the role; log-opts values are strings, as dockerd requires.
    assert config["log-driver"] == "json-file"
    assert config["log-opts"] == {"max-size": "50m", "max-file": "3"}
    assert config["default-shm-size"] == "8G"
    assert config["live-restore"] is True
    f = host.file("/etc/docker/daemon.json")
    assert (f.user, f.group, f.mode) == ("root", "root", 0o644)


def test_backup_of_the_administrators_file(host):
    backups = host.check_output("ls /etc/docker").split()
    backups = [b for b in backups if b.startswith("daemon.json.") and b.endswith("~")]
    assert len(backups) == 1, "one change, one backup: %s" % backups
    old = json.loads(host.file("/etc/docker/" + backups[0]).content_string)
    assert "log-driver" not in old and old["data-root"] == "/srv/docker"


def test_docker_info_shows_the_configuration(info):
    assert not info.get("ServerErrors"), info.get("ServerErrors")
    assert info["LoggingDriver"] == "json-file"
    assert info["DockerRootDir"] == "/srv/docker"
    # overlay2, or overlayfs where Docker 29 (Ubuntu's docker.io) uses containerd's image store.
    assert info["Driver"] in ("overlay2", "overlayfs"), info["Driver"]
    assert info["RegistryConfig"]["Mirrors"] == ["https://mirror.gpuops.invalid/"]
    assert "registry.gpuops.invalid:5000" in info["RegistryConfig"]["IndexConfigs"]
    assert info["LiveRestoreEnabled"] is True


def test_container_gets_the_log_options(host, image):
    cid = host.check_output("docker create %s /bin/busybox true" % image)
    try:
        log_config = json.loads(host.check_output("docker inspect --format '{{json .HostConfig.LogConfig}}' %s" % cid))
    finally:
        host.run("docker rm -f %s" % cid)
    assert log_config == {"Type": "json-file", "Config": {"max-size": "50m", "max-file": "3"}}


def test_container_runs(host, image):
    assert host.run("docker run --rm %s /bin/busybox true" % image).rc == 0


def test_container_gets_the_large_shm(host, image):
    # 8G default-shm-size: /dev/shm of a container is 8 GiB = 8388608 KiB.
    out = host.check_output("docker run --rm %s /bin/busybox df -k /dev/shm" % image)
    assert out.splitlines()[-1].split()[1] == "8388608", out


def test_user_in_docker_group(host):
    assert "docker" in host.user("alice").groups


def test_docker_restarted_once(host):
    # Started by the package, restarted once by the handler after the config changed; idempotence added none.
    starts = host.check_output(
        "journalctl -u docker.service -o cat --no-pager | grep -c 'API listen on /run/docker.sock' || true")
    assert int(starts) == 2, "dockerd started %s times" % starts
