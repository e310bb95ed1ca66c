"""Verify gpu_monitoring: the GPU node exports the fixture's GPU metrics, Prometheus on the monitoring server
scrapes it, evaluates the GPU rules and fires the alerts the fixture deserves, and Alertmanager receives them."""
import json
import os
import re

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

NODE = "gpuops-gpu_monitoring-node"
SERVER = "gpuops-gpu_monitoring-server"
PROM = "https://127.0.0.1:9090"
ALERTMANAGER = "https://127.0.0.1:9093"
DASHBOARD = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "gpu_monitoring_server", "files",
                         "dashboards", "gpu-fleet-overview.json")
# Every endpoint: https (verified against the collection's CA that the pki role installs) with basic auth.
USER = "gpuops"
CA = "/etc/gpuops-pki/ca.crt"
# The monitoring server keeps the password for Prometheus' scrapes (root and the prometheus group only); a GPU node
# only has its hash, so the node's tests use the scenario's password (molecule.yml).
PASSWORD_FILE = "/etc/gpuops-monitoring/web-password"
NODE_PASSWORD = "gpu-monitoring-scenario-password"

# One request made on a host: prints the HTTP status, then the body (or "refused: <error>" when no HTTP answer came).
REQUEST = """
import base64, json, ssl, sys, urllib.error, urllib.parse, urllib.request
url, params, user, password, method, cafile = sys.argv[1:7]
if params != "{}":
    url += "?" + urllib.parse.urlencode(json.loads(params))
request = urllib.request.Request(url, method=method, data=b"{}" if method == "POST" else None,
                                 headers={"Content-Type": "application/json"})
if user:
    request.add_header("Authorization", "Basic " + base64.b64encode((user + ":" + password).encode()).decode())
try:
    response = urllib.request.urlopen(request, timeout=10, context=ssl.create_default_context(cafile=cafile))
    print(response.status)
    print(response.read().decode())
except urllib.error.HTTPError as error:
    print(error.code)
except Exception as error:  # a TLS server that drops or answers 400 to a plain-HTTP client, a closed port
    print("refused: %s" % error)
"""


def password(host):
    """The endpoints' password: the monitoring server's password file, else (a GPU node) the scenario's."""
    if host.file(PASSWORD_FILE).exists:
        return host.file(PASSWORD_FILE).content_string.strip()
    return NODE_PASSWORD


def request(host, url, user=None, secret=None, method="GET", **params):
    """(status, body) of one request made on ``host``; user/secret None: no Authorization header."""
    out = host.check_output("python3 -c %s %s %s %s %s %s %s", REQUEST, url, json.dumps(params), user or "",
                            secret or "", method, CA)
    lines = out.split("\n", 1)
    return lines[0], lines[1] if len(lines) > 1 else ""


def fetch(host, url, **params):
    """The body of an authenticated https request, verified against the CA; fails on any other answer."""
    status, body = request(host, url, USER, password(host), **params)
    assert status == "200", (url, status, body)
    return body


def name_of(host):
    return host.backend.get_hostname()


def only_on(host, name):
    if name_of(host) != name:
        pytest.skip("checked on %s" % name)


def api(host, url, **params):
    return json.loads(fetch(host, url, **params))


# ---- GPU node ----

def test_node_services(host):
    only_on(host, NODE)
    assert host.service("prometheus-node-exporter").is_running
    assert host.service("prometheus-node-exporter").is_enabled
    assert host.service("gpuops-gpu-collector.timer").is_running
    assert host.service("gpuops-gpu-collector.timer").is_enabled
    assert host.socket("tcp://0.0.0.0:9100").is_listening
    assert "--web.config.file=/etc/gpuops-monitoring/web-node_exporter.yml" in host.file(
        "/etc/default/prometheus-node-exporter").content_string


@pytest.mark.parametrize("unit", ["prometheus-node-exporter", "gpuops-gpu-collector"])
def test_node_services_are_sandboxed(host, unit):
    only_on(host, NODE)
    props = dict(line.split("=", 1) for line in host.check_output(
        "systemctl show %s -p ProtectSystem -p ProtectHome -p NoNewPrivileges -p PrivateTmp -p ReadWritePaths" % unit
    ).splitlines())
    assert props["ProtectSystem"] == "strict"
    assert props["ProtectHome"] == "yes"
    assert props["NoNewPrivileges"] == "yes"
    assert props["PrivateTmp"] == "yes"
    if unit == "gpuops-gpu-collector":
        assert props["ReadWritePaths"] == "/var/lib/prometheus/node-exporter"
        assert host.check_output("systemctl show %s -p User --value" % unit) == "prometheus"


