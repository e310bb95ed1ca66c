"""Verify the Slurm cluster by running jobs on it: an MPI allreduce with srun -N2 through the hardened firewall, GPU
jobs placed by their GRES count and confined to their GPUs (with the unconfined job as the negative control), a sick
GPU that drains its node with the reason and a healed one that comes back, and upgrade_driver's drain hook against
this real slurmctld."""
import ipaddress
import os
import re

import pytest
import testinfra

from ansible_collections.gpuops.gpu_server.tests.support.mpi import ALLREDUCE, allreduce_line
from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook
from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

testinfra_hosts = ["docker://gpuops-slurm-ctl"]
C1 = testinfra.get_host("docker://gpuops-slurm-c1")
C2 = testinfra.get_host("docker://gpuops-slurm-c2")
KERNEL_LOG = "/var/log/gpuops-fake-kernel.log"
CLOUD_SUBNET = "172.31.250.0/24"
DRAIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "drain.yml")
# Opens every GPU device file: ENXIO where the job may (no driver behind the file), EPERM where its cgroup denies it.
OPEN_GPUS = """
import errno, os
for i in range(8):
    try:
        os.close(os.open("/dev/nvidia%d" % i, os.O_RDWR))
        print(i, "opened")
    except OSError as e:
        print(i, errno.errorcode[e.errno])
"""


def as_trainer(host, command, timeout=120):
    return host.run("su - trainer -c %s", "timeout -k 5 %d %s" % (timeout, command))


def sinfo(host):
    return dict((line.split("|")[0], line.split("|")[1:]) for line in
                host.check_output("sinfo --noheader --Node --format '%N|%T|%G|%E'").splitlines())


def name(node):
    return node.check_output("hostname")


@pytest.fixture(scope="module")
def scripts():
    for node in (C1, C2):
        for script, text in (("allreduce.py", ALLREDUCE), ("open_gpus.py", OPEN_GPUS)):
            node.run_expect([0], "install -o trainer -m 0644 /dev/stdin /home/trainer/%s <<'EOF'\n%sEOF" % (script, text))


def test_both_nodes_registered_with_their_gpus(host):
    nodes = sinfo(host)
    assert nodes[name(C1)][:2] == ["idle", "gpu:h200:8"], nodes
    assert nodes[name(C2)][:2] == ["idle", "(null)"], nodes
    gres = C1.file("/etc/slurm/gres.conf").content_string
    assert "Name=gpu Type=h200 File=/dev/nvidia7" in gres and gres.count("Name=gpu") == 8


def test_one_munge_key_everywhere_root_only(host):
    sums = set()
    for node in (host, C1, C2):
        key = node.file("/etc/munge/munge.key")
        assert key.user == "munge" and key.mode == 0o400
        sums.add(node.check_output("sha256sum /etc/munge/munge.key").split()[0])
    assert len(sums) == 1


def sources(table, port):
    """The source addresses of the nftables rule that accepts PORT (a port or a range), as a set."""
    match = re.search(r"ip saddr (\{[^}]*\}|\S+) tcp dport %s accept" % re.escape(port), table)
    return set(match.group(1).strip("{} ").replace(",", " ").split()) if match else set()


def test_firewall_opens_slurms_ports_to_the_cluster_only(host):
    table = host.check_output("nft list table inet gpuops_filter")
    peers = set(node.check_output("hostname -I").split()[0] for node in (C1, C2))
    # The controller also takes the CLOUD nodes' subnet (its slurm_firewall_sources, molecule.yml), which holds c1 and c2:
    # nftables merges their addresses into it. The compute nodes below take the cluster's hosts only.
    assert sources(table, "6817") == sources(table, "60001-60100") == {CLOUD_SUBNET}, table
    assert all(ipaddress.ip_address(peer) in ipaddress.ip_network(CLOUD_SUBNET) for peer in peers), peers
    assert not [line for line in table.splitlines() if re.search(r"dport (6817|6818|60001)", line) and "saddr" not in line]
    assert "6818" not in table, "slurmd's port is the compute nodes', not the controller's"
    compute = C1.check_output("nft list table inet gpuops_filter")
    assert sources(compute, "6818") == peers - {C1.check_output("hostname -I").split()[0]} | {
        host.check_output("hostname -I").split()[0]}, compute


def test_allreduce_with_srun_across_two_hardened_nodes(host, scripts):
    run = as_trainer(host, "srun -N2 --ntasks-per-node=1 python3 /home/trainer/allreduce.py", 240)
    assert run.rc == 0, run.stdout + run.stderr
    assert allreduce_line([name(C1), name(C2)]) in run.stdout, run.stdout + run.stderr


def test_gpu_jobs_are_placed_by_their_gres_count(host):
    run = as_trainer(host, "srun --gres=gpu:8 hostname")
    assert run.rc == 0 and run.stdout.strip() == name(C1), run.stdout + run.stderr
    run = as_trainer(host, "srun --gres=gpu:2 printenv CUDA_VISIBLE_DEVICES")
    assert run.rc == 0 and run.stdout.strip() == "0,1", run.stdout + run.stderr
    # Two nodes with a GPU each: only one node has GPUs, so Slurm refuses it at once.
    run = as_trainer(host, "srun -N2 --gres=gpu:1 hostname")
    assert run.rc != 0 and "Requested node configuration is not available" in run.stderr, run.stdout + run.stderr
    run = as_trainer(host, "srun --gres=gpu:9 hostname")
    assert run.rc != 0 and "Requested node configuration is not available" in run.stderr, run.stdout + run.stderr


