"""Verify the CUDA-repository path against the signed fixture repository: key, signed-by, pin-600, holds,
Fabric Manager at the driver's exact version, and the branch change 535 -> 550 done by side_effect."""
import re

from ansible_collections.gpuops.gpu_server.tests.fixtures.apt_repo.repo_checks import assert_vendor_repo

PIN = "/etc/apt/preferences.d/cuda-repository-pin-600"
REPO = "http://127.0.0.1:8765"


def test_repository_trusted_only_with_its_keyring(host):
    assert_vendor_repo(host, "cuda", REPO + "/")
    listing = host.run("ls /etc/apt/trusted.gpg.d/").stdout.split()
    assert not [f for f in listing if "cuda" in f or "nvidia" in f], listing


def test_pin_600(host):
    pin = host.file(PIN).content_string
    assert re.search(r"^Package: \*\nPin: release l=NVIDIA CUDA\nPin-Priority: 600$", pin, re.M), pin
    policy = host.check_output("apt-cache policy cuda-drivers-535")
    assert re.search(r"600 %s\s+Packages" % re.escape(REPO), policy), policy
    # The pin makes the repository win over Debian (500), even with a lower version.
    ml = host.check_output("apt-cache policy libnvidia-ml1")
    assert re.search(r"Candidate: 1\.0\.0-1$", ml, re.M), ml


def test_signature_is_checked(host):
    # apt accepted the repository because the InRelease signature matched the keyring.
    out = host.check_output("apt-get -o Debug::Acquire::gpgv=0 update 2>&1 | grep -F '%s' || true" % REPO)
    assert "NO_PUBKEY" not in out and "not signed" not in out


def test_new_branch_installed_and_held(host):
    holds = host.check_output("apt-mark showhold").split()
    for name in ["cuda-drivers-550", "nvidia-fabricmanager-550"]:
        assert host.package(name).is_installed
        assert name in holds, holds


def dpkg_log(host):
    return host.file("/var/log/dpkg.log").content_string


def test_old_branch_released_and_replaced(host):
    # converge installed and held 535; side_effect moved to 550, which conflicts with it: the holds had to be
    # released for apt to replace the 535 packages.
    log = dpkg_log(host)
    assert re.search(r" install cuda-drivers-535:amd64 <none> 535\.261\.03-1$", log, re.M)
    assert re.search(r" remove cuda-drivers-535:amd64 535\.261\.03-1 ", log, re.M)
    holds = host.check_output("apt-mark showhold").split()
    assert "cuda-drivers-535" not in holds and "nvidia-fabricmanager-535" not in holds, holds
    assert not host.package("cuda-drivers-535").is_installed


def test_fabricmanager_at_the_drivers_exact_version(host):
    assert host.package("nvidia-fabricmanager-550").version == host.package("cuda-drivers-550").version
    # On 535 too, although the repository offered a newer fabric manager (535.288.01) than the driver.
    log = dpkg_log(host)
    assert re.search(r" install nvidia-fabricmanager-535:amd64 <none> 535\.261\.03-1$", log, re.M), log
    assert "535.288.01" not in log


def test_services_enabled(host):
    assert host.service("nvidia-fabricmanager").is_enabled
    assert host.service("nvidia-persistenced").is_enabled


def test_fixtures_are_fixtures(host):
    desc = host.check_output("dpkg-query -W -f='${Description}' cuda-drivers-550")
    assert "gpuops test fixture" in desc


def test_unattended_upgrades_blacklist(host):
    assert '"^cuda-drivers";' in host.file("/etc/apt/apt.conf.d/51gpuops-nvidia-driver").content_string