def test_textfile_written_atomically_by_the_collector(host):
    only_on(host, NODE)
    prom = host.file("/var/lib/prometheus/node-exporter/nvidia_gpu.prom")
    assert prom.is_file
    assert prom.user == "prometheus"
    assert re.search(r"(?m)^gpuops_gpu_collector_success 1$", prom.content_string)
    # No temporary file left behind by the atomic rename. The timer runs the collector every 5 s here, and a run holds
    # its temporary file until the rename (after an fsync: slow on a loaded machine), so look between two runs only:
    # the collector inactive, and the same invocation of it, before and after the look.
    state = "systemctl show -p ActiveState -p InvocationID gpuops-gpu-collector.service"

    def between_runs():
        before = host.check_output(state)
        leftovers = host.check_output("find /var/lib/prometheus/node-exporter -name '.nvidia_gpu.prom.*'")
        after = host.check_output(state)
        idle = "ActiveState=inactive" in before.splitlines() or "ActiveState=failed" in before.splitlines()
        return [leftovers] if idle and before == after else None
    looked = wait_for(between_runs, 120, "a moment between two runs of gpuops-gpu-collector.service")
    assert looked[0] == "", looked[0]


def test_collector_uses_the_collections_parser(host):
    only_on(host, NODE)
    base = "/usr/local/lib/gpuops-gpu-collector/ansible_collections/gpuops/gpu_server/plugins/module_utils/"
    for name in ("_nvidia_smi.py", "_kernel_log.py", "_command.py"):
        assert host.file(base + name).is_file


def test_node_exporter_serves_the_fixtures_gpu_metrics(host):
    only_on(host, NODE)
    metrics = fetch(host, "https://127.0.0.1:9100/metrics")
    # The fixture's GPU 1 (0000:af:00.0): 100 % busy, 79 C (slowdown 88), 2 uncorrectable ECC, row remap pending.
    assert re.search(r'(?m)^gpuops_gpu_utilization_percent\{gpu="1",pci_bus_id="0000:af:00.0",[^}]*\} 100$', metrics)
    assert re.search(r'(?m)^gpuops_gpu_temperature_celsius\{gpu="1",[^}]*\} 79$', metrics)
    assert re.search(r'(?m)^gpuops_gpu_slowdown_temperature_celsius\{gpu="1",[^}]*\} 88$', metrics)
    assert re.search(r'(?m)^gpuops_gpu_ecc_uncorrected_total\{gpu="1",[^}]*scope="volatile"[^}]*\} 2$', metrics)
    assert re.search(r'(?m)^gpuops_gpu_remapped_rows_pending\{gpu="1",[^}]*\} 1$', metrics)
    assert re.search(r'(?m)^gpuops_gpu_remapped_rows_pending\{gpu="0",[^}]*\} 0$', metrics)
    # node_exporter prints large values in exponent form (4.194304e+06): compare numbers.
    used = re.search(r'(?m)^gpuops_gpu_memory_used_bytes\{gpu="0",[^}]*\} (\S+)$', metrics)
    assert used and float(used.group(1)) == 4 * 1024 * 1024


COLLECTOR = "python3 /usr/local/lib/gpuops-gpu-collector/gpuops-gpu-collector.py"


def test_collector_reads_xid_errors_from_the_kernel_log(host):
    """The deployed collector, fed a kernel log with an Xid for the fixture's GPU 1 (0000:af:00).
    (The stand-in journalctl lives in /root: /tmp is mounted noexec in the test containers.)"""
    only_on(host, NODE)
    host.check_output("printf '%%s\\n' %s > /root/fake-journalctl && chmod +x /root/fake-journalctl",
                      "#!/bin/sh\necho '2026-11-30T06:00:00+0000 node kernel: NVRM: Xid (PCI:0000:af:00): 79, pid=0, "
                      "GPU has fallen off the bus.'")
    host.check_output(COLLECTOR + " --journalctl /root/fake-journalctl --output /tmp/xid-test.prom")
    prom = host.file("/tmp/xid-test.prom").content_string
    assert re.search(r'(?m)^gpuops_gpu_xid_last\{gpu="1",[^}]*\} 79$', prom)
    assert re.search(r'(?m)^gpuops_gpu_xid_events_total\{gpu="1",[^}]*\} 1$', prom)
    assert re.search(r'(?m)^gpuops_gpu_xid_last\{gpu="0",[^}]*\} 0$', prom)
    assert re.search(r"(?m)^gpuops_gpu_collector_xid_success 1$", prom)


