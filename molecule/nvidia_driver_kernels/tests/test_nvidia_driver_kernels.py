"""Verify the nvidia_driver role in bake mode on real distribution kernels: every installed kernel has an NVIDIA
module whose vermagic is that kernel's release and whose version is the installed driver, Canonical's signature on
Ubuntu's prebuilt modules, the nouveau/nova_core blacklist in each initramfs, and (Debian) a kernel installed after the
role gets its module at its install, before any reboot."""
import re

import pytest

# Per distribution: the kernels prepare.yml installed, the driver package whose version the modules must carry, where
# each kernel's module comes from, and the DKMS module's file name.
KERNELS = {
    "noble": {"kernels": {"6.8.0-149-generic": "prebuilt", "6.8.0-1066-aws": "prebuilt",
                          "6.8.0-147-lowlatency": "prebuilt"},
              "version_package": "nvidia-headless-no-dkms-580-server", "modules": ["nvidia"],
              "metapackages": ["linux-modules-nvidia-580-server-lowlatency"]},
    "jammy": {"kernels": {"6.8.0-149-generic": "prebuilt"},
              "version_package": "nvidia-headless-no-dkms-580-server", "modules": ["nvidia"],
              "metapackages": ["linux-modules-nvidia-580-server-generic-hwe-22.04"]},
    "bookworm": {"kernels": {"6.1.0-50-cloud-amd64": "dkms"},
                 "version_package": "nvidia-driver", "modules": ["nvidia", "nvidia-current"],
                 "metapackages": ["linux-headers-cloud-amd64"]},
}
CANONICAL = "Canonical Ltd. Kernel Module Signing"
BLACKLIST = "/etc/modprobe.d/gpuops-blacklist-nouveau.conf"


@pytest.fixture(scope="module")
def expected(host):
    return KERNELS[host.system_info.codename]


@pytest.fixture(scope="module")
def driver_version(host, expected):
    version = host.package(expected["version_package"]).version
    return re.match(r"(?:\d+:)?(\d+\.\d+(?:\.\d+)?)", version).group(1)


def modinfo(host, release, names):
    for name in names:
        out = host.run("modinfo -k %s %s", release, name)
        if out.rc == 0:
            return dict((k.strip(), v.strip()) for k, _s, v in
                        (line.partition(":") for line in out.stdout.splitlines()) if k.strip() in
                        ("filename", "version", "vermagic", "signer"))
    return {}


def test_every_kernel_has_a_matching_module(host, expected, driver_version):
    for release in expected["kernels"]:
        info = modinfo(host, release, expected["modules"])
        assert info, "no NVIDIA module for %s" % release
        assert info["vermagic"].split()[0] == release, info
        assert info["version"] == driver_version, (release, info)
        print("%s: %s" % (release, info))


def test_prebuilt_modules_are_canonicals(host, expected):
    for release, source in expected["kernels"].items():
        info = modinfo(host, release, expected["modules"])
        if source == "prebuilt":
            assert info["signer"] == CANONICAL, info
            assert "/kernel/nvidia-" in info["filename"], info
        else:
            assert "/updates/dkms/" in info["filename"], info


def test_no_dkms_where_every_kernel_has_a_prebuilt_module(host, expected):
    if all(s == "prebuilt" for s in expected["kernels"].values()):
        out = host.run("dpkg-query -W -f='${Package} ${Status}\\n' 'nvidia-dkms-*' 'nvidia-driver-*'").stdout
        assert "install ok installed" not in out, out


def test_the_tracked_flavour_has_its_metapackage(host, expected):
    # Ubuntu: linux-modules-nvidia-<branch>-server-<flavour> where a linux-image-<flavour> metapackage is installed (the
    # ubuntu-drivers rule), none for kernels installed by ABI name. Debian: the flavour's headers metapackage.
    for meta in expected["metapackages"]:
        assert host.package(meta).is_installed, meta
    holds = host.check_output("apt-mark showhold").split()
    for meta in expected["metapackages"]:
        assert meta not in holds, (meta, holds)
    if host.system_info.codename == "noble":
        for meta in ("linux-modules-nvidia-580-server-generic", "linux-modules-nvidia-580-server-aws"):
            assert not host.package(meta).is_installed, meta
        assert "linux-modules-nvidia-580-server-6.8.0-1066-aws" in holds, holds


def test_the_role_installed_no_kernel(host, expected):
    # The flavour metapackages were pinned to the installed kernel generation: the role added no kernel.
    assert sorted(host.check_output("ls /lib/modules").split()) == sorted(expected["kernels"])


def test_every_initramfs_carries_the_blacklist(host, expected):
    on_disk = host.file(BLACKLIST).content_string
    assert "blacklist nouveau" in on_disk and "blacklist nova_core" in on_disk, on_disk
    for release in expected["kernels"]:
        listing = host.check_output("lsinitramfs /boot/initrd.img-%s", release)
        assert BLACKLIST.lstrip("/") in listing.split(), release


def test_a_kernel_installed_later_gets_its_module_before_any_reboot(host, expected, driver_version):
    """The flavour's next kernel, installed by apt after the role, comes with its module; the old kernel keeps its own.
    noble: linux-image-lowlatency and linux-modules-nvidia-580-server-lowlatency move together (6.8.0-147 -> 6.8.0-149,
    Canonical's prebuilt module). bookworm: linux-image-cloud-amd64 and the linux-headers-cloud-amd64 the role added
    move to the -security kernel; DKMS builds at its install."""
    codename = host.system_info.codename
    if codename == "jammy":
        pytest.skip("jammy's flavour is at its newest generation in the archive: nothing newer to install")
    before = set(host.check_output("ls /lib/modules").split())
    # An operator's full upgrade: the held driver stays; the image metapackage and the one the role added (noble: the
    # NVIDIA modules, bookworm: the headers) move to the next generation together.
    command = "apt-get dist-upgrade -y -q --no-install-recommends"
    host.check_output("DEBIAN_FRONTEND=noninteractive " + command)
    new = sorted(set(host.check_output("ls /lib/modules").split()) - before)
    assert new, "no new kernel installed"
    for release in new:
        info = modinfo(host, release, expected["modules"])
        assert info, "no NVIDIA module for the new kernel %s" % release
        assert info["vermagic"].split()[0] == release and info["version"] == driver_version, (release, info)
        if codename == "noble":
            assert info["signer"] == CANONICAL, info
        assert BLACKLIST.lstrip("/") in host.check_output("lsinitramfs /boot/initrd.img-%s", release).split()
        print("new kernel %s: %s" % (release, info))
    for release in expected["kernels"]:
        assert modinfo(host, release, expected["modules"])["version"] == driver_version, release