def test_a_job_sees_only_the_gpu_it_was_given(host, scripts):
    run = as_trainer(host, "srun --gres=gpu:1 python3 /home/trainer/open_gpus.py")
    assert run.rc == 0, run.stdout + run.stderr
    results = dict(line.split() for line in run.stdout.splitlines())
    assert sorted(results.values()) == ["ENXIO"] + ["EPERM"] * 7, results
    # Negative control: a job given all eight opens all eight (so EPERM above is the job's cgroup, not the container).
    run = as_trainer(host, "srun --gres=gpu:8 python3 /home/trainer/open_gpus.py")
    assert run.rc == 0 and sorted(dict(line.split() for line in run.stdout.splitlines()).values()) == ["ENXIO"] * 8, run.stdout


def test_a_sick_gpu_drains_its_node_with_the_reason_and_a_healed_one_resumes(host):
    c1 = name(C1)
    C1.run_expect([0], "printf '%%s\\n' %s >> %s" % (
        "'[  123.456789] NVRM: Xid (PCI:0000:18:00): 79, pid=0, name=, GPU has fallen off the bus.'", KERNEL_LOG))
    try:
        wait_for(lambda: "drain" in sinfo(host)[c1][0], 120, lambda: "c1 drained: %s" % sinfo(host)[c1])
        reason = sinfo(host)[c1][2]
        assert reason.startswith("gpuops gpu_health:") and "Xid 79" in reason, reason
        # A GPU job goes nowhere now: c1 is the only node with GPUs.
        run = as_trainer(host, "srun --immediate=5 --gres=gpu:1 hostname", 60)
        assert run.rc != 0, run.stdout
    finally:
        C1.run_expect([0], ": > %s" % KERNEL_LOG)
    wait_for(lambda: sinfo(host)[c1][0] == "idle", 120, lambda: "c1 resumed: %s" % sinfo(host)[c1])


def test_a_node_drained_by_hand_stays_drained(host):
    c2 = name(C2)
    host.run_expect([0], "scontrol update NodeName=%s State=DRAIN Reason='maintenance by hand'" % c2)
    try:
        # Two health checks later (15 s apart) it is still drained: the check resumes only its own drains.
        C2.run_expect([0], "/usr/local/sbin/gpuops-slurm-health")
        assert "drain" in sinfo(host)[c2][0] and sinfo(host)[c2][2] == "maintenance by hand"
    finally:
        host.run_expect([0], "scontrol update NodeName=%s State=RESUME" % c2)


def submit(host, seconds):
    """A batch job of SECONDS on c1, as the job user; its id."""
    out = as_trainer(host, "sbatch --parsable -w %s -o /dev/null --wrap 'sleep %d'" % (name(C1), seconds)).stdout
    job = out.strip().split(";")[0]

    def running():
        return host.run("squeue -h -j %s -t RUNNING", job).stdout.strip()

    wait_for(running, 60, "job %s running" % job)
    return job


def test_upgrade_driver_drains_and_undrains_through_the_real_slurmctld(host):
    c1 = name(C1)
    job = submit(host, 20)
    rc, out = molecule_playbook(DRAIN, extra_vars={"gpuops_test_hook_step": "drain"})
    assert rc == 0, out
    try:
        # The drain returned only once the job had ended: Slurm's own state, not the GPUs' (no process on them here).
        assert host.run("squeue -h -j %s", job).stdout.strip() == "", "the drain did not wait for job %s" % job
        state, _gres, reason = sinfo(host)[c1]
        assert state == "drained" and reason == "gpuops driver upgrade to 580", (state, reason)
    finally:
        rc, out = molecule_playbook(DRAIN, extra_vars={"gpuops_test_hook_step": "undrain"})
    assert rc == 0, out
    # Resumed: idle once slurmctld has heard from the node again ("idle*" until then).
    wait_for(lambda: sinfo(host)[c1][0] == "idle", 120, lambda: "c1 resumed: %s" % sinfo(host)[c1])


def test_upgrade_driver_refuses_to_begin_while_a_job_still_runs(host):
    # Negative control of the wait: a job longer than the bound keeps the drain from finishing; the node stays drained.
    c1 = name(C1)
    job = submit(host, 300)
    try:
        rc, out = molecule_playbook(DRAIN, extra_vars={"gpuops_test_hook_step": "drain", "gpuops_test_wait_timeout": 6})
        assert rc != 0 and "still runs jobs after 6 s" in out and "the upgrade did not begin" in out, out
        assert sinfo(host)[c1][0] in ("draining", "drng"), sinfo(host)[c1]
    finally:
        host.run("scancel %s", job)
        molecule_playbook(DRAIN, extra_vars={"gpuops_test_hook_step": "undrain"})
    wait_for(lambda: sinfo(host)[c1][0] == "idle", 120, lambda: "c1 resumed: %s" % sinfo(host)[c1])
