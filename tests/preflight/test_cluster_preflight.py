"""The cluster roles' preflight (training_cluster, slurm) refuses wrong member addresses, names and CLOUD node groups
by name, before any change, never with a traceback (issue 52, items 8 and 9)."""
import json
import os

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import needs_ansible_playbook, run_playbook

HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = needs_ansible_playbook

NAT = {"default_ipv4": {"address": "10.0.2.15"}}


def preflight(tmp_path, role, groups, *extra):
    """cluster_preflight.yml in check mode for ROLE, every host of GROUPS ({group: {host: variables}}) this machine."""
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"all": {"children": dict((g, {"hosts": h}) for g, h in groups.items())}}))
    result = run_playbook(os.path.join(HERE, "cluster_preflight.yml"), "--check", "-e", "cluster_role=%s" % role, *extra,
                          inventory=str(path), timeout=300)
    return result.returncode, " ".join(result.stdout.split())


def members(**hosts):
    return {"training_cluster": hosts}


def slurm(controller, **computes):
    return {"slurm_controller": {"ctl": controller}, "slurm_compute": computes}


def facts(address, **more):
    return {"fake_facts": dict({"default_ipv4": {"address": address}}, **more)}


def test_good_members_pass(tmp_path):
    rc, out = preflight(tmp_path, "training_cluster", members(m1=facts("10.0.0.1"), m2=facts("10.0.0.2")))
    assert rc == 0, out


@pytest.mark.parametrize("variables,said", [
    # Every member behind NAT (the classic): both named, the fact that gave the address, the fix.
    ({"m1": {"fake_facts": NAT}, "m2": {"fake_facts": NAT}},
     "training_cluster on m1: m1 and m2 have the same address 10.0.2.15, both from "
     "ansible_facts['default_ipv4']['address'] (its default route's address). Every host behind NAT"),
    ({"m1": dict(facts("10.0.0.1"), training_cluster_address="10.0.0.9\n0.0.0.0 github.com"), "m2": facts("10.0.0.2")},
     "m1: its training_cluster_address is not one IP address, got '10.0.0.9\\n0.0.0.0 github.com': set it to exactly "
     "one IP address"),
    ({"m1": dict(facts("10.0.0.1"), training_cluster_aliases=["gpu1\n0.0.0.0 github.com"]), "m2": facts("10.0.0.2")},
     "m1: training_cluster_aliases[0] 'gpu1\\n0.0.0.0 github.com' is no host name"),
    ({"m1": facts("10.0.0.1", hostname="node"), "m2": facts("10.0.0.2", hostname="node")},
     "m1 and m2 both have the name node"),
])
def test_wrong_member_addresses_and_names_are_refused_by_name(tmp_path, variables, said):
    rc, out = preflight(tmp_path, "training_cluster", members(**variables))
    assert rc != 0, out
    assert said in out, out
    assert "Traceback" not in out and "An unhandled exception" not in out, out
    # The refusal is the first failing task, and it comes before the member check's successors.
    assert "Assert that the ports make sense" not in out, out


def test_nat_members_pass_once_the_private_interface_is_named(tmp_path):
    # Negative control of the NAT refusal: the same hosts with their private network's interface named.
    variables = dict((h, {"fake_facts": dict(NAT, eth1={"ipv4": {"address": "192.168.56.1%d" % i}})})
                     for i, h in enumerate(["m1", "m2"]))
    rc, out = preflight(tmp_path, "training_cluster", members(**variables), "-e", "training_cluster_interface=eth1")
    assert rc == 0, out


def test_a_good_slurm_cluster_with_cloud_nodes_passes(tmp_path):
    cloud = json.dumps({"slurm_cloud_nodes": [{"names": "cloud[1-2]", "cpus": 1, "real_memory": 256}],
                        "slurm_cloud_backend": "docker", "slurm_cloud_docker_image": "x", "slurm_cloud_docker_network": "y"})
    rc, out = preflight(tmp_path, "slurm", slurm(facts("10.0.0.1"), n1=facts("10.0.0.2"), n2=facts("10.0.0.3")), "-e", cloud)
    assert rc == 0, out


@pytest.mark.parametrize("groups,nodes,said", [
    (None, [{"names": "gpu[1-4]", "cpus": 8, "real_memory": 1000, "features": "gpu"}],
     "slurm_cloud_nodes[0].features must be a list of feature names such as [gpu, h200], got the string 'gpu'"),
    (None, [{"names": "gpu[1-4]", "cpus": 8, "real_memory": 1000}, {"names": "gpu[3-6]", "cpus": 8, "real_memory": 1000}],
     "slurm_cloud_nodes[1].names gpu[3-6] names gpu3, gpu4, which slurm_cloud_nodes[0] (gpu[1-4]) already names"),
    (None, [{"names": "n[1-3]", "cpus": 8, "real_memory": 1000}],
     "slurm_cloud_nodes[0].names n[1-3] names n1, n2, a host of the Slurm cluster"),
    (None, [{"names": "x[4-1]", "cpus": 1.9, "real_memory": 1000}],
     "slurm_cloud_nodes[0].names has a reversed range 4-1: write it from low to high (1-4); "
     "slurm_cloud_nodes[0].cpus must be a whole number, got 1.9"),
    ({"n1": {"fake_facts": NAT}, "n2": {"fake_facts": NAT}}, [],
     "n1 and n2 have the same address 10.0.2.15, both from ansible_facts['default_ipv4']['address']"),
    ({"n1": dict(facts("10.0.0.2"), slurm_address="10.0.0.2 evil"), "n2": facts("10.0.0.3")}, [],
     "n1: its slurm_address is not one IP address, got '10.0.0.2 evil'"),
    ({"n1": facts("10.0.0.2", hostname="n1\nNodeName=evil"), "n2": facts("10.0.0.3")}, [],
     "n1: its hostname, ansible_facts['hostname'] 'n1\\nNodeName=evil' is no host name"),
    ({"n1": dict(facts("10.0.0.2"), slurm_node_features="gpu"), "n2": facts("10.0.0.3")}, [],
     "slurm_node_features must be a list of feature names such as [gpu, h200], got the string 'gpu'"),
])
def test_wrong_slurm_input_is_refused_by_name(tmp_path, groups, nodes, said):
    computes = groups or {"n1": facts("10.0.0.2"), "n2": facts("10.0.0.3")}
    extra = json.dumps({"slurm_cloud_nodes": nodes, "slurm_cloud_backend": "docker", "slurm_cloud_docker_image": "x",
                        "slurm_cloud_docker_network": "y"})
    rc, out = preflight(tmp_path, "slurm", slurm(facts("10.0.0.1"), **computes), "-e", extra)
    assert rc != 0, out
    assert said in out, out
    assert "Traceback" not in out and "An unhandled exception" not in out, out


@pytest.mark.parametrize("variable", ["slurm_cluster_name", "slurm_cloud_partition"])
def test_a_name_with_a_trailing_line_break_is_refused(tmp_path, variable):
    extra = {"slurm_cloud_nodes": [{"names": "c1", "cpus": 1, "real_memory": 1}], "slurm_cloud_backend": "docker",
             "slurm_cloud_docker_image": "x", "slurm_cloud_docker_network": "y", variable: "name\n"}
    rc, out = preflight(tmp_path, "slurm", slurm(facts("10.0.0.1"), n1=facts("10.0.0.2")), "-e", json.dumps(extra))
    assert rc != 0 and variable in out, out
