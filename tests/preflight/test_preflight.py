"""A wrong variable type or an unsupported platform fails in preflight, with a message that names it."""
import json
import os

import pytest
import yaml

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


def test_the_refusal_prints_the_role_data_and_follows_it():
    """The "Supported:" list is rendered from _base_supported_platforms, not written by hand."""
    with open(os.path.join(HERE, "..", "..", "roles", "base", "vars", "main.yml")) as vars_file:
        data = yaml.safe_load(vars_file)["_base_supported_platforms"]
    result = preflight("base_refuses.yml", "-e", "fake_distribution=Debian", "-e", "fake_major=10")
    assert result.returncode != 0, result.stdout
    said = " ".join(result.stdout.split())
    assert "Supported: Debian %s, Ubuntu %s," % ("/".join(data["Debian"]), "/".join(m + ".04" for m in data["Ubuntu"])) in said, said
    # Other data, another message: a host the changed data leaves out is refused with the changed list.
    result = preflight("base_refuses.yml", "-e", "fake_distribution=Debian", "-e", "fake_major=12",
                       "-e", json.dumps({"_base_supported_platforms": {"Debian": ["13"], "Ubuntu": ["26"]}}))
    assert result.returncode != 0, result.stdout
    said = " ".join(result.stdout.split())
    assert "Supported: Debian 13, Ubuntu 26.04." in said, said


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


UPGRADE = os.path.join("playbooks", "upgrade_driver.yml")  # run_playbook runs from the repository root


def upgrade_inventory(tmp_path, gpu_b):
    """Two GPU servers that get branch 570 from their group; gpu-b's own variables on top (the second batch's host)."""
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"all": {"children": {"gpu_servers": {
        "vars": {"gpuops_upgrade_driver_branch": "570"},
        "hosts": {"gpu-a": {}, "gpu-b": gpu_b}}}}}))
    return str(path)


def run_upgrade_preflight(tmp_path, gpu_b, *extra):
    return run_playbook(UPGRADE, "--check", "--tags", "upgrade_driver_preflight", *extra, inventory=upgrade_inventory(tmp_path, gpu_b))


@pytest.mark.parametrize("gpu_b,said", [
    # The playbook's names and the role's, each named as the host sets it.
    ({"gpuops_upgrade_drain": "lsf"}, "value of gpuops_upgrade_drain must be one of: none, slurm, kubernetes, command, got: lsf"),
    ({"upgrade_driver_drain": "lsf"}, "value of upgrade_driver_drain must be one of: none, slurm, kubernetes, command, got: lsf"),
    ({"upgrade_driver_wait_timeout": "soon"}, "upgrade_driver_wait_timeout"),
    ({"gpuops_upgrade_command_on": "elsewhere"}, "value of gpuops_upgrade_command_on must be one of: host, controller"),
    ({"gpuops_upgrade_driver_branch": "latest"}, "gpuops_upgrade_driver_branch is a branch such as 570, 570-server or 570-open (got latest)"),
    ({"upgrade_driver_branch": "57"}, "upgrade_driver_branch is a branch such as 570, 570-server or 570-open (got 57)"),
    ({"gpuops_upgrade_drain": "command", "gpuops_upgrade_drain_command": ["drain-it"]},
     "gpuops_upgrade_drain=command needs gpuops_upgrade_drain_command and gpuops_upgrade_undrain_command (got ['drain-it'] and none)"),
    ({"gpuops_upgrade_wait_delay": 0}, "gpuops_upgrade_wait_timeout and gpuops_upgrade_wait_delay are positive numbers of seconds (got 3600 and 0)"),
])
def test_an_upgrade_variable_of_a_later_batch_is_refused_in_the_first_by_name(tmp_path, gpu_b, said):
    result = run_upgrade_preflight(tmp_path, gpu_b)
    out = result.stdout
    assert result.returncode != 0, out
    assert said in " ".join(out.split()), out
    # The first batch (gpu-a) stopped at the fleet check: no batch began, nothing was read from a host.
    assert "(item=gpu-b)" in out and "Batch of 1" not in out, out


def test_good_upgrade_variables_on_every_host_pass_the_fleet_check(tmp_path):
    # Negative control: the same inventory with good values (a command hook with both commands, the role's names) passes.
    result = run_upgrade_preflight(tmp_path, {"gpuops_upgrade_drain": "command", "gpuops_upgrade_drain_command": "drain-it now",
                                              "upgrade_driver_undrain_command": ["undrain-it"], "upgrade_driver_wait_delay": 5})
    out = result.stdout
    assert result.returncode == 0, out
    assert "Batch of 1: gpu-a (hosts 1-2 of 2)" not in out and "Batch of 1: gpu-b (hosts 2-2 of 2)" in out, out


