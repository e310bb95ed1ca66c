"""Verify the nvidia_driver role in bake mode on real distribution kernels: every installed kernel has an NVIDIA
module whose vermagic is that kernel's release and whose version is the installed driver, Canonical's signature on
Ubuntu's prebuilt modules where one of the installed driver's version exists (DKMS where Canonical's module is of
another driver version), the nouveau/nova_core blacklist in each initramfs, and a kernel installed after the role gets
its module at its install, before any reboot."""
import os
import re
import shlex

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook

# Per distribution: the kernels prepare.yml installed, the driver branch (molecule.yml's host_vars: noble takes 595, as
# Ubuntu's archive serves no 580 for it), the driver package whose version the modules must carry, and the DKMS
# module's file name. Where each Ubuntu kernel's module comes from follows the archive (prebuilt_current); "prebuilt":
# the kernels whose prebuilt module the archive had of the host's driver version when prepare.yml chose them (so the
# signer assertion runs; a respin of them from another driver version fails test_the_chosen_kernels_are_prebuilt,
# which names what to change).
# "flavour": the kernel a linux-image-<flavour> metapackage tracks, with the metapackage the role must add for it:
# Canonical's NVIDIA modules for the flavour where that kernel's prebuilt module is of the installed driver's version
# (the ubuntu-drivers rule), else the flavour's headers (DKMS builds the next kernel's module at its install); None
# where every kernel is installed by ABI name.
KERNELS = {
    "noble": {"kernels": ["6.8.0-149-generic", "6.8.0-1066-aws"], "branch": "595", "prebuilt": [],
              "version_package": "nvidia-headless-no-dkms-595-server", "modules": ["nvidia"],
              "flavour": ("6.8.0-149-generic", "linux-modules-nvidia-595-server-generic", "linux-headers-generic")},
    "jammy": {"kernels": ["6.8.0-1066-aws"], "branch": "595", "prebuilt": [],
              "version_package": "nvidia-headless-no-dkms-595-server", "modules": ["nvidia"], "flavour": None},
    "resolute": {"kernels": ["7.0.0-14-generic"], "branch": "580", "prebuilt": ["7.0.0-14-generic"],
                 "version_package": "nvidia-headless-no-dkms-580-server", "modules": ["nvidia"], "flavour": None},
    "bookworm": {"kernels": ["6.1.0-50-cloud-amd64"], "branch": None, "prebuilt": [],
                 "version_package": "nvidia-driver", "modules": ["nvidia", "nvidia-current"],
                 "flavour": ("6.1.0-50-cloud-amd64", None, "linux-headers-cloud-amd64")},
}
CANONICAL = "Canonical Ltd. Kernel Module Signing"
BLACKLIST = "/etc/modprobe.d/gpuops-blacklist-nouveau.conf"


@pytest.fixture(scope="module")
def expected(host):
    return KERNELS[host.system_info.codename]


def prebuilt_current(host, release, branch):
    """Whether the archive's prebuilt BRANCH module for RELEASE was built from the installed driver: the lower bound of
    its nvidia-kernel-common-BRANCH-server dependency is the installed version's upstream part. On 2026-12-05 noble's
    6.8.0-149-generic and 6.8.0-1066-aws 595 modules were built from 595.91.07 while the driver in noble-updates was
    595.112.07; at 09:40 that day (580.178.04 gone from jammy's and resolute's indexes) resolute's 7.0.0-14-generic 580
    module was built from 580.126.20, its driver, and jammy's 595.112.07 prebuilt modules answered 404. Before:
    jammy's 6.8.0-1066-aws and resolute's 7.0.0-43-generic 580 modules from 580.178.04, their driver. Read
    with apt, not with the role's code."""
    if host.system_info.distribution != "ubuntu":
        return False
    show = host.run("apt-cache show --no-all-versions linux-modules-nvidia-%s-server-%s", branch, release)
    if show.rc != 0:
        return False
    built = re.search(r"nvidia-kernel-common-%s-server \(>= ([^)]+)\)" % branch, show.stdout)
    common = host.package("nvidia-kernel-common-%s-server" % branch).version
    return bool(built) and built.group(1).split("-")[0] == re.sub(r"^\d+:", "", common).rsplit("-", 1)[0]


