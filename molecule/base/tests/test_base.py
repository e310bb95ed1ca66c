"""Verify the base role on the converged host: sources, packages, services, and the lock wait."""
import datetime
import re

import pytest

GPU_COMPONENTS = ["contrib", "non-free", "non-free-firmware"]


def debian_source_lines(host):
    lines = []
    for path in ["/etc/apt/sources.list"]:
        if host.file(path).exists:
            lines += [ln for ln in host.file(path).content_string.splitlines()
                      if re.match(r"^deb(-src)?\s", ln) and "/debian" in ln]
    return lines


def test_debian_sources_have_gpu_components(host):
    lines = debian_source_lines(host)
    assert lines, "no Debian archive line found in /etc/apt/sources.list"
    for line in lines:
        components = line.split()[3:]
        for c in GPU_COMPONENTS:
            assert c in components, "%s lacks %s" % (line, c)
        # each component once only, also after two converges
        assert len(components) == len(set(components)), line


def test_non_free_driver_is_visible_to_apt(host):
    # The point of non-free: the NVIDIA driver package is now installable.
    out = host.check_output("apt-cache policy nvidia-driver")
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
    exit_ts = host.check_output(
        "systemctl show gpuops-hold-dpkg-lock -p ExecMainExitTimestamp --timestamp=unix --value")
    assert exit_ts.startswith("@"), "the lock holder did not run: %r" % exit_ts
    released = datetime.datetime.fromtimestamp(int(exit_ts[1:]), tz=datetime.timezone.utc)
    started = host.check_output(
        "systemctl show gpuops-hold-dpkg-lock -p ExecMainStartTimestamp --timestamp=unix --value")
    held_from = datetime.datetime.fromtimestamp(int(started[1:]), tz=datetime.timezone.utc)
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
    # prepare installed a cloud-init stand-in whose first boot ends 10 s after prepare.
    done_at = int(host.file("/var/lib/gpuops-fake-cloud-init-done-at").content_string.strip())
    calls = [ln.split(" ", 1) for ln in host.file("/var/log/gpuops-fake-cloud-init.log").content_string.splitlines()]
    assert calls and all(call[1] == "status --wait" for call in calls), calls
    # The first run asked while the first boot was still going on, so it had to wait.
    assert int(calls[0][0]) < done_at
