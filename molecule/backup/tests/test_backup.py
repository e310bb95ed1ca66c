"""Verify the backup role against an S3 server (moto).

A backup, then a restore through playbooks/restore.yml into an empty directory, byte-identical (sha256 of every file);
a backup killed half-way and re-run leaves a repository that passes restic check and loses nothing; a wrong
repository password is a clear error and changes neither the host's files nor the repository; the metrics for
node_exporter; the secrets are in root-only files and on no command line or in the journal. Last, the role moves the
host to an SFTP repository (sshd on the S3 server's container), backs up and restores from it.
The tests run in this order (pytest keeps the file's order); each builds on the state the one before left.
"""
import json
import os
import re
import time

import testinfra

from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook as playbook
from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

testinfra_hosts = ["docker://gpuops-backup-a"]
HOST_NAME = "gpuops-backup-a"
SERVER_NAME = "gpuops-backup-s3"
EPHEMERAL = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
PROJECT = os.environ["MOLECULE_PROJECT_DIRECTORY"]
SCENARIO_DIR = os.environ.get("MOLECULE_SCENARIO_DIRECTORY", os.path.join(PROJECT, "molecule", "backup"))
CKPT = "/var/lib/gpuops/checkpoints"
TEXTFILE = "/var/lib/prometheus/node-exporter/gpuops_backup.prom"
SECRETS = ("correct horse battery staple", "gpuops-test-secret")


def restore(*args):
    return playbook(os.path.join(PROJECT, "playbooks", "restore.yml"), "-e", "gpuops_restore_hosts=" + HOST_NAME, *args)


def tree_sums(host, root):
    """{relative path: sha256} of every file below root."""
    out = host.check_output("cd %s && find . -type f -print0 | sort -z | xargs -0 -r sha256sum", root)
    sums = {}
    for line in out.splitlines():
        digest, name = line.split(None, 1)
        sums[name] = digest
    return sums


def metrics(host):
    text = host.file(TEXTFILE).content_string
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(gpuops_backup_\w+) (\S+)$", text, re.M)}


def snapshots(host):
    return [line for line in host.check_output("gpuops-backup restic list snapshots").splitlines() if line]


def run_backup(host):
    """Start the backup unit and wait for it to end; (exit status, its journal from this run's start on)."""
    since = host.check_output("date +%s")
    result = host.run("systemctl start gpuops-backup.service")
    # systemctl returns once the run has ended, but on a loaded machine journald may not have written the run's last
    # lines yet (the retention's "keep N snapshots"): journalctl --sync returns once journald has written everything
    # it had received, and the run's output was all sent before its process exited.
    sync = host.run("journalctl --sync")
    assert sync.rc == 0, "journalctl --sync: %s" % sync.stderr
    journal = host.check_output("journalctl -q -o cat -u gpuops-backup.service --since=@%s", since)
    return result.rc, journal


def test_units_and_secrets(host):
    assert host.package("restic").is_installed
    for unit in ("gpuops-backup.timer", "gpuops-backup-check.timer"):
        assert host.service(unit).is_enabled
        assert host.service(unit).is_running
    timer = host.check_output("systemctl show -p TimersCalendar gpuops-backup.timer")
    assert "02:30:00" in timer, timer
    for path in ("/etc/gpuops-backup/repository.env", "/etc/gpuops-backup/password", "/etc/gpuops-backup/backup.conf"):
        f = host.file(path)
        assert (f.user, f.group, f.mode) == ("root", "root", 0o600), path
    assert host.file("/etc/gpuops-backup").mode == 0o700
    env = host.file("/etc/gpuops-backup/repository.env").content_string
    assert "RESTIC_REPOSITORY='s3:http://gpuops-backup-s3:5000/gpuops-backups/gpuops-backup-a'" in env
    assert "AWS_SECRET_ACCESS_KEY='gpuops-test-secret'" in env
    assert host.file("/etc/gpuops-backup/password").content_string == SECRETS[0] + "\n"
    # Nothing secret in the units, the settings, or the command that the units run.
    public = host.check_output("cat /etc/systemd/system/gpuops-backup* /etc/gpuops-backup/backup.conf /usr/local/sbin/gpuops-backup")
    for secret in SECRETS:
        assert secret not in public
    # The first metrics are there before any backup: the stale alert counts from the role's first run.
    m = metrics(host)
    assert m["gpuops_backup_interval_seconds"] == 86400
    assert m["gpuops_backup_last_success_timestamp_seconds"] == 0
    assert time.time() - 3600 < m["gpuops_backup_since_timestamp_seconds"] <= time.time()