def test_collector_reports_a_failing_nvidia_smi(host):
    """A driverless host: the collector still writes its file, saying it could not read the GPUs."""
    only_on(host, NODE)
    result = host.run(COLLECTOR + " --nvidia-smi /bin/false --journalctl '' --output /tmp/fail-test.prom")
    assert result.rc == 0
    assert "/bin/false -q -x" in result.stderr
    prom = host.file("/tmp/fail-test.prom").content_string
    assert re.search(r"(?m)^gpuops_gpu_collector_success 0$", prom)
    assert "gpuops_gpu_utilization_percent" not in prom


# ---- Monitoring server ----

def test_server_services(host):
    only_on(host, SERVER)
    for unit in ("prometheus", "prometheus-alertmanager"):
        assert host.service(unit).is_running
        assert host.service(unit).is_enabled
        assert host.check_output("systemctl show %s -p ProtectSystem --value" % unit) == "strict"


def test_live_configs_pass_their_checkers(host):
    only_on(host, SERVER)
    assert host.run("promtool check rules /etc/prometheus/rules/gpuops-gpu.rules.yml").rc == 0
    assert host.run("promtool check config /etc/prometheus/prometheus.yml").rc == 0
    assert host.run("amtool check-config /etc/prometheus/alertmanager.yml").rc == 0


def test_scrape_job_from_the_inventory_group(host):
    only_on(host, SERVER)
    config = host.file("/etc/prometheus/prometheus.yml").content_string
    assert '"%s:9100"' % NODE in config


# ---- Endpoints: TLS, basic auth, nothing in plain HTTP ----

ENDPOINTS = {NODE: ["https://127.0.0.1:9100/metrics"],
             SERVER: [PROM + "/api/v1/targets", ALERTMANAGER + "/api/v2/alerts"]}


@pytest.mark.parametrize("name,url", [(n, u) for n, urls in ENDPOINTS.items() for u in urls])
def test_endpoint_refuses_missing_or_wrong_credentials(host, name, url):
    only_on(host, name)
    assert request(host, url)[0] == "401"
    assert request(host, url, USER, "wrong-password")[0] == "401"
    assert request(host, url, "nobody", password(host))[0] == "401"
    assert request(host, url, USER, password(host))[0] == "200"


@pytest.mark.parametrize("name,url", [(n, u) for n, urls in ENDPOINTS.items() for u in urls])
def test_endpoint_refuses_plain_http(host, name, url):
    only_on(host, name)
    status, body = request(host, url.replace("https://", "http://"), USER, password(host))
    assert status != "200", body


def test_alertmanager_silence_api_refuses_anonymous_requests(host):
    only_on(host, SERVER)
    assert request(host, ALERTMANAGER + "/api/v2/silences", method="POST")[0] == "401"
    assert request(host, ALERTMANAGER + "/api/v2/silences", USER, "wrong-password", method="POST")[0] == "401"
    assert json.loads(fetch(host, ALERTMANAGER + "/api/v2/silences")) == []


def test_node_exporter_answers_the_server_over_tls_by_the_nodes_name(host):
    """From the monitoring server, as Prometheus scrapes it: the node's certificate is valid for its inventory name."""
    only_on(host, SERVER)
    assert "node_exporter_build_info" in fetch(host, "https://%s:9100/metrics" % NODE)


def test_web_configs_hold_only_the_hash(host):
    for name in ("node_exporter", "prometheus", "alertmanager"):
        config = host.file("/etc/gpuops-monitoring/web-%s.yml" % name)
        if not config.exists:
            continue
        assert config.user == "root" and config.group == "prometheus" and config.mode == 0o640
        assert password(host) not in config.content_string
        assert re.search(r'(?m)^  "gpuops": "\$2b\$', config.content_string)
    if host.file(PASSWORD_FILE).exists:
        secret = host.file(PASSWORD_FILE)
        assert secret.user == "root" and secret.group == "prometheus" and secret.mode == 0o640
        assert host.run("promtool check web-config /etc/gpuops-monitoring/web-prometheus.yml").rc == 0


