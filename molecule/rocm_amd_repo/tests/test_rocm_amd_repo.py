"""Verify the rocm role's AMD-repository path against the signed fixture: source, key, pin, and AMD's versions
installed although Ubuntu's rocminfo sorts higher (the version-skew trap)."""
import pytest

from ansible_collections.gpuops.gpu_server.tests.fixtures.apt_repo.repo_checks import assert_vendor_repo

AMD = {"rocminfo": "1.0.0.70101-1", "rocm-hip-runtime": "7.1.1.70101-1", "rocblas": "5.1.0.70101-1",
       "rccl": "2.27.7.70101-1", "amd-smi-lib": "26.1.0.70101-1"}
PIN = "/etc/apt/preferences.d/rocm-pin-600"
NO_PIN = "-o Dir::Etc::PreferencesParts=/nonexistent"


def test_repository_trusted_only_with_its_keyring(host):
    assert_vendor_repo(host, "rocm", "http://127.0.0.1:8765")


def test_pin_by_origin_at_600(host):
    lines = [line for line in host.file(PIN).content_string.split("\n") if line and not line.startswith("#")]
    assert lines == [
        "Package: *", "Pin: release o=repo.radeon.com", "Pin-Priority: 600"]


@pytest.mark.parametrize("name", sorted(AMD))
def test_amd_versions_installed_from_the_fixture(host, name):
    pkg = host.package(name)
    assert pkg.is_installed and pkg.version == AMD[name]
    assert "gpuops test fixture" in host.check_output("dpkg-query -W -f='${Description}' %s" % name)


def test_the_pin_is_what_makes_amd_win(host):
    """Negative control: without the pin apt's candidate for rocminfo is the archive's higher-sorting version, which
    rocm-hip-runtime's exact dependency (rocminfo (= 1.0.0.70101-1)) cannot take; with it, AMD's."""
    pinned = host.check_output("apt-cache policy rocminfo")
    assert "Candidate: %s" % AMD["rocminfo"] in pinned
    unpinned = host.check_output("apt-cache %s policy rocminfo" % NO_PIN)
    candidate = [line.split(":", 1)[1].strip() for line in unpinned.splitlines() if "Candidate:" in line][0]
    assert candidate != AMD["rocminfo"]
    assert host.run("dpkg --compare-versions %s gt %s" % (candidate, AMD["rocminfo"])).rc == 0


def test_no_cdi_spec_without_devices(host):
    assert not host.file("/etc/cdi/amd.json").exists
