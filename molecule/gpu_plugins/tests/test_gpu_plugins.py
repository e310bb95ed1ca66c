"""The real nvidia-smi without a GPU: what it prints, and what our modules made of it."""
import json


def test_real_nvidia_smi_cannot_reach_nvml(host):
    assert host.package("nvidia-smi").is_installed
    result = host.run("nvidia-smi -q -x")
    assert result.rc != 0
    assert "Failed to initialize NVML" in result.stdout + result.stderr


def test_modules_reported_no_driver_and_fail(host):
    report = json.loads(host.file("/var/tmp/gpu_plugins_report.json").content_string)
    facts, health = report["facts"], report["health"]
    assert facts["driver_loaded"] is False
    assert "NVML" in facts["reason"]
    assert health["status"] == "fail"
    driver = [c for c in health["checks"] if c["check"] == "driver_loaded"]
    assert driver and driver[0]["status"] == "fail"


def test_acceptance_test_wrote_nothing_without_a_driver(host):
    """gpu_acceptance refused at its preflight (SKIPPED, asserted in converge.yml): no sample was written or built."""
    assert not host.file("/var/lib/gpuops/acceptance").exists
