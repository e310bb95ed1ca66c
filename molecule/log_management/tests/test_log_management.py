"""Verify log_management on a client and a collector: forwarding, the disk-assisted queue, logrotate, journald."""
import time
import uuid

import testinfra

from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

# Assertions are made from the client's point of view; the collector is driven through its own backend.
testinfra_hosts = ["docker://gpuops-log_management-client"]
COLLECTOR = testinfra.get_host("docker://gpuops-log_management-collector")
REMOTE_DIR = "/var/log/remote"


def arrived(marker, what, timeout=90):
    """Wait until the collector has written a line containing marker into a per-host file."""
    wait_for(lambda: COLLECTOR.run("grep -rqsF -- %s %s", marker, REMOTE_DIR).rc == 0, timeout, what, step=2)


def test_collector_listens_on_tcp():
    assert COLLECTOR.socket("tcp://0.0.0.0:514").is_listening
    assert COLLECTOR.run("rsyslogd -N1").rc == 0


def test_message_arrives_in_a_per_host_file(host):
    marker = "gpuops-live-%s" % uuid.uuid4().hex
    host.run("logger -t gpuops-test %s", marker)
    arrived(marker, "the message to reach the collector")
    hostname = host.check_output("hostname")
    path = COLLECTOR.check_output("grep -rlF -- %s %s", marker, REMOTE_DIR)
    assert path == "%s/%s/syslog.log" % (REMOTE_DIR, hostname), path


def test_nothing_is_lost_while_the_collector_is_down(host):
    # Stop the collector (and the socket that would start it again), log on the client, wait past a few
    # reconnection attempts, bring the collector back: the queued message still arrives.
    marker = "gpuops-queued-%s" % uuid.uuid4().hex
    start = host.check_output("date +%s")
    COLLECTOR.run("systemctl stop syslog.socket rsyslog.service")
    try:
        assert not COLLECTOR.socket("tcp://0.0.0.0:514").is_listening
        host.run("logger -t gpuops-test %s", marker)
        time.sleep(15)
        assert COLLECTOR.run("grep -rqsF -- %s %s", marker, REMOTE_DIR).rc != 0
        assert "cannot connect to gpuops-log_management-collector" in \
            host.check_output("journalctl -u rsyslog --since @%s --no-pager", start)
    finally:
        COLLECTOR.run("systemctl start rsyslog.service")
    arrived(marker, "the message logged while the collector was down to reach it")


def test_forwarding_config(host):
    conf = host.file("/etc/rsyslog.d/90-gpuops-forward.conf").content_string
    for setting in ('queue.type="LinkedList"', 'queue.filename="gpuops_forward"', 'queue.saveOnShutdown="on"',
                    'action.resumeRetryCount="-1"', 'protocol="tcp"', 'target="gpuops-log_management-collector"'):
        assert setting in conf
    assert host.run("rsyslogd -N1").rc == 0


def test_logrotate_rotates_by_size(host):
    host.run("mkdir -p /var/log/gpu-jobs && rm -f /var/log/gpu-jobs/*")
    host.run("head -c 20000 /dev/urandom | base64 > /var/log/gpu-jobs/train.log")
    out = host.run("logrotate -v /etc/logrotate.d/gpuops-gpu-jobs")
    assert out.rc == 0, out.stderr
    assert host.file("/var/log/gpu-jobs/train.log.1.gz").exists, out.stderr
    # A small file is left alone: size, not time, made it rotate.
    host.run("echo small > /var/log/gpu-jobs/small.log")
    host.run("logrotate /etc/logrotate.d/gpuops-gpu-jobs")
    assert not host.file("/var/log/gpu-jobs/small.log.1.gz").exists


def test_logrotate_runs_hourly(host):
    assert "OnCalendar=hourly" in host.check_output("systemctl cat logrotate.timer")


def test_journald_settings_in_effect(host):
    config = host.check_output("systemd-analyze cat-config systemd/journald.conf")
    for line in ("Storage=persistent", "SystemMaxUse=2G", "MaxRetentionSec=1month", "ForwardToSyslog=yes"):
        assert line in config.splitlines()
    assert host.file("/var/log/journal").is_directory
    header = host.check_output("journalctl --header -n0")
    assert "/var/log/journal/" in header, header
