"""Verify the training cluster by really running a collective: an Open MPI allreduce (mpi4py) across the two hardened
members, its negative control, and an outsider refused on the rendezvous port and the range."""
import re

import pytest
import testinfra

from ansible_collections.gpuops.gpu_server.tests.support.mpi import ALLREDUCE, allreduce_line
from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

testinfra_hosts = ["docker://gpuops-training_cluster-m1"]
M2 = testinfra.get_host("docker://gpuops-training_cluster-m2")
OUTSIDER = testinfra.get_host("docker://gpuops-training_cluster-outsider")
RENDEZVOUS = 29500
RANGE = (29510, 29599)
MPIRUN = "mpirun -H node1,node2 -np 2 --mca btl tcp,self"


def address(host):
    return host.check_output("hostname -I").split()[0]


def as_mpiuser(host, command, timeout):
    return host.run("su - mpiuser -c %s", "timeout -k 5 %d %s" % (timeout, command))


@pytest.fixture(scope="module")
def script(host):
    for member in (host, M2):
        member.run_expect([0], "install -o mpiuser -m 0644 /dev/stdin /home/mpiuser/allreduce.py <<'EOF'\n%sEOF" % ALLREDUCE)
    return "python3 /home/mpiuser/allreduce.py"


def test_members_resolve_each_other_through_the_marked_block(host):
    hosts = host.file("/etc/hosts").content_string
    assert "# BEGIN gpuops.gpu_server.training_cluster" in hosts and "# END gpuops.gpu_server.training_cluster" in hosts
    assert re.search(r"^127\.0\.0\.1\s+localhost", hosts, re.M), "Docker's own lines were kept"
    assert host.check_output("getent ahostsv4 node2").split()[0] == address(M2)
    assert M2.check_output("getent ahostsv4 node1").split()[0] == address(host)


def test_nccl_conf_disables_infiniband_where_there_is_none(host):
    conf = host.file("/etc/nccl.conf")
    assert conf.mode == 0o644
    assert "NCCL_IB_DISABLE=1" in conf.content_string.splitlines()
    assert "NCCL_SOCKET_IFNAME" not in conf.content_string


def test_open_mpi_reads_the_pinned_ports(host):
    info = host.check_output("ompi_info --parsable --param all all --level 9")
    assert "mca:btl:tcp:param:btl_tcp_port_min_v4:value:29520" in info
    assert "mca:btl:tcp:param:btl_tcp_port_range_v4:value:80" in info
    assert "oob_tcp_dynamic_ipv4_ports:value:29510-29519" in info


def test_firewall_opens_the_cluster_ports_to_the_other_member_only(host):
    table = host.check_output("nft list table inet gpuops_filter")
    peer = address(M2)
    assert re.search(r"ip saddr %s tcp dport %d accept" % (re.escape(peer), RENDEZVOUS), table), table
    assert re.search(r"ip saddr %s tcp dport %d-%d accept" % ((re.escape(peer),) + RANGE), table), table
    # Nothing of the cluster's is open to anyone.
    assert not [line for line in table.splitlines() if "dport 295" in line and "saddr" not in line], table


def test_allreduce_across_the_two_hardened_members(host, script):
    run = as_mpiuser(host, "%s %s" % (MPIRUN, script), 240)
    assert run.rc == 0, run.stdout + run.stderr
    # Docker drops the underscore from the container names in their hostnames: ask each member.
    assert allreduce_line([member.check_output("hostname") for member in (host, M2)]) in run.stdout, run.stdout + run.stderr


def test_a_member_reaches_the_rendezvous_port_and_the_range_the_outsider_does_not(host):
    ports = (RENDEZVOUS, RANGE[0], RANGE[1], RANGE[1] + 1)
    target = address(host)
    for port in ports:
        host.run_expect([0], "systemd-run --unit tc-listen-%d python3 -m http.server %d" % (port, port))
    try:
        for port in ports:
            wait_for(lambda: host.socket("tcp://0.0.0.0:%d" % port).is_listening, 60, "a listener on %d" % port)
        probe = "timeout 5 bash -c %s"
        member = {port: M2.run(probe, "</dev/tcp/%s/%d" % (target, port)) for port in ports}
        outsider = {port: OUTSIDER.run(probe, "</dev/tcp/%s/%d" % (target, port)) for port in ports}
    finally:
        for port in ports:
            host.run("systemctl stop tc-listen-%d" % port)
    for port in ports[:3]:
        assert member[port].rc == 0, (port, member[port].stderr)
        assert outsider[port].rc != 0, "the outsider reached %d" % port
    # Past the range: closed to the members too.
    assert member[ports[3]].rc != 0 and outsider[ports[3]].rc != 0


def test_negative_control_the_allreduce_fails_outside_the_opened_range(host, script):
    # The same job with its TCP transport moved below the range: the firewall drops it, and the job never completes.
    run = as_mpiuser(host, "%s --mca btl_tcp_port_min_v4 20000 --mca btl_tcp_port_range_v4 10 %s" % (MPIRUN, script), 45)
    # Killed by timeout (124, or 137 after -k): it hung on the dropped connections, it did not stop on a setting error.
    assert run.rc in (124, 137), (run.rc, run.stdout, run.stderr)
    assert "sum=3" not in run.stdout
