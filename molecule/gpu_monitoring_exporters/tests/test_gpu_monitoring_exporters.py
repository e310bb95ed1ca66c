"""Verify gpu_monitoring with nvidia_gpu_exporter: installed from a local archive after its checksum was checked,
running sandboxed next to node_exporter; the refused runs (dcgm without Docker, no or wrong checksum) left nothing."""
import re


def test_exporter_installed_in_its_versioned_directory(host):
    binary = host.file("/usr/local/lib/nvidia_gpu_exporter-1.3.1/nvidia_gpu_exporter")
    assert binary.is_file
    assert binary.mode & 0o111


def test_tampered_archive_was_not_unpacked(host):
    assert not host.file("/usr/local/lib/nvidia_gpu_exporter-0.0.0-tampered").exists


def test_exporter_service_runs_sandboxed(host):
    service = host.service("nvidia_gpu_exporter")
    assert service.is_running
    assert service.is_enabled
    props = dict(line.split("=", 1) for line in host.check_output(
        "systemctl show nvidia_gpu_exporter -p ProtectSystem -p ProtectHome -p NoNewPrivileges -p User").splitlines())
    assert props == {"ProtectSystem": "strict", "ProtectHome": "yes", "NoNewPrivileges": "yes", "User": "prometheus"}


def test_exporter_serves_metrics_on_its_port(host):
    assert host.socket("tcp://0.0.0.0:9835").is_listening
    out = host.check_output("python3 -c %s", "import urllib.request; print(urllib.request.urlopen("
                            "'http://127.0.0.1:9835/metrics').read().decode())")
    assert re.search(r"(?m)^nvidia_smi_utilization_gpu_ratio\{", out)


def test_node_exporter_runs_without_the_textfile_collector(host):
    assert host.service("prometheus-node-exporter").is_running
    assert not host.file("/etc/systemd/system/gpuops-gpu-collector.timer").exists


def test_dcgm_refusal_changed_nothing(host):
    assert not host.file("/etc/gpuops/dcgm-exporter").exists