def test_a_missing_branch_is_refused_unless_kernel_updates_only(tmp_path):
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"all": {"children": {"gpu_servers": {"hosts": {"gpu-a": {}}}}}}))
    result = run_playbook(UPGRADE, "--check", "--tags", "upgrade_driver_preflight", inventory=str(path))
    out = " ".join((result.stdout).split())
    assert result.returncode != 0, out
    assert "upgrade_driver_branch (gpuops_upgrade_driver_branch) is a branch such as 570" in out, out
    assert "it is required unless upgrade_driver_kernel (gpuops_upgrade_kernel) is true" in out, out
    # Negative control: kernel updates only, the host keeps its branch.
    kernel = run_playbook(UPGRADE, "--check", "--tags", "upgrade_driver_preflight", "-e", "gpuops_upgrade_kernel=true", inventory=str(path))
    assert kernel.returncode == 0, kernel.stdout
    assert "kernel updates, driver branch kept (check mode: the plan only)" in " ".join(kernel.stdout.split()), kernel.stdout


@pytest.mark.parametrize("variable,value", [("gpuops_upgrade_serial", v) for v in ("0", "-1", "150%", "two")]
                         + [("gpuops_upgrade_max_fail_percentage", v) for v in ("101", "-5", "some")])
def test_a_bad_batch_size_or_failure_tolerance_is_refused_by_name(tmp_path, variable, value):
    result = run_upgrade_preflight(tmp_path, {}, "-e", "%s=%s" % (variable, value))
    out = " ".join((result.stdout).split())
    assert result.returncode != 0, out
    assert "Traceback" not in out, out
    said = {"gpuops_upgrade_serial": "gpuops_upgrade_serial is a positive number or a percentage such as 25%% (got %s)",
            "gpuops_upgrade_max_fail_percentage": "gpuops_upgrade_max_fail_percentage is 0-100 (got %s)"}[variable]
    assert said % value in out, out


@pytest.mark.parametrize("variables,said", [
    # issue 52: a line break in a port once put a bare `accept` into nftables' input chain.
    ({"hardening_firewall_allowed_ports": [{"port": "9100\n", "sources": []}]},
     "hardening_firewall_allowed_ports[0].port: '9100"),
    ({"hardening_firewall_extra_ports": [{"port": 8080}, {"port": " 22"}]}, "hardening_firewall_extra_ports[1].port: ' 22' is not a port"),
    # An empty or null source once meant "anywhere" on ufw and firewalld.
    ({"hardening_firewall_extra_ports": [{"port": 22, "sources": [""]}]},
     "hardening_firewall_extra_ports[0].sources[0]: '' is not an IP address or network"),
    ({"hardening_firewall_allowed_ports": [{"port": 22, "sources": ["10.0.0.0/8", None]}]},
     "hardening_firewall_allowed_ports[0].sources[1]: None is not an IP address or network"),
    ({"hardening_firewall_service_ports": [{"port": 9100, "sources": ["10.0.0.1 } accept #"]}]},
     "hardening_firewall_service_ports (gpuops_firewall_ports)[0].sources[0]: '10.0.0.1 } accept #' is not an IP address"),
    ({"hardening_firewall_trusted_interfaces": ["ib0\" accept"]}, "hardening_firewall_trusted_interfaces[0]: 'ib0"),
    ({"hardening_firewall_extra_ports": [{"port": 29600, "port_end": 29500}]},
     "hardening_firewall_extra_ports[0].port_end: 29500 is below port 29600"),
    ({"hardening_firewall_extra_ports": [{"port": 22, "source": ["10.0.0.0/8"]}]},
     "hardening_firewall_extra_ports[0]: unknown key source"),
])
def test_a_firewall_entry_that_cannot_be_written_as_asked_is_refused_by_name(variables, said):
    result = preflight("hardening_firewall_refuses.yml", "-e", json.dumps(variables))
    out = " ".join(result.stdout.split())
    assert result.returncode != 0, out
    assert said in out and "Nothing was changed" in out, out
    assert "Traceback" not in out, out


def test_a_restricted_ssh_port_spelled_as_a_string_passes_the_firewall_preflight():
    # Negative control: good entries, the SSH port written "22", pass the same preflight.
    result = preflight("hardening_firewall_refuses.yml", "-e", json.dumps({
        "hardening_firewall_allowed_ports": [{"port": "22", "proto": "tcp", "sources": ["10.0.0.1/8", "fd00::/64"]}],
        "hardening_firewall_extra_ports": [{"port": 29510, "port_end": "29599", "interfaces": ["ib0"]}],
        "hardening_firewall_trusted_interfaces": ["bond0.100"]}))
    out = result.stdout
    assert result.returncode == 0, out
    assert "Invalid firewall settings" not in out, out


