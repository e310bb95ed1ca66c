"""Verify playbooks/upgrade_driver.yml (the role upgrade_driver in a play with serial) on four hosts that converge
put on branch 535 (see molecule.yml).

The tests run in this order (pytest keeps the file's order); each builds on the state the one before left:
bad variables are refused before any host is touched; --check prints the plan and changes nothing; a rollout over
hosts 1-3 with serial 1 where host 2 fails its post-check stops there, host 2 stays drained and host 3 is never
touched; a second run upgrades host 3, skips host 1 (already on 550) and skips host 4, which was sick before.
Then the kernel mode (gpuops_upgrade_kernel) on host 1, which prepare gave the release pocket's linux-image-cloud-amd64:
--check names the security pocket's new kernel and changes nothing; a run with gpuops_upgrade_reboot=false installs it,
keeps the driver and its holds, and says that the container does not boot it.
"""
import os
import re

import pytest
import testinfra

from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook

SCENARIO = "gpuops-fleet_upgrade-"
HOSTS = {n: testinfra.get_host("docker://%s%d" % (SCENARIO, n)) for n in (1, 2, 3, 4)}
EPHEMERAL = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
PROJECT = os.environ["MOLECULE_PROJECT_DIRECTORY"]
PLAYBOOK = os.path.join(PROJECT, "playbooks", "upgrade_driver.yml")
KUBECTL_LOG = os.path.join(EPHEMERAL, "kubectl.log")
# Ansible prints a role's task names after the role's name (its retry lines print the task's name alone).
ROLE = "gpuops.gpu_server.upgrade_driver : "


def upgrade(*args, **kwargs):
    """ansible-playbook upgrade_driver.yml against the scenario's inventory and ansible.cfg; (rc, output).
    branch=None leaves gpuops_upgrade_driver_branch out (the kernel mode)."""
    branch = kwargs.get("branch", "550")
    return molecule_playbook(PLAYBOOK, *((["-e", "gpuops_upgrade_driver_branch=%s" % branch] if branch else []) + list(args)))


def limit(*numbers):
    return ["--limit", ",".join("%s%d" % (SCENARIO, n) for n in numbers)]


def driver(host):
    """The installed cuda-drivers branch and the version the (fake) nvidia-smi reports."""
    installed = sorted(p for p in ("cuda-drivers-535", "cuda-drivers-550") if host.package(p).is_installed)
    return installed, host.check_output("nvidia-smi -q -x | sed -n 's:.*<driver_version>\\(.*\\)</driver_version>.*:\\1:p'")


def sched_log(host):
    return host.run("cat /var/lib/gpuops-fake-sched/log").stdout.splitlines()


def kubectl_log():
    return open(KUBECTL_LOG).read().splitlines() if os.path.exists(KUBECTL_LOG) else []


def tasks_on(out, n):
    """The task results printed for host n (ok/changed/failed/skipping lines)."""
    return re.findall(r"^(?:ok|changed|failed|fatal|skipping): \[%s%d\]" % (SCENARIO, n), out, re.M)


def test_bad_variables_are_refused_before_any_host():
    rc, out = upgrade("-e", "gpuops_upgrade_driver_branch=latest", "-e", "gpuops_upgrade_drain=lsf")
    assert rc != 0, out
    assert "gpuops_upgrade_drain" in out and "lsf" in out, out
    # Nothing ran on any host: the first batch stopped at the variables' check.
    assert "TASK [%sCheck GPU health before the upgrade]" % ROLE not in out, out
    for n in (1, 2, 3, 4):
        assert sched_log(HOSTS[n]) == []


def test_a_bad_branch_is_refused_naming_the_variable():
    rc, out = upgrade("-e", "gpuops_upgrade_driver_branch=latest", *limit(3))
    assert rc != 0, out
    assert "gpuops_upgrade_driver_branch is a branch such as 570" in re.sub(r"\s+", " ", out), out
    assert "TASK [%sCheck GPU health before the upgrade]" % ROLE not in out, out