def test_backup_then_restore_into_an_empty_directory(host):
    d = CKPT + "/run-1"
    host.check_output("install -d %s/sub && for i in $(seq 1 40); do head -c $((i * 7919)) /dev/urandom > %s/ckpt-$i.pt; done", d, d)
    host.check_output("head -c 100000 /dev/urandom > %s/sub/optimizer.bin && ln -sf ckpt-1.pt %s/latest.pt", d, d)
    host.check_output("head -c 5000 /dev/urandom > %s/partial.tmp", d)
    host.check_output("echo 'alice was here' > /home/alice/notes.txt && chown alice: /home/alice/notes.txt && chmod 0640 /home/alice/notes.txt")
    rc, journal = run_backup(host)
    assert rc == 0, journal
    assert "skipping /srv/absent: it does not exist" in journal
    for secret in SECRETS:
        assert secret not in journal
    assert len(snapshots(host)) == 1
    m = metrics(host)
    assert m["gpuops_backup_last_failed"] == 0
    assert time.time() - 300 < m["gpuops_backup_last_success_timestamp_seconds"] <= time.time()

    rc, out = restore("-e", "backup_restore_target=/srv/restore-1")
    assert rc == 0, out
    restored = tree_sums(host, "/srv/restore-1" + CKPT)
    original = tree_sums(host, CKPT)
    assert "./run-1/partial.tmp" in original and "./run-1/partial.tmp" not in restored  # excluded (*.tmp)
    del original["./run-1/partial.tmp"]
    assert restored == original and len(restored) == 41
    assert host.file("/srv/restore-1" + CKPT + "/run-1/latest.pt").linked_to == "/srv/restore-1" + CKPT + "/run-1/ckpt-1.pt"
    notes = host.file("/srv/restore-1/home/alice/notes.txt")
    assert (notes.content_string, notes.user, notes.mode) == ("alice was here\n", "alice", 0o640)
    assert host.file("/srv/restore-1/etc/gpuops-backup/password").exists
    assert not host.file("/srv/restore-1/srv/absent").exists


def test_restore_refuses_a_nonempty_directory_and_restores_a_named_snapshot(host):
    rc, out = restore("-e", "backup_restore_target=/srv/restore-1")
    assert rc != 0 and "is not empty" in out and "backup_restore_allow_nonempty" in out, out
    snapshot = host.check_output("gpuops-backup restic snapshots --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0][\"short_id\"])'")
    rc, out = restore("-e", "backup_restore_target=/srv/restore-2", "-e", "backup_restore_snapshot=" + snapshot,
                      "-e", '{"backup_restore_include": ["/home/alice"]}')
    assert rc == 0, out
    assert host.file("/srv/restore-2/home/alice/notes.txt").content_string == "alice was here\n"
    assert not host.file("/srv/restore-2/etc").exists


def test_killed_backup_rerun_is_consistent_and_loses_nothing(host):
    d = CKPT + "/run-2"
    # 96 MiB of incompressible data: long enough to be killed in the middle of the upload.
    host.check_output("install -d %s && for i in $(seq 1 48); do head -c 2097152 /dev/urandom > %s/shard-$i.bin; done", d, d)
    before = set(snapshots(host))
    packs_before = len(host.check_output("gpuops-backup restic list packs").splitlines())
    host.check_output("systemctl start --no-block gpuops-backup.service")
    # Wait until the running backup has uploaded its first pack files, then kill everything in the unit.
    wait_for(lambda: len(host.check_output("gpuops-backup restic list packs").splitlines()) > packs_before, 120,
             "the running backup to upload its first pack files", step=0.2)
    host.check_output("systemctl kill -s KILL gpuops-backup.service")
    # The processes die, and systemd sees the unit end, when a loaded machine gets to it: wait for both (a start while
    # the killed run is still "activating" would only join it and fail with it).
    wait_for(lambda: host.run("pgrep -x restic").rc != 0, 120, "every restic process of the killed backup to be gone")
    wait_for(lambda: host.check_output("systemctl show -p ActiveState --value gpuops-backup.service") in ("failed", "inactive"),
             120, "gpuops-backup.service to end (failed or inactive) after the kill")
    assert set(snapshots(host)) == before, "the killed backup finished before it was killed: make the data larger"
    packs_killed = len(host.check_output("gpuops-backup restic list packs").splitlines())
    assert packs_killed > packs_before, "the backup was killed before it uploaded anything"
    # The dead run left its lock behind; the next run removes it (stale: its process is gone) and completes.
    rc, journal = run_backup(host)
    assert rc == 0, journal
    after = set(snapshots(host))
    assert after - before, "no new snapshot"
    # The retention ran and the repository holds what it decided to keep (which of two snapshots of one day it keeps
    # differs between restic versions: 0.14 keeps the newest only, 0.16 and 0.18 keep both).
    assert "Applying Policy: keep 7 daily, 4 weekly, 6 monthly snapshots" in journal, journal
    kept = re.search(r"^keep (\d+) snapshots", journal, re.M)
    assert kept and len(after) == int(kept.group(1)), journal
    check = host.run("gpuops-backup restic check")
    assert check.rc == 0, check.stdout + check.stderr
    assert "no errors were found" in check.stdout
    rc, out = restore("-e", "backup_restore_target=/srv/restore-3")
    assert rc == 0, out
    assert tree_sums(host, "/srv/restore-3" + d) == tree_sums(host, d)
    assert len(tree_sums(host, d)) == 48
    # Earlier data is still in the latest snapshot too.
    assert host.file("/srv/restore-3" + CKPT + "/run-1/sub/optimizer.bin").exists


