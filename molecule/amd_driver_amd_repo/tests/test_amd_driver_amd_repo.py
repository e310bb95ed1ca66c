"""AMD's repository path against the signed fixture mirror: keyed, pinned for the driver packages only, held."""
import pytest

DRIVER = ["amdgpu-dkms", "amdgpu-dkms-firmware"]


@pytest.mark.parametrize("name", DRIVER)
def test_driver_package_from_the_mirror_installed_and_held(host, name):
    pkg = host.package(name)
    assert pkg.is_installed and pkg.version == "30.30.0.0.30300000-1"
    assert name in host.check_output("apt-mark showhold").split()


def test_source_is_signed_by_its_own_key(host):
    text = host.file("/etc/apt/sources.list.d/amdgpu.sources").content_string
    assert "URIs: http://127.0.0.1:8765/" in text and "Signed-By: /etc/apt/keyrings/amdgpu.asc" in text
    assert host.file("/etc/apt/keyrings/amdgpu.asc").content_string.startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----")


def test_pin_names_the_driver_packages_and_the_origin(host):
    text = host.file("/etc/apt/preferences.d/amdgpu").content_string
    assert "Package: amdgpu-dkms amdgpu-dkms-firmware" in text
    assert "Pin: release o=gpuops-amd-mirror" in text and "Pin-Priority: 600" in text


def test_pin_applies_to_the_driver_only(host):
    """apt itself: the driver's candidate comes from the mirror at 600; the mirror's older kmod stays below Debian's."""
    # apt prints a package pin's priority on the version line ("*** 30.30.0.0.30300000-1 600"), the source's own
    # (500) on the source line below it.
    policy = host.check_output("apt-cache policy amdgpu-dkms")
    assert " 30.30.0.0.30300000-1 600\n" in policy + "\n", policy
    kmod = host.check_output("apt-cache policy kmod")
    assert "Candidate: 1.0-1" not in kmod and " 1.0-1 500\n" in kmod + "\n", kmod


def test_unattended_upgrades_keep_away(host):
    text = host.file("/etc/apt/apt.conf.d/51gpuops-amd-driver").content_string
    assert '"amdgpu\\-dkms$";' in text and '"amdgpu\\-dkms\\-firmware$";' in text, text


def test_distribution_firmware_not_installed(host):
    assert not host.package("firmware-amd-graphics").is_installed
