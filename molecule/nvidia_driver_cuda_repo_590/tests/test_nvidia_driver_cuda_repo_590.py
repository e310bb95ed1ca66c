"""Driver branches 590 and later from NVIDIA's repository (signed fixture, see molecule.yml), in the layout of NVIDIA's
Driver Installation Guide r590, section 4.1: names without the branch, the branch locked by nvidia-driver-pinning-<b>.

The tests run in this order (pytest keeps the file's order); each builds on the state the one before left: the state
converge left (590); a --check run to 595 and a refused branch change nothing; playbooks/upgrade_driver.yml --check
prints its plan, then moves the host to 595; the role on 595 again changes nothing; a hold someone released is reported
by --check and set again by the role; after branch 610 is published, an unrelated `apt-get upgrade` leaves 595 in place.
"""
import os
import re
import subprocess

from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook as playbook

EPHEMERAL = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
PROJECT = os.environ["MOLECULE_PROJECT_DIRECTORY"]
SCENARIO = os.path.join(PROJECT, "molecule", "nvidia_driver_cuda_repo_590")
INSTANCE = "gpuops-nvidia_driver_cuda_repo_590"
VERSIONS = {"590": "590.48.01-1", "595": "595.58.03-1", "610": "610.43.02-1"}
DRIVER = ["cuda-drivers", "nvidia-fabricmanager"]
IGNORE_PINS = "-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/nonexistent"


def role(*args):
    return playbook(os.path.join(SCENARIO, "converge.yml"), *args)


def upgrade(*args):
    return playbook(os.path.join(PROJECT, "playbooks", "upgrade_driver.yml"), *args)


def changed(out):
    return [int(n) for n in re.findall(r"\bchanged=(\d+)", out)]


def state(host):
    """Every installed package with its version and selection (hold or install): what a run must not change."""
    return host.check_output("dpkg-query -W -f='${Package} ${Version} ${db:Status-Want}\\n' | sort")


def version(host, name):
    return host.package(name).version if host.package(name).is_installed else None


def holds(host):
    return host.check_output("apt-mark showhold").split()


def candidate(host, name, options=""):
    out = host.check_output("apt-cache %s policy %s" % (options, name))
    return re.search(r"Candidate: (\S+)", out).group(1), out


def assert_locked_on(host, branch):
    for name in DRIVER:
        assert version(host, name) == VERSIONS[branch], name
    pins = [p for p in host.check_output("dpkg-query -W -f='${Package}\\n' 'nvidia-driver-pinning-*' 2>/dev/null || true").split()
            if host.package(p).is_installed]
    assert pins == ["nvidia-driver-pinning-%s" % branch]
    assert {"nvidia-driver-pinning-%s" % branch, "cuda-drivers", "nvidia-fabricmanager"} <= set(holds(host))
    # The preferences file is the pinning package's, not the role's.
    assert host.check_output("dpkg -S /etc/apt/preferences.d/nvidia-driver-pin").startswith("nvidia-driver-pinning-%s:" % branch)
    assert "Pin: version %s.*" % branch in host.file("/etc/apt/preferences.d/nvidia-driver-pin").content_string
    # The fake nvidia-smi of the installed cuda-drivers: the "loaded" driver is the branch's.
    assert "<driver_version>%s<" % VERSIONS[branch][:-2] in host.check_output("nvidia-smi -q -x")


def test_converge_installed_590_although_595_is_newer(host):
    assert_locked_on(host, "590")
    # The pinning package makes 590 apt's candidate while the repository's newest is 595 ...
    cand, policy = candidate(host, "cuda-drivers")
    assert cand == VERSIONS["590"], policy
    assert VERSIONS["595"] in policy, policy
    # ... and without the preferences files (negative control) apt would take 595.
    assert candidate(host, "cuda-drivers", IGNORE_PINS)[0] == VERSIONS["595"]
    # Installed before the driver, as the guide suggests (dpkg's log in order).
    log = host.file("/var/log/dpkg.log").content_string
    assert log.index(" install nvidia-driver-pinning-590:") < log.index(" install cuda-drivers:")