def test_check_mode_prints_the_plan_per_batch_and_changes_nothing():
    rc, out = upgrade("--check", *limit(1, 2, 3))
    assert rc == 0, out
    # The task that the refusals above must not reach, under the name Ansible prints for it.
    assert "TASK [%sCheck GPU health before the upgrade]" % ROLE in out, out
    assert len(re.findall(r"Batch of 1: %s\d \(hosts (\d)-\1 of 3\)" % SCENARIO, out)) == 3, out
    for n, drain in ((1, "Slurm node gpuops-fleet_upgrade-1 drained"),
                     (2, "Kubernetes node gpu-node-2 cordoned and drained"),
                     (3, "drain command ['/usr/local/bin/drain-hook', 'drained']")):
        plan = re.search(r"PLAN %s%d: driver 535\.261\.03 -> branch 550;.*?then undrain" % (SCENARIO, n), out, re.S)
        assert plan, out
        assert drain in re.sub(r"\s+", " ", plan.group(0)), plan.group(0)
    for n in (1, 2, 3):
        assert driver(HOSTS[n]) == (["cuda-drivers-535"], "535.261.03")
        assert sched_log(HOSTS[n]) == []
    assert kubectl_log() == []
    assert HOSTS[1].file("/run/gpuops-fake-gpu/compute-apps").exists


@pytest.fixture(scope="module")
def rollout():
    return upgrade(*limit(1, 2, 3))


def test_rollout_stops_at_the_failed_host(rollout):
    rc, out = rollout
    assert rc != 0, out
    assert re.search(r"UPGRADE FAILED on %s2 at .*?The host stays drained \(Kubernetes node gpu-node-2" % SCENARIO,
                     out, re.S), out
    assert re.search(r"row remap", out, re.I), out
    assert re.search(r"The rollout stops here: not touched: %s3\." % SCENARIO, re.sub(r"\s+", " ", out)), out


def test_host_1_waited_for_its_job_then_upgraded_and_resumed(rollout):
    rc, out = rollout
    assert driver(HOSTS[1]) == (["cuda-drivers-550"], "550.163.01")
    assert HOSTS[1].package("nvidia-fabricmanager-550").is_installed
    assert not HOSTS[1].package("nvidia-fabricmanager-535").is_installed
    # The playbook looked at the GPU's processes until the job that was running there ended.
    assert "FAILED - RETRYING: [%s1]: Wait until no compute process is left" % SCENARIO in out, out
    assert not HOSTS[1].file("/run/gpuops-fake-gpu/compute-apps").exists
    assert sched_log(HOSTS[1]) == [
        "scontrol update nodename=%s1 state=drain reason=gpuops driver upgrade to 550" % SCENARIO,
        "scontrol update nodename=%s1 state=resume" % SCENARIO]
    assert HOSTS[1].file("/var/lib/gpuops-fake-sched/slurm-state").content_string.strip() == "idle"


def test_host_2_failed_its_post_check_and_stays_drained(rollout):
    # The role installed 550; the GPU then reported a failed row remapping: no uncordon.
    assert driver(HOSTS[2]) == (["cuda-drivers-550"], "550.163.01")
    assert kubectl_log() == [
        "kubectl cordon gpu-node-2",
        "kubectl drain gpu-node-2 --ignore-daemonsets --delete-emptydir-data --timeout=60s"]


def test_host_3_was_never_touched(rollout):
    rc, out = rollout
    assert tasks_on(out, 3) == [], out
    assert driver(HOSTS[3]) == (["cuda-drivers-535"], "535.261.03")
    assert sched_log(HOSTS[3]) == []


@pytest.fixture(scope="module")
def second_run(rollout):
    return upgrade(*limit(1, 3, 4))


def test_second_run_upgrades_host_3_and_skips_the_others(second_run):
    rc, out = second_run
    assert rc == 0, out
    flat = re.sub(r"\s+", " ", out)
    assert "%s1 already runs driver 550.163.01 (branch 550): nothing to do." % SCENARIO in flat, out
    assert re.search(r"SKIPPED %s4: GPU health is fail before the upgrade \(.*row remap" % SCENARIO, flat, re.I), out
    summary = re.search(r'"msg": \[\s*"%s1: already.*?\]' % SCENARIO, out, re.S)
    assert summary, out
    for line in ("%s1: already 550.163.01" % SCENARIO, "%s3: upgraded 535.261.03 -> 550.163.01" % SCENARIO,
                 "%s4: skipped-sick 535.261.03 (GPU health fail)" % SCENARIO):
        assert line in summary.group(0), summary.group(0)
    assert driver(HOSTS[3]) == (["cuda-drivers-550"], "550.163.01")
    assert sched_log(HOSTS[3]) == ["drain-hook drained", "drain-hook ready"]


