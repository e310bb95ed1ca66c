"""A wrong variable type or an unsupported platform fails in preflight, with a message that names it."""
import json
import os

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import needs_ansible_playbook, run_playbook

HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = needs_ansible_playbook


def preflight(playbook, *extra, inventory="localhost,"):
    """A playbook of this directory in check mode, on this machine: the refusals come before any change."""
    return run_playbook(os.path.join(HERE, playbook), "--check", *extra, inventory=inventory, timeout=300)


@pytest.mark.parametrize("distribution,major", [("Fedora", "40"), ("Debian", "10"), ("Ubuntu", "18")])
def test_unsupported_platform_is_refused_by_name(distribution, major):
    result = preflight("base_refuses.yml", "-e", "fake_distribution=%s" % distribution, "-e", "fake_major=%s" % major)
    out = result.stdout
    assert result.returncode != 0, out
    assert "%s " % distribution in out and "is not supported by gpuops.gpu_server.base" in out, out
    # nothing after the platform check ran
    assert "Package sources" not in out, out


def test_wrong_variable_type_is_refused_by_name():
    result = preflight("base_refuses.yml", "-e", "base_package_lock_timeout=soon")
    out = result.stdout
    assert result.returncode != 0, out
    assert "base_package_lock_timeout" in out and "int" in out, out
    assert "Assert that the platform is supported" not in out, out


NODES = {"gpu-a": {}, "gpu-b": {}}


def monitoring_inventory(tmp_path, nodes):
    """An inventory file: the controller as the monitoring server, and GPU nodes (name -> host variables)."""
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"all": {"children": {
        "monitoring_servers": {"hosts": {"mon": {}}},
        "gpu_servers": {"hosts": nodes}}}}))
    return str(path)


def test_gpu_nodes_set_up_like_the_server_scrapes_them_pass(tmp_path):
    result = preflight("gpu_monitoring_server_preflight.yml", inventory=monitoring_inventory(tmp_path, NODES))
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("variables,said", [
    ({"gpu_monitoring_tls": False}, "gpu-b has gpu_monitoring_tls False"),
    ({"gpu_monitoring_web_auth": "no"}, "gpu-b has gpu_monitoring_web_auth False"),
    ({"gpu_monitoring_web_user": "scraper"}, "gpu-b has gpu_monitoring_web_user scraper"),
])
def test_a_gpu_node_the_server_would_scrape_the_wrong_way_is_refused_by_name(tmp_path, variables, said):
    nodes = dict(NODES, **{"gpu-b": variables})
    result = preflight("gpu_monitoring_server_preflight.yml", inventory=monitoring_inventory(tmp_path, nodes))
    out = result.stdout
    assert result.returncode != 0, out
    assert said in out and "gpu-a" not in out.split("but ", 1)[-1], out


def test_a_monitoring_server_on_debian_11_is_refused_while_its_alertmanager_cannot_serve_tls(tmp_path):
    inventory = monitoring_inventory(tmp_path, NODES)
    result = preflight("gpu_monitoring_server_preflight.yml", "-e", "fake_major=11", inventory=inventory)
    out = result.stdout
    assert result.returncode != 0, out
    assert "Debian 11's Alertmanager (0.21) cannot serve TLS or basic auth" in out, out
    # Ubuntu 22.04's Alertmanager (0.23) can.
    ubuntu = preflight("gpu_monitoring_server_preflight.yml", "-e", "fake_distribution=Ubuntu", "-e", "fake_major=22",
                       inventory=inventory)
    assert ubuntu.returncode == 0, ubuntu.stdout


@pytest.mark.parametrize("bake", [False, True])
def test_a_host_without_an_nvidia_gpu_is_refused_unless_baking_an_image(tmp_path, bake):
    (tmp_path / "bus" / "pci" / "devices").mkdir(parents=True)
    result = preflight("nvidia_driver_no_gpu.yml", "--tags", "nvidia_driver_preflight",
                       "-e", "nvidia_driver_sysfs_root=%s" % tmp_path, "-e", "nvidia_driver_bake=%s" % bake)
    out = result.stdout
    if bake:
        # Negative control: the same host passes preflight when it bakes an image.
        assert result.returncode == 0, out
        assert "no NVIDIA GPU on the PCI bus" not in out, out
    else:
        assert result.returncode != 0, out
        assert "has no NVIDIA GPU on the PCI bus" in out and "nvidia_driver_bake=true" in out, out
        assert "Nothing was changed" in out, out
