"""Verify gpu_monitoring with nvidia_gpu_exporter: installed from a local archive after its checksum was checked,
running sandboxed next to node_exporter; the refused runs (dcgm without Docker, no or wrong checksum) left nothing."""
import re

import pytest


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


# The scenario's password (molecule.yml), its user, and the CA the pki role installs.
USER = "gpuops"
PASSWORD = "exporters-scenario-password"
CA = "/etc/gpuops-pki/ca.crt"

# One request from the host itself: prints the HTTP status (or "refused: <error>" when no HTTP answer came).
REQUEST = """
import base64, ssl, sys, urllib.error, urllib.request
url, user, password, method = sys.argv[1:5]
request = urllib.request.Request(url, method=method, data=b"[]" if method == "POST" else None)
if user:
    request.add_header("Authorization", "Basic " + base64.b64encode((user + ":" + password).encode()).decode())
try:
    response = urllib.request.urlopen(request, timeout=10, context=ssl.create_default_context(cafile=sys.argv[5]))
    print(response.status)
    print(response.read().decode())
except urllib.error.HTTPError as error:
    print(error.code)
except Exception as error:  # a TLS server that drops a plain-HTTP client, a connection refused
    print("refused: %s" % error)
"""


def request(host, url, user="", password="", method="GET"):
    """(status, body) of one request made on ``host``, the TLS verified against the collection's CA."""
    out = host.check_output("python3 -c %s %s %s %s %s %s", REQUEST, url, user, password, method, CA)
    lines = out.split("\n", 1)
    return lines[0], lines[1] if len(lines) > 1 else ""


def test_exporter_serves_metrics_on_its_port_over_tls_with_credentials(host):
    assert host.socket("tcp://0.0.0.0:9835").is_listening
    status, body = request(host, "https://127.0.0.1:9835/metrics", USER, PASSWORD)
    assert status == "200", body
    assert re.search(r"(?m)^nvidia_smi_utilization_gpu_ratio\{", body)


@pytest.mark.parametrize("port", [9100, 9835])
def test_endpoint_refuses_no_or_wrong_credentials_and_plain_http(host, port):
    assert request(host, "https://127.0.0.1:%d/metrics" % port)[0] == "401"
    assert request(host, "https://127.0.0.1:%d/metrics" % port, USER, "wrong-password")[0] == "401"
    assert request(host, "https://127.0.0.1:%d/metrics" % port, "nobody", PASSWORD)[0] == "401"
    status = request(host, "http://127.0.0.1:%d/metrics" % port, USER, PASSWORD)[0]
    assert status != "200", "plain HTTP answered on %d" % port


def test_exporter_runs_with_its_web_config(host):
    assert "--web.config.file=/etc/gpuops-monitoring/web-nvidia_gpu_exporter.yml" in host.check_output(
        "systemctl show nvidia_gpu_exporter -p ExecStart --value")
    config = host.file("/etc/gpuops-monitoring/web-nvidia_gpu_exporter.yml")
    assert config.user == "root" and config.group == "prometheus" and config.mode == 0o640
    assert PASSWORD not in config.content_string
    assert re.search(r'(?m)^  "gpuops": "\$2b\$', config.content_string)
    key = host.file("/etc/gpuops-pki/nvidia_gpu_exporter.key")
    assert key.user == "root" and key.group == "prometheus" and key.mode == 0o640


def test_node_exporter_runs_without_the_textfile_collector(host):
    assert host.service("prometheus-node-exporter").is_running
    assert not host.file("/etc/systemd/system/gpuops-gpu-collector.timer").exists


def test_dcgm_refusal_changed_nothing(host):
    assert not host.file("/etc/gpuops/dcgm-exporter").exists