DRIVER_PLATFORMS = {"Fedora": ("41", "41", "RedHat"), "Debian": ("10", "10.13", "Debian"),
                    "Ubuntu": ("18", "18.04", "Debian"), "Rocky": ("10", "10.0", "RedHat")}


@pytest.mark.parametrize("role", ["nvidia_driver", "cuda_toolkit"])
@pytest.mark.parametrize("distribution", ["Fedora", "Debian", "Ubuntu", "Rocky"])
def test_driver_roles_refuse_an_unsupported_platform_by_name(role, distribution, tmp_path):
    """Issue 54: nvidia_driver and cuda_toolkit check their platforms through common's preflight, as the other roles."""
    major, version, family = DRIVER_PLATFORMS[distribution]
    result = preflight("driver_platform_refuses.yml", "--tags", "%s_preflight" % role, "-e", "driver_role=%s" % role,
                       "-e", "fake_distribution=%s fake_major=%s fake_version=%s fake_family=%s"
                       % (distribution, major, version, family), "-e", "%s_sysfs_root=%s" % (role, tmp_path))
    out = result.stdout
    assert result.returncode != 0, out
    assert "%s %s on localhost" % (distribution, version) in out, out
    assert "is not supported by gpuops.gpu_server.%s. Supported:" % role in out, out
    assert "Debian 11/12/13, Ubuntu 20.04/22.04/24.04/26.04, EL 8/9" in " ".join(out.split()), out


def test_driver_role_passes_the_platform_check_on_debian_12(tmp_path):
    """Negative control: Debian 12 passes the platform check (and, baking an image, the whole preflight)."""
    result = preflight("driver_platform_refuses.yml", "--tags", "nvidia_driver_preflight", "-e", "driver_role=nvidia_driver",
                       "-e", "fake_distribution=Debian fake_major=12 fake_version=12.8 fake_family=Debian",
                       "-e", "nvidia_driver_sysfs_root=%s" % tmp_path, "-e", "nvidia_driver_bake=true")
    out = result.stdout
    assert result.returncode == 0, out
    assert "is not supported by" not in out, out


@pytest.mark.parametrize("variables,said", [
    ({"firewall_allowed_ports": [{"port": "9100\n", "sources": []}]}, "firewall_allowed_ports[0].port: '9100"),
    ({"firewall_extra_ports": [{"port": 22, "sources": [""]}]},
     "firewall_extra_ports[0].sources[0]: '' is not an IP address or network"),
    ({"firewall_service_ports": [{"port": 9100, "sources": ["10.0.0.1 } accept #"]}]},
     "firewall_service_ports (gpuops_firewall_ports)[0].sources[0]: '10.0.0.1 } accept #' is not an IP address"),
    ({"firewall_trusted_interfaces": ["ib0\" accept"]}, "firewall_trusted_interfaces[0]: 'ib0"),
    ({"firewall_ssh_port": "22\r"}, "firewall_ssh_port: '22"),
    ({"firewall_backend": "iptables"}, 'firewall_backend is "iptables"; use auto, nftables, ufw or firewalld'),
])
def test_the_standalone_firewall_refuses_an_entry_by_its_own_name(variables, said):
    result = preflight("firewall_refuses.yml", "-e", json.dumps(variables))
    out = " ".join(result.stdout.split())
    assert result.returncode != 0, out
    assert said in out and "Nothing was changed" in out, out
    assert "hardening_" not in out, out
    assert "Traceback" not in out, out


@pytest.mark.parametrize("variables,said", [
    # Through hardening, the same refusals name the hardening_* variable the inventory sets.
    ({"hardening_ssh_port": "22\r"}, "hardening_ssh_port: '22"),
    ({"hardening_firewall_backend": "iptables"}, 'hardening_firewall_backend is "iptables"; use auto'),
])
def test_hardening_maps_the_firewall_refusals_to_its_own_names(variables, said):
    result = preflight("hardening_firewall_refuses.yml", "-e", json.dumps(variables))
    out = " ".join(result.stdout.split())
    assert result.returncode != 0, out
    assert said in out and "Nothing was changed" in out, out
    assert " firewall_" not in out, out


def test_the_standalone_firewall_preflight_passes_good_entries():
    # Negative control: good entries, the SSH port written "22", pass the same preflight.
    result = preflight("firewall_refuses.yml", "-e", json.dumps({
        "firewall_ssh_port": "22",
        "firewall_allowed_ports": [{"port": "22", "proto": "tcp", "sources": ["10.0.0.1/8", "fd00::/64"]}],
        "firewall_extra_ports": [{"port": 29510, "port_end": "29599", "interfaces": ["ib0"]}],
        "firewall_trusted_interfaces": ["bond0.100"]}))
    out = result.stdout
    assert result.returncode == 0, out
    assert "Invalid firewall settings" not in out, out
