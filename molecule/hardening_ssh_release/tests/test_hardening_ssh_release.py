"""Issue 28: hardening on Ubuntu 24.04's release openssh-server keeps SSH up, proves a new login, and rolls back.

The host runs openssh-server 1:9.6p1-3ubuntu13 (held), whose ssh.socket has no BindIPv6Only. Logins are tried over the
SSH port from the host itself with the admin's key (/root/gpuadmin_ed25519, made by prepare.yml).
"""
import os
import subprocess

from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook
from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

testinfra_hosts = ["docker://gpuops-hardening_ssh_release"]
CONTAINER = "gpuops-hardening_ssh_release"
RELEASE = "1:9.6p1-3ubuntu13"
SOCKET_DROPIN = "/etc/systemd/system/ssh.socket.d/zz-gpuops-listen.conf"
SSHD_DROPIN = "/etc/ssh/sshd_config.d/00-gpuops-hardening.conf"
GUARDED = ["/etc/ssh/sshd_config", SSHD_DROPIN, SOCKET_DROPIN]
ROLE_FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "roles", "hardening", "files")
SSH = ("timeout 60 ssh -i /root/gpuadmin_ed25519 -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no "
       "-o UserKnownHostsFile=/dev/null -o ConnectTimeout=10 -o LogLevel=ERROR")


def login(host, port=22, address="127.0.0.1"):
    return host.run("%s -p %d gpuadmin@%s id -un" % (SSH, port, address))


def listens(host, port):
    return host.run("ss -Htln 'sport = :%d'" % port).stdout


def checksums(host):
    return host.check_output("sha256sum %s 2>&1 || true" % " ".join(GUARDED))


def playbook(*extra):
    """ansible-playbook converge.yml on the instance; (rc, output), the output with stderr, where ansible-core 2.19
    writes a task's failure."""
    return molecule_playbook(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "converge.yml"), *extra)


def test_openssh_is_the_release_version_held_and_its_socket_has_no_bindipv6only(host):
    # The premise: without this the scenario would test noble-updates' package, as every other scenario does.
    assert host.check_output("dpkg-query -W -f='${Version}' openssh-server") == RELEASE
    assert "openssh-server" in host.check_output("apt-mark showhold").split()
    unit = host.file("/usr/lib/systemd/system/ssh.socket").content_string
    assert "ListenStream=22" in unit and "BindIPv6Only" not in unit, unit


def test_ssh_socket_listens_on_both_families_each_on_its_own(host):
    dropin = host.file(SOCKET_DROPIN).content_string
    assert "ListenStream=0.0.0.0:22" in dropin and "ListenStream=[::]:22" in dropin, dropin
    assert "BindIPv6Only=ipv6-only" in dropin, dropin
    assert host.check_output("systemctl is-active ssh.socket") == "active"
    assert host.check_output("systemctl show ssh.socket -p BindIPv6Only --value") == "ipv6-only"
    listening = listens(host, 22)
    assert "0.0.0.0:22" in listening and "[::]:22" in listening, listening


def test_a_new_key_login_works_and_passwords_are_off(host):
    out = login(host)
    assert out.rc == 0 and out.stdout.strip() == "gpuadmin", out.stderr
    effective = host.check_output("sshd -T -C user=gpuadmin,host=localhost,addr=127.0.0.1").splitlines()
    assert "passwordauthentication no" in effective and "permitrootlogin no" in effective


def test_the_login_proof_leaves_nothing_behind(host):
    # The role's one-time probe key is gone from authorized_keys, and the rollback timer and its copies are gone.
    keys = host.file("/home/gpuadmin/.ssh/authorized_keys")
    assert keys.content_string == host.file("/root/gpuadmin_ed25519.pub").content_string
    assert keys.user == "gpuadmin" and keys.mode == 0o600
    assert "gpuops-ssh-rollback" not in host.check_output("systemctl list-timers --all --no-legend")
    assert not host.file("/var/lib/gpuops-hardening/ssh-rollback").exists


def test_a_socket_that_cannot_bind_is_rolled_back_and_ssh_stays_up(host):
    # Negative control: port 2222 is held by another listener, so the new ssh.socket cannot bind. The role must put
    # the previous files back, bring ssh.socket back on 22 and fail saying so.
    before = checksums(host)
    host.run("systemd-run --unit gpuops-port-squatter python3 -m http.server 2222 --bind 0.0.0.0")
    try:
        wait_for(lambda: "0.0.0.0:2222" in listens(host, 2222), 60, "the squatter on port 2222")
        rc, run = playbook("-e", "hardening_ssh_port=2222", "--tags", "hardening_preflight,hardening_sshd")
        assert rc != 0, run[-3000:]
        # Whatever the callback's line folding: one space between words.
        text = " ".join(run.replace("\\n", " ").split())
        assert "failed and was rolled back. Failed task: Restart ssh.socket on its new addresses" in text, text[-4000:]
        assert "it answers on 0.0.0.0:22" in text, text[-4000:]
        assert checksums(host) == before
        assert host.check_output("systemctl is-active ssh.socket") == "active"
        assert "0.0.0.0:22" in listens(host, 22)
        out = login(host)
        assert out.rc == 0 and out.stdout.strip() == "gpuadmin", out.stderr
        assert not host.file("/var/lib/gpuops-hardening/ssh-rollback").exists
    finally:
        host.run("systemctl stop gpuops-port-squatter")


def test_the_host_rolls_back_by_itself_when_the_play_never_proves_the_change(host):
    # As if the change had cut Ansible's connection: arm the guard (10 s), move ssh.socket to port 2223 by hand, and
    # never prove it. The host's timer must put the files back and bring ssh.socket back on 22.
    before = checksums(host)
    subprocess.run(["docker", "cp", os.path.join(ROLE_FILES, "ssh-guard.py"), CONTAINER + ":/root/ssh-guard.py"], check=True)
    armed = host.run("python3 /root/ssh-guard.py arm --seconds 10 --service ssh --socket ssh.socket "
                     + " ".join("--file %s" % f for f in GUARDED))
    assert armed.rc == 0, armed.stderr
    host.run("sed -i 's/:22$/:2223/' %s && systemctl daemon-reload && systemctl restart ssh.socket" % SOCKET_DROPIN)
    assert "2223" in listens(host, 2223)
    wait_for(lambda: checksums(host) == before and "0.0.0.0:22" in listens(host, 22), 90,
             "the rollback timer to restore ssh.socket on port 22")
    out = login(host)
    assert out.rc == 0 and out.stdout.strip() == "gpuadmin", out.stderr
    assert not listens(host, 2223)


def test_the_release_fail2ban_that_cannot_start_is_refused_by_name(host):
    # Found by the same audit: noble's release fail2ban (1.0.2-3) imports asynchat, gone from Python 3.12, and its
    # server exits at once while `fail2ban-client --test` passes. The role must refuse it, naming the fix; the
    # converge above ran with noble-updates' 1.0.2-3ubuntu0.1, which passed the same check. Last: it downgrades fail2ban.
    down = host.run("DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --allow-downgrades "
                    "fail2ban=1.0.2-3 >/dev/null")
    assert down.rc == 0, down.stderr
    assert host.run("python3 -c 'import fail2ban.server.asyncserver'").rc != 0
    rc, run = playbook("--tags", "hardening_preflight,hardening_fail2ban")
    text = " ".join(run.replace("\\n", " ").split())
    assert rc != 0 and "Refuse a fail2ban that cannot start" in text, text[-3000:]
    assert "LP #2055114" in text and "noble-updates" in text and "hardening_fail2ban_enabled" in text, text[-3000:]