def test_check_mode_to_595_changes_nothing(host):
    before = state(host)
    rc, out = role("--check", "-e", "nvidia_driver_branch=595")
    assert rc == 0, out
    # It reports the move: the holds of the 590 packages would be released.
    release = [t for t in out.split("TASK [") if t.startswith("gpuops.gpu_server.nvidia_driver : Release the holds")]
    assert len(release) == 1 and "changed: [%s] => (item=cuda-drivers)" % INSTANCE in release[0], out
    assert state(host) == before


def test_a_branch_the_repository_lacks_is_refused_before_any_change(host):
    before = state(host)
    rc, out = role("-e", "nvidia_driver_branch=610")
    assert rc != 0, out
    flat = re.sub(r"\s+", " ", out)
    assert "nvidia_driver_branch=610 is not in NVIDIA's repository" in flat, out
    assert "nvidia-driver-pinning-610, cuda-drivers" in flat, out
    assert "Nothing was changed." in flat, out
    assert state(host) == before


def test_upgrade_playbook_check_prints_the_plan_and_changes_nothing(host):
    before = state(host)
    rc, out = upgrade("--check", "-e", "gpuops_upgrade_driver_branch=595")
    assert rc == 0, out
    assert "PLAN %s: driver 590.48.01 -> branch 595" % INSTANCE in re.sub(r"\s+", " ", out), out
    assert state(host) == before


def test_upgrade_playbook_moves_to_595(host):
    rc, out = upgrade("-e", "gpuops_upgrade_driver_branch=595")
    assert rc == 0, out
    assert "%s: upgraded 590.48.01 -> 595.58.03" % INSTANCE in out, out
    assert_locked_on(host, "595")
    log = host.file("/var/log/dpkg.log").content_string
    assert re.search(r" remove nvidia-driver-pinning-590:all 590-1 ", log, re.M) or \
        re.search(r" remove nvidia-driver-pinning-590:\S+ 590-1 ", log, re.M), log
    assert re.search(r" upgrade cuda-drivers:\S+ 590\.48\.01-1 595\.58\.03-1$", log, re.M), log
    assert host.service("nvidia-fabricmanager").is_enabled


def test_the_role_on_595_again_changes_nothing(host):
    rc, out = role("-e", "nvidia_driver_branch=595")
    assert rc == 0, out
    assert changed(out) == [0], out


def test_a_lost_hold_is_reported_in_check_mode_and_set_again(host):
    # Someone released a hold: --check says the role would hold it again (its verify does not judge a lock this run
    # would change), and changes nothing; the real run holds it again.
    host.run_expect([0], "apt-mark unhold nvidia-fabricmanager")
    before = state(host)
    rc, out = role("--check", "-e", "nvidia_driver_branch=595")
    assert rc == 0, out
    hold = [t for t in out.split("TASK [") if t.startswith("gpuops.gpu_server.nvidia_driver : Hold the driver packages")]
    assert len(hold) == 1 and "changed: [%s] => (item=nvidia-fabricmanager)" % INSTANCE in hold[0], out
    assert state(host) == before
    rc, out = role("-e", "nvidia_driver_branch=595")
    assert rc == 0, out
    assert "nvidia-fabricmanager" in holds(host)
    assert_locked_on(host, "595")


def test_an_unrelated_apt_upgrade_leaves_the_branch(host):
    # Publish branch 610 (the same key signs it) as NVIDIA's repository would.
    subprocess.run(["docker", "cp", os.path.join(EPHEMERAL, "apt_repo_next") + "/.",
                    "%s:/srv/gpuops-apt-fixture/" % INSTANCE], check=True)
    # docker cp keeps the build's times, older than the copy prepare served: http.server would answer apt's
    # If-Modified-Since with 304 and apt keep the old index.
    host.run_expect([0], "find /srv/gpuops-apt-fixture -type f -exec touch {} +")
    host.run_expect([0], "apt-get update")
    cand, policy = candidate(host, "cuda-drivers")
    assert VERSIONS["610"] in policy, policy
    assert cand == VERSIONS["595"], policy
    # Negative control: without the pinning package's preferences apt would move to 610.
    assert candidate(host, "cuda-drivers", IGNORE_PINS)[0] == VERSIONS["610"]
    host.run_expect([0], "DEBIAN_FRONTEND=noninteractive apt-get -y upgrade")
    assert_locked_on(host, "595")
    assert "610.43.02" not in host.file("/var/log/dpkg.log").content_string
