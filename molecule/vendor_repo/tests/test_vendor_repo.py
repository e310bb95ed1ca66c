"""Verify vendor_repo on its own: deb822 source, key, pin, old source removed, nothing from the refused calls."""

from ansible_collections.gpuops.gpu_server.tests.fixtures.apt_repo.repo_checks import assert_vendor_repo


def test_repository(host):
    assert_vendor_repo(host, "fixture", "http://127.0.0.1:8765")


def test_pin_holds_the_older_version(host):
    pin = host.file("/etc/apt/preferences.d/fixture")
    assert pin.mode == 0o644
    assert "Pin: version 1.0-1" in pin.content_string
    assert host.package("gpuops-vendor-fixture").version == "1.0-1"


def test_refused_calls_wrote_nothing(host):
    assert not host.file("/etc/apt/sources.list.d/direct.sources").exists
    assert not host.file("/etc/apt/keyrings/direct.asc").exists