def test_all_targets_up_over_https(host):
    only_on(host, SERVER)

    def all_up():
        targets = api(host, PROM + "/api/v1/targets")["data"]["activeTargets"]
        return targets if targets and all(t["health"] == "up" for t in targets) else None
    targets = wait_for(all_up, 120, lambda: "every target up (they are: %s)" % api(host, PROM + "/api/v1/targets")["data"]["activeTargets"],
                       step=3)
    assert {t["labels"]["job"] for t in targets} == {"prometheus", "gpu_node"}
    assert all(t["scrapeUrl"].startswith("https://") for t in targets), [t["scrapeUrl"] for t in targets]
    alertmanagers = api(host, PROM + "/api/v1/alertmanagers")["data"]["activeAlertmanagers"]
    assert [a["url"] for a in alertmanagers] == ["https://127.0.0.1:9093/api/v2/alerts"]


def test_gpu_node_target_is_up(host):
    only_on(host, SERVER)

    def node_target():
        targets = api(host, PROM + "/api/v1/targets")["data"]["activeTargets"]
        return [t for t in targets if t["labels"].get("job") == "gpu_node" and t["health"] == "up"
                and t["labels"].get("host") == NODE]
    wait_for(node_target, 120, "the GPU node's node_exporter target to be up", step=3)


def test_gpu_utilisation_series_present(host):
    only_on(host, SERVER)

    def series():
        return api(host, PROM + "/api/v1/query", query='gpuops_gpu_utilization_percent{host="%s"}' % NODE)["data"]["result"]
    result = wait_for(series, 120, "the GPU utilisation series of the node", step=3)
    values = {r["metric"]["gpu"]: float(r["value"][1]) for r in result}
    assert values == {"0": 0.0, "1": 100.0}


@pytest.mark.parametrize("alertname", ["GpuEccUncorrectable", "GpuRowRemapPending", "GpuUtilizationHigh"])
def test_alert_fires_on_the_fixtures_values(host, alertname):
    only_on(host, SERVER)

    def firing():
        alerts = api(host, PROM + "/api/v1/alerts")["data"]["alerts"]
        return [a for a in alerts if a["labels"]["alertname"] == alertname and a["state"] == "firing"]
    alerts = wait_for(firing, 150, "%s to fire" % alertname, step=3)
    # Only the fixture's GPU 1 deserves it.
    assert {a["labels"]["gpu"] for a in alerts} == {"1"}
    assert alerts[0]["labels"]["host"] == NODE
    assert alerts[0]["annotations"]["description"]


def test_quiet_alerts_stay_quiet(host):
    only_on(host, SERVER)
    alerts = api(host, PROM + "/api/v1/alerts")["data"]["alerts"]
    names = {a["labels"]["alertname"] for a in alerts}
    # The fixture's GPUs are at 41 and 79 C (slowdown 88), the node and its collector work, no Xid was logged.
    for quiet in ("GpuTemperatureNearSlowdown", "GpuNodeDown", "GpuExporterDown", "GpuRowRemapFailure", "GpuXidError"):
        assert quiet not in names


def test_alertmanager_receives_the_alerts(host):
    only_on(host, SERVER)

    def received():
        alerts = api(host, ALERTMANAGER + "/api/v2/alerts")
        return [a for a in alerts if a["labels"]["alertname"] == "GpuEccUncorrectable"]
    wait_for(received, 90, "Alertmanager to receive GpuEccUncorrectable", step=3)


def test_dashboard_queries_are_valid_promql(host):
    """Every query of the Grafana dashboard parses and runs against the live Prometheus."""
    only_on(host, SERVER)
    with open(DASHBOARD) as handle:
        dashboard = json.load(handle)
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert exprs
    for expr in exprs:
        query = expr.replace("$host", ".*").replace("$__rate_interval", "5m")
        answer = api(host, PROM + "/api/v1/query", query=query)
        assert answer["status"] == "success", (expr, answer)