@pytest.fixture(scope="module")
def sources(host, expected):
    """Per kernel, where its module must come from: Canonical's prebuilt module where it is of the installed driver's
    version, DKMS otherwise (always on Debian)."""
    found = dict((r, "prebuilt" if prebuilt_current(host, r, expected["branch"]) else "dkms")
                 for r in expected["kernels"])
    print("module sources: %s" % found)
    return found


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


def test_prebuilt_modules_are_canonicals(host, expected, sources):
    for release, source in sources.items():
        info = modinfo(host, release, expected["modules"])
        if source == "prebuilt":
            assert info["signer"] == CANONICAL, info
            assert "/kernel/nvidia-" in info["filename"], info
        else:
            assert "/updates/dkms/" in info["filename"], info


def test_the_chosen_kernels_are_prebuilt(host, expected, sources):
    # Without this the signer assertion above could pass by never running (every kernel DKMS, as on noble).
    for release in expected["prebuilt"]:
        assert sources[release] == "prebuilt", (
            "the archive's prebuilt module of %s is no longer built from the installed driver: choose another kernel in "
            "prepare.yml (and KERNELS here) whose linux-modules-nvidia-%s-server-<release> candidate depends on "
            "nvidia-kernel-common-%s-server (>= the driver's version)" % (release, expected["branch"], expected["branch"]))


def test_no_dkms_where_every_kernel_has_a_prebuilt_module(host, sources):
    if all(s == "prebuilt" for s in sources.values()):
        out = host.run("dpkg-query -W -f='${Package} ${Status}\\n' 'nvidia-dkms-*' 'nvidia-driver-*'").stdout
        assert "install ok installed" not in out, out


def test_the_tracked_flavour_has_its_metapackage(host, expected, sources):
    # Ubuntu: linux-modules-nvidia-<branch>-server-<flavour> where a linux-image-<flavour> metapackage is installed and
    # its kernel's prebuilt module is of the installed driver's version (the ubuntu-drivers rule), else the flavour's
    # headers metapackage and never the NVIDIA one (it would bring a module of another driver version with the next
    # kernel); none for kernels installed by ABI name. Debian: the flavour's headers metapackage.
    holds = host.check_output("apt-mark showhold").split()
    if expected["flavour"]:
        release, nvidia_meta, headers_meta = expected["flavour"]
        meta, absent = (nvidia_meta, None) if sources[release] == "prebuilt" else (headers_meta, nvidia_meta)
        assert host.package(meta).is_installed, (release, sources[release], meta)
        if absent:
            assert not host.package(absent).is_installed, (release, sources[release], absent)
        assert meta not in holds, (meta, holds)
    if host.system_info.distribution == "ubuntu":
        # No NVIDIA modules metapackage for a flavour the host tracks by no linux-image metapackage.
        tracked = expected["flavour"][0] if expected["flavour"] else None
        for release in expected["kernels"]:
            if release != tracked:
                flavour = release.split("-", 2)[2]
                meta = "linux-modules-nvidia-%s-server-%s" % (expected["branch"], flavour)
                assert not host.package(meta).is_installed, meta
    # Each kernel's module package is held (Canonical's prebuilt one), or the DKMS package and the kernel's headers
    # are installed.
    for release, source in sources.items():
        if source == "prebuilt":
            assert "linux-modules-nvidia-%s-server-%s" % (expected["branch"], release) in holds, (release, holds)
        elif host.system_info.distribution == "ubuntu":
            assert host.package("nvidia-dkms-%s-server" % expected["branch"]).is_installed, release
            assert host.package("linux-headers-%s" % release).is_installed, release


def test_the_role_installed_no_kernel(host, expected):
    # The flavour metapackages were pinned to the installed kernel generation: the role added no kernel.
    assert sorted(host.check_output("ls /lib/modules").split()) == sorted(expected["kernels"])