def test_the_sick_host_was_neither_drained_nor_upgraded(second_run):
    assert driver(HOSTS[4]) == (["cuda-drivers-535"], "535.261.03")
    assert sched_log(HOSTS[4]) == []
    holds = HOSTS[4].check_output("apt-mark showhold").split()
    assert "cuda-drivers-535" in holds, holds


KERNEL_MODE = ["-e", "gpuops_upgrade_kernel=true", "-e", "nvidia_driver_branch=550"]


def kernel_state(host):
    """(installed version of linux-image-cloud-amd64, its candidate, the installed kernel image packages)."""
    policy = host.check_output("apt-cache policy linux-image-cloud-amd64")
    installed = re.search(r"Installed: (\S+)", policy).group(1)
    candidate = re.search(r"Candidate: (\S+)", policy).group(1)
    listing = host.check_output("dpkg-query -W -f '${Package} ${db:Status-Abbrev}\\n' 'linux-image-[0-9]*'")
    images = sorted(line.split()[0] for line in listing.splitlines() if line.split()[1:2] == ["ii"])
    return installed, candidate, images


@pytest.fixture(scope="module")
def kernel_update():
    """The kernel release the security pocket brings to host 1 (skips when bookworm-security has none)."""
    installed, candidate, images = kernel_state(HOSTS[1])
    if installed == candidate:
        pytest.skip("bookworm-security has no kernel newer than bookworm's %s today" % installed)
    depends = HOSTS[1].check_output("apt-cache show linux-image-cloud-amd64=%s | sed -n 's/^Depends: //p'" % candidate)
    new = re.match(r"linux-image-(\S+)", depends).group(1)
    return installed, candidate, images, new


def test_kernel_check_mode_names_the_new_kernel_and_changes_nothing(kernel_update):
    installed, candidate, images, new = kernel_update
    before = sched_log(HOSTS[1])
    rc, out = upgrade("--check", *(KERNEL_MODE + limit(1)), branch=None)
    assert rc == 0, out
    flat = re.sub(r"\s+", " ", out)
    assert "kernel updates, driver branch kept (check mode: the plan only)" in flat, out
    plan = re.search(r"PLAN %s1: .*?then undrain" % SCENARIO, flat)
    assert plan, out
    assert "branch kept (no gpuops_upgrade_driver_branch" in plan.group(0), plan.group(0)
    assert "new kernel %s (linux-image-cloud-amd64 %s -> %s)" % (new, installed, candidate) in plan.group(0), plan.group(0)
    assert "no reboot into %s: the container's kernel is its Docker host's" % new in plan.group(0), plan.group(0)
    assert kernel_state(HOSTS[1]) == (installed, candidate, images)
    assert sched_log(HOSTS[1]) == before


def test_kernel_run_installs_the_kernel_keeps_the_driver_and_says_it_is_not_booted(kernel_update):
    installed, candidate, images, new = kernel_update
    before = sched_log(HOSTS[1])
    rc, out = upgrade("-e", "gpuops_upgrade_reboot=false", *(KERNEL_MODE + limit(1)), branch=None)
    assert rc == 0, out
    assert kernel_state(HOSTS[1]) == (candidate, candidate, sorted(images + ["linux-image-" + new]))
    assert driver(HOSTS[1]) == (["cuda-drivers-550"], "550.163.01")
    assert "cuda-drivers-550" in HOSTS[1].check_output("apt-mark showhold").split()
    assert sched_log(HOSTS[1]) == before + [
        "scontrol update nodename=%s1 state=drain reason=gpuops kernel update" % SCENARIO,
        "scontrol update nodename=%s1 state=resume" % SCENARIO]
    old = images[-1][len("linux-image-"):]
    line = "%s1: upgraded 550.163.01; kernel %s -> %s (installed, not booted: the container's kernel is its Docker host's)" % (
        SCENARIO, old, new)
    assert line in re.sub(r"\s+", " ", out), out
