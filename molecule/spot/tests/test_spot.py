"""Verify the spot role on two instances of one job and an S3 server (moto).

Instance a: the sync sends only complete files; a sync killed half-way and re-run loses nothing; on an interruption
notice (the stand-in metadata service switched to "notice") the trainer gets SIGUSR1, saves and exits, and the final
sync puts its last checkpoint into the bucket, byte-identical, before the deadline. Instance b, the replacement: its
trainer starts only after the restore, and resumes from a's last step. Unreachable metadata is one clear log line.
The tests run in this order (pytest keeps the file's order); each builds on the state the one before left.
"""
import re
import time

import testinfra

from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

testinfra_hosts = ["docker://gpuops-spot-a"]
B = testinfra.get_host("docker://gpuops-spot-b")
CKPT = "/var/lib/gpuops/checkpoints"
CRYPT = "gpuops_spot_crypt:"
TEXTFILE = "/var/lib/prometheus/node-exporter/gpuops_spot.prom"


def remote_files(host, path=""):
    """Names under the encrypted remote (through the tool, which sets the remotes up from the root-only files)."""
    out = host.check_output("gpuops-spot rclone lsf -R --files-only %s%s", CRYPT, path)
    return sorted(line for line in out.splitlines() if line)


def remote_sha256(host, name):
    return host.check_output("gpuops-spot rclone cat %s%s | sha256sum", CRYPT, name).split()[0]


def local_sha256(host, path):
    return host.check_output("sha256sum %s", path).split()[0]


def journal(host, unit, since=0):
    return host.check_output("journalctl -q -o cat -u %s --since=@%s", unit, str(int(since)))


def saved_steps(host, since):
    return [int(s) for s in re.findall(r"saved step (\d+)", journal(host, "dummy-trainer.service", since))]


def test_units_and_secrets(host):
    for h in (host, B):
        assert h.service("gpuops-spot-sync.timer").is_enabled
        assert h.service("gpuops-spot-sync.timer").is_running
        assert h.service("gpuops-spot-watch.service").is_running
        assert h.service("gpuops-spot-restore.service").is_enabled
        timer = h.check_output("systemctl show -p TimersMonotonic gpuops-spot-sync.timer")
        assert "OnUnitActiveUSec=15min" in timer, timer
        for path in ("/etc/gpuops-spot/remote.env", "/etc/gpuops-spot/crypt.key", "/etc/gpuops-spot/config.json"):
            f = h.file(path)
            assert (f.user, f.group, f.mode) == ("root", "root", 0o600), path
        env = h.file("/etc/gpuops-spot/remote.env").content_string
        assert 'RCLONE_CONFIG_GPUOPS_SPOT_SECRET_ACCESS_KEY="gpuops-test-secret"' in env
        # The secret is on no command line: not in the unit files, not in any process's arguments.
        assert "gpuops-test-secret" not in h.check_output("cat /etc/systemd/system/gpuops-spot-*")
        assert "gpuops-test-secret" not in h.check_output("ps -eo args")
        dropin = h.file("/etc/systemd/system/dummy-trainer.service.d/50-gpuops-spot.conf").content_string
        assert "Wants=gpuops-spot-restore.service" in dropin and "After=gpuops-spot-restore.service" in dropin
        assert h.file(CKPT).user == "trainer"


def test_sync_sends_only_complete_files(host):
    d = CKPT + "/selftest"
    host.check_output("install -d -o trainer %s", d)
    host.check_output("head -c 4096 /dev/urandom > %s/old.bin && touch -d '-5 min' %s/old.bin", d, d)
    host.check_output("head -c 4096 /dev/urandom > %s/ckpt.bin.tmp && touch -d '-5 min' %s/ckpt.bin.tmp", d, d)
    host.check_output("head -c 4096 /dev/urandom > %s/open.bin && touch -d '-5 min' %s/open.bin", d, d)
    # A writer holds open.bin open (old mtime, but still being written).
    host.check_output("systemd-run --unit=spot-test-writer sh -c 'exec 3>>%s/open.bin; sleep 300'", d)
    wait_for(lambda: host.run("ls -l /proc/$(systemctl show -p MainPID --value spot-test-writer)/fd | grep -q open.bin").rc == 0,
             60, "the writer to hold open.bin")
    # Written last, right before the sync, so that it is surely within the 30 s settle time however busy the machine.
    host.check_output("head -c 4096 /dev/urandom > %s/fresh.bin", d)
    try:
        host.check_output("systemctl start gpuops-spot-sync.service")
    finally:
        host.run("systemctl stop spot-test-writer")
    assert remote_files(host, "selftest") == ["old.bin"]
    assert remote_sha256(host, "selftest/old.bin") == local_sha256(host, d + "/old.bin")
    log = journal(host, "gpuops-spot-sync.service")
    assert "1 modified within 30 s" in log and "1 open for writing" in log and "1 temporary name" in log, log
    # The bucket holds ciphertext: no object name or content is in the clear.
    raw = host.check_output("gpuops-spot rclone lsf -R gpuops_spot:checkpoints/job-1")
    assert "old.bin" not in raw and "selftest" not in raw, raw


def test_sync_metrics(host):
    metrics = host.file(TEXTFILE).content_string
    values = dict(line.split() for line in metrics.splitlines() if line and not line.startswith("#"))
    assert values["gpuops_spot_sync_interval_seconds"] == "900"
    assert values["gpuops_spot_last_sync_failed"] == "0"
    assert int(values["gpuops_spot_last_sync_success_timestamp_seconds"]) > time.time() - 300
    assert int(values["gpuops_spot_last_sync_bytes"]) > 4096  # the encrypted file is a little larger
    assert values["gpuops_spot_interruption_notice_timestamp_seconds"] == "0"