def test_every_initramfs_carries_the_blacklist(host, expected):
    """The blacklist on disk and the copy inside each kernel's initramfs (extracted with unmkinitramfs) name nouveau
    and nova_core, the upstream driver of kernels from 6.15 on that would bind the GPU before nvidia where the kernel
    is built with it. None of the kernels here is: Ubuntu 26.04's 7.0.0-43-generic and 7.0.0-44-generic have
    "# CONFIG_NOVA_CORE is not set" (their /boot/config, read 2026-12-05), so the line is checked in every initramfs
    instead; each kernel's setting is printed."""
    on_disk = host.file(BLACKLIST).content_string
    assert "blacklist nouveau" in on_disk and "blacklist nova_core" in on_disk, on_disk
    for release in expected["kernels"]:
        print("%s: %s" % (release, host.run("grep -h 'CONFIG_NOVA_CORE' /boot/config-%s", release).stdout.strip()
                          or "no CONFIG_NOVA_CORE line"))
        listing = host.check_output("lsinitramfs /boot/initrd.img-%s", release)
        assert BLACKLIST.lstrip("/") in listing.split(), release
        tree = host.check_output("mktemp -d")
        try:
            host.check_output("unmkinitramfs /boot/initrd.img-%s %s", release, tree)
            copies = host.check_output("find %s -path '*%s'", tree, BLACKLIST).split()
            assert copies, (release, "no blacklist in the initramfs")
            for copy in copies:
                content = host.file(copy).content_string
                assert "blacklist nouveau" in content and "blacklist nova_core" in content, (release, copy, content)
        finally:
            host.run("rm -rf %s", tree)


def test_a_kernel_installed_later_gets_its_module_before_any_reboot(host, expected, driver_version):
    """The flavour's next kernel, installed by apt after the role, comes with its module; the old kernel keeps its own.
    noble: linux-image-generic moves 6.8.0-149 -> 6.8.0-151 with the metapackage the role added or kept for the
    flavour: Canonical's NVIDIA modules (prebuilt) where the old kernel's prebuilt module was of the driver's version,
    else the headers, and DKMS builds at the new kernel's install (so on 2026-12-05). bookworm: linux-image-cloud-amd64 and the
    linux-headers-cloud-amd64 the role added move to the -security kernel; DKMS builds at its install."""
    codename = host.system_info.codename
    if not expected["flavour"]:
        pytest.skip("%s's kernels are installed by ABI name: no metapackage brings a newer one" % codename)
    before = set(host.check_output("ls /lib/modules").split())
    # An operator's full upgrade: the held driver stays; the image metapackage and the one the role added (the NVIDIA
    # modules or the headers) move to the next generation together.
    command = "apt-get dist-upgrade -y -q --no-install-recommends"
    host.check_output("DEBIAN_FRONTEND=noninteractive " + command)
    new = sorted(set(host.check_output("ls /lib/modules").split()) - before)
    assert new, "no new kernel installed"
    for release in new:
        info = modinfo(host, release, expected["modules"])
        assert info, "no NVIDIA module for the new kernel %s" % release
        assert info["vermagic"].split()[0] == release and info["version"] == driver_version, (release, info)
        # Canonical's prebuilt module where the host builds none with DKMS; where the role installed DKMS for another
        # kernel (a prebuilt module of another driver version), dkms autoinstall builds the new kernel's module too at
        # its install, and depmod prefers it (updates/ before kernel/): either carries the driver's version.
        if codename == "noble" and not host.package("nvidia-dkms-%s-server" % expected["branch"]).is_installed:
            assert info["signer"] == CANONICAL, info
        assert BLACKLIST.lstrip("/") in host.check_output("lsinitramfs /boot/initrd.img-%s", release).split()
        print("new kernel %s: %s" % (release, info))
    for release in expected["kernels"]:
        assert modinfo(host, release, expected["modules"])["version"] == driver_version, release


# ---- Refusals on real kernel files (Debian 12, after the upgrade above): the role runs again for a kernel it cannot
# give a module, and leaves every other kernel's module as it was ----

CONVERGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "converge.yml")


def run_role(host):
    """converge.yml's role run on HOST alone (refuse.yml's cases left out, as in the idempotence pass) ->
    (exit status, output)."""
    return molecule_playbook(CONVERGE, "--limit", host.backend.host, "--skip-tags", "molecule-idempotence-notest")


def module_files(host):
    """Every NVIDIA module file under /lib/modules with its sha256 (what a refused or failed run must not touch)."""
    return host.check_output("find /lib/modules -name 'nvidia*.ko*' -type f -exec sha256sum {} + | sort")


def packages(host):
    return host.check_output("dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\\n'")