def test_check_unit_and_metrics(host):
    result = host.run("systemctl start gpuops-backup-check.service")
    assert result.rc == 0, host.check_output("journalctl -q -o cat -u gpuops-backup-check.service")
    m = metrics(host)
    assert m["gpuops_backup_last_check_failed"] == 0
    assert time.time() - 300 < m["gpuops_backup_last_check_success_timestamp_seconds"] <= time.time()
    assert m["gpuops_backup_last_forget_failed"] == 0
    f = host.file(TEXTFILE)
    assert (f.user, f.mode) == ("root", 0o644)


def test_wrong_password_is_a_clear_error_and_changes_nothing(host):
    def state():
        files = host.check_output("sha256sum /etc/gpuops-backup/* /etc/systemd/system/gpuops-backup*")
        repo = host.check_output("gpuops-backup restic list keys && gpuops-backup restic list snapshots && gpuops-backup restic list index")
        return files, repo
    before = state()
    rc, out = playbook(os.path.join(SCENARIO_DIR, "converge.yml"), "-e", "backup_password=not-the-password")
    assert rc != 0, out
    assert "backup_password does not open the existing repository" in out, out
    assert "Nothing was changed" in out
    assert "not-the-password" not in out
    assert state() == before


def test_bad_input_fails_before_any_change(host):
    before = host.check_output("sha256sum /etc/gpuops-backup/*")
    rc, out = playbook(os.path.join(SCENARIO_DIR, "converge.yml"), "-e", '{"backup_paths": ["etc"]}')
    assert rc != 0 and "backup_paths must be a non-empty list of absolute paths" in out, out
    rc, out = playbook(os.path.join(SCENARIO_DIR, "converge.yml"), "-e", "backup_interval_hours=5")
    assert rc != 0 and "backup_interval_hours" in out, out
    assert host.check_output("sha256sum /etc/gpuops-backup/*") == before


def test_sftp_repository_backup_and_restore(host):
    server = testinfra.get_host("docker://" + SERVER_NAME)
    # The server (prepare.yml: sshd, a login "restic") takes a key made for this client; the client knows the
    # server's host key from ssh-keyscan (checked out of band on a real fleet).
    key = server.check_output("rm -f /root/sftp-client /root/sftp-client.pub && ssh-keygen -q -t ed25519 -N '' -C %s "
                              "-f /root/sftp-client && cat /root/sftp-client", HOST_NAME)
    server.check_output("install -d -o restic -g restic -m 0700 /home/restic/.ssh && "
                        "install -o restic -g restic -m 0600 /root/sftp-client.pub /home/restic/.ssh/authorized_keys")
    known = host.check_output("ssh-keyscan -t ed25519 %s 2>/dev/null", SERVER_NAME)
    assert known.startswith(SERVER_NAME + " ssh-ed25519 "), known
    sftp = {"backup_repository_type": "sftp", "backup_sftp_host": SERVER_NAME, "backup_sftp_user": "restic",
            "backup_sftp_path": "/srv/restic/" + HOST_NAME, "backup_sftp_private_key": key, "backup_sftp_known_hosts": [known]}
    rc, out = playbook(os.path.join(SCENARIO_DIR, "converge.yml"), "-e", json.dumps(sftp))
    assert rc == 0, out
    key_body = key.splitlines()[1]
    assert key_body not in out
    for path in ("/etc/gpuops-backup/sftp.key", "/etc/gpuops-backup/known_hosts"):
        f = host.file(path)
        assert (f.user, f.group, f.mode) == ("root", "root", 0o600), path
    assert host.file("/etc/gpuops-backup/known_hosts").content_string == known + "\n"
    env = host.file("/etc/gpuops-backup/repository.env").content_string
    assert "RESTIC_REPOSITORY='sftp:restic@%s:/srv/restic/%s'" % (SERVER_NAME, HOST_NAME) in env and "AWS_" not in env
    # The repository is the server's files, owned by the SFTP login.
    config = server.file("/srv/restic/%s/config" % HOST_NAME)
    assert config.exists and config.user == "restic"

    rc, journal = run_backup(host)
    assert rc == 0, journal
    assert key_body not in journal and SECRETS[0] not in journal
    assert len(snapshots(host)) == 1
    assert len(server.check_output("find /srv/restic/%s/data -type f", HOST_NAME).splitlines()) > 0
    rc, out = restore("-e", "backup_restore_target=/srv/restore-sftp")
    assert rc == 0, out
    original = {k: v for k, v in tree_sums(host, CKPT).items() if not k.endswith(".tmp")}
    assert tree_sums(host, "/srv/restore-sftp" + CKPT) == original and len(original) == 89
    check = host.run("gpuops-backup restic check")
    assert check.rc == 0 and "no errors were found" in check.stdout, check.stdout + check.stderr