def test_a_sync_killed_half_way_and_rerun_loses_nothing(host):
    d = CKPT + "/bulk"
    host.check_output("install -d %s && head -c 24M /dev/urandom > %s/big.bin && touch -d '-5 min' %s/big.bin", d, d, d)
    # Slow (2 MB/s), so that it is surely half-way when killed with everything in its unit (python and rclone).
    host.check_output("systemd-run --unit=spot-test-slow gpuops-spot sync --bwlimit 2M")
    wait_for(lambda: host.run("pgrep -x rclone").rc == 0, 60, "the slow sync's rclone to start")
    time.sleep(4)
    host.check_output("systemctl kill --signal=SIGKILL spot-test-slow")
    host.run("systemctl reset-failed spot-test-slow")
    assert "big.bin" not in " ".join(remote_files(host, "bulk")), "the killed sync finished before it was killed"
    host.check_output("systemctl start gpuops-spot-sync.service")
    assert remote_files(host, "bulk") == ["big.bin"]
    assert remote_sha256(host, "bulk/big.bin") == local_sha256(host, d + "/big.bin")
    # Clean up, so that the replacement restores only the trainer's checkpoints.
    host.check_output("rm -rf %s %s/selftest", d, CKPT)
    host.check_output("gpuops-spot rclone purge %sbulk && gpuops-spot rclone purge %sselftest", CRYPT, CRYPT)


def test_notice_stops_the_trainer_and_the_final_sync_saves_its_last_checkpoint(host):
    start = int(host.check_output("date +%s"))
    host.check_output("systemctl start dummy-trainer.service")
    wait_for(lambda: len(saved_steps(host, start)) >= 3, 120, "three checkpoints from the trainer")
    host.check_output("echo notice > /var/lib/fake-metadata/state")
    wait_for(lambda: "final sync done" in journal(host, "gpuops-spot-watch.service", start), 110, "the final sync")
    trainer = journal(host, "dummy-trainer.service", start)
    assert "on SIGUSR1" in trainer, trainer
    assert host.check_output("systemctl show -p Result --value dummy-trainer.service") == "success"
    assert not host.service("dummy-trainer.service").is_running
    last = max(saved_steps(host, start))
    name = "ckpt-%d.bin" % last
    assert name in remote_files(host)
    assert remote_sha256(host, name) == local_sha256(host, "%s/%s" % (CKPT, name))
    log = journal(host, "gpuops-spot-watch.service", start)
    done = re.search(r"final sync done ([0-9.]+) s after the notice, (-?[0-9]+) s before the deadline", log)
    assert done and float(done.group(1)) < 115 and int(done.group(2)) >= 5, log
    assert re.search(r"sent SIGUSR1 to dummy-trainer.service\n", log), log
    notice = host.check_output("grep ^gpuops_spot_interruption_notice_timestamp_seconds %s", TEXTFILE).split()[1]
    assert int(notice) >= start


def test_the_replacement_restores_before_its_trainer_starts(host):
    last = max(saved_steps(host, 0))
    start = int(B.check_output("date +%s"))
    assert B.run("ls %s/ckpt-*.bin", CKPT).rc != 0, "b is not a fresh instance"
    B.check_output("systemctl start dummy-trainer.service")
    wait_for(lambda: "resumed from step" in journal(B, "dummy-trainer.service", start), 120, "b's trainer to start")
    trainer = journal(B, "dummy-trainer.service", start)
    assert "resumed from step %d" % last in trainer, trainer
    restore = journal(B, "gpuops-spot-restore.service", start)
    assert "restore:" in restore and "FAILED" not in restore, restore
    name = "ckpt-%d.bin" % last
    assert local_sha256(B, "%s/%s" % (CKPT, name)) == local_sha256(host, "%s/%s" % (CKPT, name))
    assert B.file("%s/%s" % (CKPT, name)).user == "trainer"
    # The restore ran first: systemd started it before the trainer.
    restored = int(B.check_output("systemctl show -p ExecMainExitTimestampMonotonic --value gpuops-spot-restore"))
    started = int(B.check_output("systemctl show -p ExecMainStartTimestampMonotonic --value dummy-trainer"))
    assert 0 < restored <= started, (restored, started)
    B.check_output("systemctl stop dummy-trainer.service")


def test_unreachable_metadata_is_one_clear_line_not_a_crash_loop():
    start = int(B.check_output("date +%s"))
    # The watcher is stopped first: a running one, polling every second, could log the outage itself before a
    # restart replaced it (two lines, and a test that fails by chance when the machine is busy).
    B.check_output("systemctl stop gpuops-spot-watch.service && systemctl stop fake-metadata.service && "
                   "systemctl start gpuops-spot-watch.service")
    wait_for(lambda: "metadata service unreachable" in journal(B, "gpuops-spot-watch.service", start), 60,
             "the watcher to log the outage")
    time.sleep(5)  # five more polls, none of which may log it again
    log = journal(B, "gpuops-spot-watch.service", start)
    assert log.count("metadata service unreachable") == 1, log
    assert "http://127.0.0.1:8169" in log, log
    assert B.service("gpuops-spot-watch.service").is_running
    assert B.check_output("systemctl show -p NRestarts --value gpuops-spot-watch.service") == "0"
    B.check_output("systemctl start fake-metadata.service")
    wait_for(lambda: "answers again" in journal(B, "gpuops-spot-watch.service", start), 60, "the watcher to see it back")