def newest_kernel(host, pattern, with_headers):
    """The newest linux-image-<release> apt knows whose release matches PATTERN, is not installed, and whose
    linux-headers-<release> apt knows (WITH_HEADERS) or does not know any more."""
    images = host.check_output("apt-cache pkgnames linux-image-").split()
    headers = set(host.check_output("apt-cache pkgnames linux-headers-").split())
    installed = set(host.check_output("ls /lib/modules").split())
    found = [m.group(1) for m in (re.fullmatch("linux-image-(%s)" % pattern, n) for n in images) if m]
    found = [r for r in found if r not in installed and (("linux-headers-" + r) in headers) == with_headers]
    found.sort(key=lambda r: [int(x) for x in re.findall(r"\d+", r)])
    return found[-1] if found else None


def install_kernel(host, *names):
    # INITRD=No: Debian's initramfs hook (/etc/kernel/postinst.d/initramfs-tools) makes no initramfs; the refusals come
    # before the role looks at one.
    host.check_output("INITRD=No DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "
                      + " ".join(shlex.quote(name) for name in names))


def test_a_kernel_whose_headers_left_the_archive_is_refused_before_any_change(host):
    """A real case: bookworm-security still indexes the signed images of earlier 6.1 kernels (linux-signed-amd64) after
    their headers (source linux) were superseded, so a host that installed one weeks ago cannot get its headers now
    (6.1.0-52-cloud-amd64 on 2026-12-05). The role refuses before any change, naming the kernel and the fix."""
    if host.system_info.codename != "bookworm":
        pytest.skip("the archive case is Debian 12's (bookworm-security's kernel images without their headers)")
    release = newest_kernel(host, r"6\.1\.0-\d+-cloud-amd64", with_headers=False)
    assert release, ("bookworm's archive indexes no 6.1 cloud kernel image without its headers any more: choose "
                     "another way to show the refusal")
    install_kernel(host, "linux-image-" + release)
    try:
        before = (packages(host), module_files(host))
        rc, out = run_role(host)
        assert rc != 0, out[-3000:]
        assert "Headers for kernel %s are not in the archive any more (linux-headers-%s)" % (release, release) in out, \
            out[-3000:]
        assert "apt-get purge linux-image-%s" % release in out and "Nothing was changed" in out, out[-3000:]
        assert (packages(host), module_files(host)) == before
        print("refused: %s" % re.search(r"Headers for kernel [^\n]*", out).group(0)[:400])
    finally:
        host.run("DEBIAN_FRONTEND=noninteractive apt-get purge -y -q linux-image-%s", release)


def test_a_dkms_build_failure_quotes_the_first_error_and_the_old_modules_stay(host):
    """Kernel 6.12 (bookworm's newer kernel line) with its headers made to fail any compile (a missing include in
    kconfig.h, which kbuild puts in front of every file): the role installs the kernel's headers for DKMS, the build
    fails, and the role names the kernel and quotes the build log's first error; every other kernel keeps its module,
    byte for byte."""
    if host.system_info.codename != "bookworm":
        pytest.skip("one distribution's DKMS build is enough to show the message (Debian 12)")
    release = newest_kernel(host, r"6\.12\.\d+\+deb12-cloud-amd64", with_headers=True)
    assert release, "bookworm's archive indexes no 6.12 cloud kernel with its headers any more"
    common = "linux-headers-%s-common" % release.rsplit("-cloud-amd64", 1)[0]
    install_kernel(host, "linux-image-" + release, common)
    poisoned = "/usr/src/%s/include/linux/kconfig.h" % common
    try:
        host.check_output("sed -i '1i #include \"gpuops-test-kernel-too-new.h\"' %s", poisoned)
        before = module_files(host)
        rc, out = run_role(host)
        assert rc != 0, out[-3000:]
        assert "DKMS could not build the module for kernel %s" % release in out, out[-3000:]
        assert "fatal error: gpuops-test-kernel-too-new.h: No such file or directory" in out, out[-3000:]
        assert "Kernels that had a module keep it" in out, out[-3000:]
        assert module_files(host) == before
        assert not modinfo(host, release, ["nvidia", "nvidia-current"])
        print("refused: %s" % re.search(r"DKMS could not build[^\n]*", out).group(0)[:400])
    finally:
        host.run("sed -i '/gpuops-test-kernel-too-new/d' %s", poisoned)
        host.run("DEBIAN_FRONTEND=noninteractive apt-get purge -y -q %s %s %s",
                 "linux-headers-" + release, "linux-image-" + release, common)
