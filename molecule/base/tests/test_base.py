"""Verify the base role on the converged host: sources, packages, services, and the lock wait."""
import datetime
import re

import pytest

# The components GPU software needs, and a driver package they make installable, per distribution.
GPU_COMPONENTS = {"debian": ["contrib", "non-free", "non-free-firmware"], "ubuntu": ["restricted", "multiverse"]}
DRIVER_PACKAGE = {"debian": "nvidia-driver", "ubuntu": "nvidia-driver-580-server"}


def archive_entries(host):
    """(entry, components) of each official archive entry: one-line sources.list and deb822 .sources files."""
    entries = []
    one_line = host.file("/etc/apt/sources.list")
    if one_line.exists:
        for line in one_line.content_string.splitlines():
            if re.match(r"^deb(-src)?\s", line) and re.search(r"/(debian|debian-security|ubuntu)/?\s", line):
                fields = re.sub(r"\[[^\]]*\]\s*", "", line).split()
                entries.append((line, fields[3:]))
    for name in ("debian.sources", "ubuntu.sources"):
        deb822 = host.file("/etc/apt/sources.list.d/" + name)
        if deb822.exists:
            for line in deb822.content_string.splitlines():
                if line.startswith("Components:"):
                    entries.append((name + ": " + line, line.split()[1:]))
    return entries


def test_archive_sources_have_gpu_components(host):
    entries = archive_entries(host)
    assert entries, "no archive entry found in sources.list or a deb822 .sources file"
    for entry, components in entries:
        for c in GPU_COMPONENTS[host.system_info.distribution]:
            assert c in components, "%s lacks %s" % (entry, c)
        # each component once only, also after two converges
        assert len(components) == len(set(components)), entry


def test_driver_is_visible_to_apt(host):
    # The point of non-free / restricted: the NVIDIA driver package is now installable.
    out = host.check_output("apt-cache policy %s" % DRIVER_PACKAGE[host.system_info.distribution])
    assert re.search(r"Candidate:\s+\d", out), out


@pytest.mark.parametrize("name", ["build-essential", "dkms", "gcc", "make", "pciutils", "gnupg",
                                  "ca-certificates", "curl", "kmod", "chrony", "jq"])
def test_package_installed(host, name):
    assert host.package(name).is_installed


def test_no_kernel_headers_in_container(host):
    # The running kernel belongs to the host: the role must not install headers for it here.
    out = host.run("dpkg-query -W -f='${Package} ${Status}\\n' 'linux-headers-*'").stdout
    assert "install ok installed" not in out


def test_compiler_and_dkms_run(host):
    assert host.run("gcc --version").rc == 0
    assert host.run("dkms --version").rc == 0


def test_chrony_enabled(host):
    assert host.service("chrony").is_enabled


def test_role_waited_for_the_dpkg_lock(host):
    # prepare started a process holding /var/lib/dpkg/lock-frontend for 25 s; the role ran right after.
    # Nothing may have been installed before that process let go, and the role must have succeeded.
    def unit_time(prop):
        # systemctl's --timestamp=unix is systemd 251+ (Ubuntu 22.04 has 249): let date(1) read the timestamp.
        value = host.check_output("systemctl show gpuops-hold-dpkg-lock -p %s --value" % prop)
        assert value, "the lock holder did not run: no %s" % prop
        seconds = int(host.check_output("date -d '%s' +%%s" % value))
        return datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)

    released = unit_time("ExecMainExitTimestamp")
    held_from = unit_time("ExecMainStartTimestamp")
    assert (released - held_from).total_seconds() >= 20, "the lock was not held long enough to prove a wait"

    def stamp(line):
        return datetime.datetime.strptime(line[:19], "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)

    # dpkg.log also holds the image build's installs: look at what happened from the hold on.
    installs = [stamp(ln) for ln in host.file("/var/log/dpkg.log").content_string.splitlines()
                if " install " in ln and stamp(ln) >= held_from.replace(microsecond=0)]
    assert installs, "the role installed nothing after the lock was taken"
    during = [t for t in installs if t < released.replace(microsecond=0)]
    assert not during, "dpkg installed at %s while the lock was held (until %s)" % (during[0], released)


def test_role_waited_for_cloud_init(host):
    # prepare installed a cloud-init stand-in whose first boot ends 10 s after the first `status --wait`.
    done_at = int(host.file("/var/lib/gpuops-fake-cloud-init-done-at").content_string.strip())
    calls = [ln.split(" ", 1) for ln in host.file("/var/log/gpuops-fake-cloud-init.log").content_string.splitlines()]
    assert calls and all(call[1] == "status --wait" for call in calls), calls
    # The first run asked while the first boot was still going on, so it had to wait ...
    assert int(calls[0][0]) < done_at
    # ... and that wait ended only when the first boot was done (not cut short).
    returned = host.file("/var/log/gpuops-fake-cloud-init.returned").content_string.split()
    assert returned and int(returned[0]) >= done_at, (returned, done_at)
