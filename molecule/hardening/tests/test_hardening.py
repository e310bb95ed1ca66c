"""Verify the hardening role by really trying: logins from a second container, ssh-audit, the firewall."""
import os
import re
import subprocess
import sys

import pytest
import testinfra

from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook
from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

# Assertions run on the hardened server; the client container is driven through its own backend.
testinfra_hosts = ["docker://gpuops-hardening"]
SERVER = "gpuops-hardening"
CLIENT = testinfra.get_host("docker://gpuops-hardening-client")
# On the same network, outside the SSH sources (molecule.yml): nothing installed, bash only.
OUTSIDER = testinfra.get_host("docker://gpuops-hardening-outsider")
# ServerAlive*: a connection that fail2ban cuts after it was set up (its ban rejects the packets of an established
# session too) ends in about 15 s instead of retransmitting until the test run is killed.
SSH = "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3"


def listening(host, port, address="0.0.0.0"):
    """Wait (up to 60 s) until a listener started with systemd-run accepts on address:port."""
    wait_for(lambda: host.socket("tcp://%s:%d" % (address, port)).is_listening, 60, "a listener on %s:%d" % (address, port))


def client(command):
    """Run a shell command on the client container (no quoting of our own arguments), for at most 120 s."""
    return CLIENT.run("timeout 120 sh -c %s", command)


def test_sshd_config_is_valid(host):
    assert host.run("sshd -t").rc == 0


def test_dropin_is_included_first(host):
    lines = [ln for ln in host.file("/etc/ssh/sshd_config").content_string.splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    assert lines[0] == "Include /etc/ssh/sshd_config.d/*.conf"
    assert host.file("/etc/ssh/sshd_config.d/00-gpuops-hardening.conf").mode == 0o600


@pytest.mark.parametrize("setting", [
    "permitrootlogin no", "passwordauthentication no", "kbdinteractiveauthentication no",
    "pubkeyauthentication yes", "maxauthtries 3", "logingracetime 30", "clientaliveinterval 300",
    "clientalivecountmax 2", "allowtcpforwarding local", "x11forwarding no", "authenticationmethods publickey",
])
def test_effective_sshd_setting(host, setting):
    out = host.check_output("sshd -T -C user=gpuadmin,host=client,addr=10.0.0.1")
    assert setting in out.splitlines()


def ssh_audit(host):
    # The current ssh-audit (pinned in requirements-dev.txt) runs from the controller's venv against the server's
    # address: the containers cannot reach PyPI, and Debian's ssh-audit 2.5 misjudges current OpenSSH.
    address = host.check_output("hostname -I").split()[0]
    return subprocess.run([sys.executable, "-m", "ssh_audit", "-n", address],
                          capture_output=True, text=True, timeout=120, check=False)


def test_ssh_audit_reports_no_failure(host):
    out = ssh_audit(host)
    assert "(gen) software: OpenSSH" in out.stdout, out.stdout + out.stderr
    assert "sntrup761x25519-sha512@openssh.com" in out.stdout, out.stdout
    fails = [ln for ln in out.stdout.splitlines() if "[fail]" in ln]
    assert not fails, "\n".join(fails)


def test_firewall_is_our_table_with_default_drop(host):
    if host.system_info.distribution == "ubuntu":
        # Ubuntu's backend is ufw: active, deny by default, only 22 and the inventory's 8080 allowed (no JupyterLab
        # in this play: no 8888).
        status = host.check_output("ufw status verbose")
        assert "Status: active" in status, status
        assert "Default: deny (incoming)" in status, status
        allowed = sorted(set(re.findall(r"^(\d+)/tcp(?: \(v6\))?\s+ALLOW IN", status, re.M)))
        assert allowed == ["22", "8080"], status
        assert host.service("ufw").is_enabled
        return
    ruleset = host.check_output("nft list ruleset")
    assert "table inet gpuops_filter" in ruleset
    # Docker's iptables-nft rules survive: nothing in our ruleset flushes the whole ruleset.
    assert not re.search(r"^\s*flush\s+ruleset", host.file("/etc/nftables.conf").content_string, re.M)
    chain = host.check_output("nft list chain inet gpuops_filter input")
    assert "policy drop" in chain
    # 22 and the inventory's 8080; JupyterLab is not in this play, so no 8888 (earlier defaults opened it everywhere).
    ports = re.findall(r"dport (\d+) accept", chain)
    assert ports == ["22", "8080"], chain
    assert host.service("nftables").is_enabled


def test_firewall_really_filters(host):
    # A listener on an allowed port (the inventory's 8080) is reachable from the client; one on JupyterLab's 8888 (a
    # host without JupyterLab) and one on another port are not, though both answer on the server's loopback.
    ports = (8080, 8888, 9999)
    for port in ports:
        host.run("systemd-run --unit gpuops-listen-%d python3 -m http.server %d" % (port, port))
    try:
        for port in ports:
            listening(host, port)
        reached = {port: client("timeout 5 bash -c '</dev/tcp/%s/%d'" % (SERVER, port)) for port in ports}
        local = {port: host.run("timeout 5 bash -c '</dev/tcp/127.0.0.1/%d'" % port) for port in ports}
    finally:
        for port in ports:
            host.run("systemctl stop gpuops-listen-%d" % port)
    assert reached[8080].rc == 0, reached[8080].stderr
    assert reached[8888].rc != 0, "8888 is open on a host without JupyterLab"
    assert reached[9999].rc != 0
    assert all(out.rc == 0 for out in local.values()), "loopback must stay open"


def test_ssh_answers_its_sources_only(host):
    # The inventory limits SSH to the client and the controller (port spelled "22"): one rule for 22, from those
    # addresses only, and the outsider on the same network cannot connect while the client can. The outsider reaches
    # 8080 (open to anywhere), so the network carries it: what refuses it on 22 is the rule's sources.
    if host.system_info.distribution == "ubuntu":
        status = host.check_output("ufw status")
        assert sorted(re.findall(r"^22/tcp\s+ALLOW\s+(\S+)", status, re.M)) == ["172.31.251.1", "172.31.251.10"], status
    else:
        chain = host.check_output("nft list chain inet gpuops_filter input")
        assert [ln.strip() for ln in chain.splitlines() if "dport 22 " in ln] == [
            "ip saddr { 172.31.251.1, 172.31.251.10 } tcp dport 22 accept"], chain
    host.run("systemd-run --unit gpuops-listen-8080 python3 -m http.server 8080")
    try:
        listening(host, 8080)
        inside = client("timeout 5 bash -c '</dev/tcp/172.31.251.2/22'")
        outside = OUTSIDER.run("timeout 5 bash -c '</dev/tcp/172.31.251.2/22'")
        outside_open_port = OUTSIDER.run("timeout 5 bash -c '</dev/tcp/172.31.251.2/8080'")
    finally:
        host.run("systemctl stop gpuops-listen-8080")
    assert inside.rc == 0, inside.stderr
    assert outside_open_port.rc == 0, outside_open_port.stderr
    assert outside.rc != 0, "the outsider reached SSH, which its sources leave out"


def test_key_login_as_admin_works_and_sudo_is_there(host):
    out = client("%s gpuadmin@%s id -un" % (SSH, SERVER))
    assert out.rc == 0, out.stderr
    assert out.stdout.strip() == "gpuadmin"


def test_local_forwarding_reaches_a_server_local_port_remote_is_refused(host):
    # The Jupyter tunnel (ssh -L 8888:localhost:8888): a listener bound to the server's loopback, reached through
    # sshd (ssh -W opens the same direct-tcpip channel as -L). Remote forwarding (ssh -R) is refused.
    host.run("systemd-run --unit gpuops-listen-loopback python3 -m http.server 8889 --bind 127.0.0.1")
    try:
        listening(host, 8889, "127.0.0.1")
        tunnel = client("printf 'GET / HTTP/1.0\\r\\n\\r\\n' | %s -W 127.0.0.1:8889 gpuadmin@%s" % (SSH, SERVER))
        remote = client("%s -o ExitOnForwardFailure=yes -R 19999:127.0.0.1:22 gpuadmin@%s true" % (SSH, SERVER))
    finally:
        host.run("systemctl stop gpuops-listen-loopback")
    assert "HTTP/1.0 200" in tunnel.stdout, tunnel.stdout + tunnel.stderr
    assert remote.rc != 0
    assert "remote port forwarding failed" in remote.stderr, remote.stderr


def test_password_login_is_refused(host):
    out = client("sshpass -p gpuadmin-password %s -o BatchMode=no -o PubkeyAuthentication=no "
                 "-o PreferredAuthentications=password,keyboard-interactive gpuadmin@%s true" % (SSH, SERVER))
    assert out.rc != 0
    assert "Permission denied (publickey)" in out.stderr


def test_root_login_is_refused_even_with_an_authorized_key(host):
    # prepare authorized the same key for root: only PermitRootLogin stops it.
    out = client("%s root@%s true" % (SSH, SERVER))
    assert out.rc != 0
    assert "Permission denied" in out.stderr
    out = client("sshpass -p root-password %s -o BatchMode=no -o PubkeyAuthentication=no root@%s true"
                 % (SSH, SERVER))
    assert out.rc != 0


def test_unattended_upgrades_exclude_nvidia_and_cuda(host):
    dump = host.check_output("apt-config dump Unattended-Upgrade::Package-Blacklist")
    for pattern in ("nvidia-", "libnvidia-", "cuda-", "libcuda", "libcudnn", "nvidia-container"):
        assert '"%s"' % pattern in dump
    assert host.check_output("apt-config dump APT::Periodic::Unattended-Upgrade").endswith('"1";')


# needrestart's own reading of its configuration (needrestart.conf, which evaluates conf.d/*.conf) and its own choice:
# the first override_rc pattern, in sorted order, that matches the unit.
NEEDRESTART_OVERRIDE = (
    "perl -e 'our %%nrconf; my $fn = q(/etc/needrestart/needrestart.conf); eval do { local(@ARGV, $/) = $fn; <> };"
    " die $@ if $@; for my $re (sort keys %%{$nrconf{override_rc}}) { if (q(%s) =~ /$re/) {"
    " print $nrconf{override_rc}{$re}; exit } } print q(none)'")


def test_needrestart_leaves_apt_listchanges_database_service_alone(host):
    # Restarting it after an apt run would hold apt while the load is high (roles/hardening/tasks/updates.yml).
    assert host.check_output(NEEDRESTART_OVERRIDE % "apt-listchanges.service") == "0"
    # Negative control: a service with no override of ours is restarted as needrestart's defaults say.
    assert host.check_output(NEEDRESTART_OVERRIDE % "fail2ban.service") == "none"


def test_kernel_parameters_keep_docker_forwarding(host):
    conf = host.file("/etc/sysctl.d/99-zz-gpuops-hardening.conf").content_string
    assert "net.ipv4.ip_forward = 1" in conf
    assert "fs.suid_dumpable = 0" in conf


def test_auditd_rules_installed_but_not_running_in_a_container(host):
    rules = host.file("/etc/audit/rules.d/50-gpuops.rules").content_string
    for path in ("/etc/ssh/sshd_config", "/etc/sudoers", "/run/docker.sock", "/dev/nvidiactl"):
        assert "-w %s " % path in rules
    assert not host.service("auditd").is_running
    assert not host.service("auditd").is_enabled


def test_core_dumps_off_umask_banner(host):
    assert "hard    core    0" in host.file("/etc/security/limits.d/90-gpuops-coredump.conf").content_string
    assert "Storage=none" in host.file("/etc/systemd/coredump.conf.d/90-gpuops.conf").content_string
    assert re.search(r"^UMASK\s+027$", host.file("/etc/login.defs").content_string, re.M)
    assert host.check_output("bash -lc umask") == "0027"
    assert "Authorized use only" in host.file("/etc/issue.net").content_string
    banner = client("%s gpuadmin@%s true" % (SSH, SERVER))
    assert "Authorized use only" in banner.stderr


def test_core_dumps_off_and_idle_timeout_in_login_shells(host):
    assert host.file("/etc/profile.d/gpuops-coredump.sh").content_string.splitlines()[-1] == "ulimit -c 0"
    assert host.check_output("bash -lc 'ulimit -c'") == "0"
    # An interactive login shell idle at its prompt exits after hardening_shell_timeout (900 s); nobody can unset it.
    assert host.check_output("bash -lc 'echo $TMOUT'") == "900"
    unset = host.run("bash -lc 'unset TMOUT'")
    assert unset.rc != 0 and "readonly" in unset.stderr, unset.stderr
    assert host.check_output("sh -lc 'echo $TMOUT'") == "900"


def test_usbguard_blocks_what_its_rules_do_not_allow_and_stays_off_without_a_usb_bus(host):
    assert host.package("usbguard").is_installed
    conf = host.file("/etc/usbguard/usbguard-daemon.conf").content_string
    for line in ("RuleFile=/etc/usbguard/rules.conf", "ImplicitPolicyTarget=block", "PresentDevicePolicy=apply-policy",
                 "PresentControllerPolicy=apply-policy", "InsertedDevicePolicy=apply-policy",
                 "RestoreControllerDeviceState=false"):
        assert re.search("^%s$" % re.escape(line), conf, re.M), line
    rules = host.file("/etc/usbguard/rules.conf")
    assert rules.exists and rules.user == "root" and rules.mode == 0o600
    # A container has no USB bus of its own: the daemon stays masked (not failed), so that nothing, such as the
    # package's usbguard-dbus unit at a boot, can start it with empty rules and block whatever is present.
    service = host.service("usbguard")
    assert not service.is_running and service.is_masked
    assert host.run("systemctl is-failed --quiet usbguard").rc != 0
    if host.system_info.distribution in ("debian", "ubuntu"):
        assert not host.service("usbguard-dbus").is_enabled


def test_file_integrity_and_rootkit_scanner(host):
    # AIDE: one strong hash, container storage and data left out, a baseline database that AIDE can check against.
    conf = host.file("/etc/aide/aide.conf").content_string
    assert re.search(r"^Checksums = sha512$", conf, re.M), conf
    exclude = host.file("/etc/aide/aide.conf.d/98_aide_gpuops_exclude").content_string
    assert "!/var/lib/docker(/|$)" in exclude
    assert host.run("aide --config-check --config=/etc/aide/aide.conf").rc == 0
    database = host.file("/var/lib/aide/aide.db")
    assert database.exists and database.size > 0 and database.mode == 0o600
    # A file added after the baseline is reported (exit code bit 1: new files), one under an excluded tree is not.
    host.run("mkdir -p /var/lib/docker/gpuops-test && touch /var/lib/docker/gpuops-test/ignored /etc/gpuops-aide-test")
    try:
        check = host.run("aide --config=/etc/aide/aide.conf --check")
    finally:
        host.run("rm -rf /etc/gpuops-aide-test /var/lib/docker/gpuops-test")
    assert check.rc < 8 and check.rc & 1, check.stdout + check.stderr
    assert "/etc/gpuops-aide-test" in check.stdout
    assert "/var/lib/docker/gpuops-test" not in check.stdout
    assert host.exists("chkrootkit")


def test_fail2ban_jail_local_exists_and_the_sshd_jail_is_ours(host):
    assert host.file("/etc/fail2ban/jail.local").exists
    assert "backend = systemd" in host.file("/etc/fail2ban/jail.d/gpuops-sshd.local").content_string


def test_fail2ban_bans_a_client_that_keeps_failing(host):
    # After every test whose login fails on purpose: fail2ban may count a failure logged after the ban once the ban
    # is lifted, so a later refused login could ban the client again, mid-session. Every test takes host, so pytest
    # keeps the file's order (tests without it would run after the module's host tests, this one included).
    # Failed logins from the client (a wrong key user) until fail2ban, reading the journal, bans it.
    assert host.service("fail2ban").is_running
    client_ip = CLIENT.check_output("hostname -I").split()[0]
    try:
        for _attempt in range(8):
            client("%s nosuchuser@%s true" % (SSH, SERVER))
            if client_ip in host.check_output("fail2ban-client get sshd banned"):
                break
        assert "Journal matches:" in host.check_output("fail2ban-client status sshd")
        assert client_ip in host.check_output("fail2ban-client get sshd banned")
        # The ban is real: the client can no longer reach sshd at all.
        assert client("timeout 5 bash -c '</dev/tcp/%s/22'" % SERVER).rc != 0
    finally:
        host.run("fail2ban-client unban --all")
    assert client("timeout 5 bash -c '</dev/tcp/%s/22'" % SERVER).rc == 0


def test_post_quantum_only_leaves_ssh_audit_without_a_warning(host):
    # Last, as it changes sshd: the role's SSH part again (its tags, as an operator changing only sshd would run it;
    # the tags must reach the tasks of the dynamically included sshd.yml) with hardening_ssh_post_quantum_only, then
    # ssh-audit 3.9 must find neither a failure nor a warning, only post-quantum key exchange, and a key login must
    # still work.
    rc, run = molecule_playbook(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "converge.yml"),
                                "-e", "hardening_ssh_post_quantum_only=true", "--tags", "hardening_preflight,hardening_sshd")
    assert rc == 0, run[-6000:]
    assert "TASK [gpuops.gpu_server.hardening : Install the hardening packages" not in run, "--tags ran more than asked"
    assert "post-quantum key exchange only" in host.file("/etc/ssh/sshd_config.d/00-gpuops-hardening.conf").content_string
    out = ssh_audit(host)
    assert "(gen) software: OpenSSH" in out.stdout, out.stdout + out.stderr
    flagged = [ln for ln in out.stdout.splitlines() if "[fail]" in ln or "[warn]" in ln]
    assert not flagged, "\n".join(flagged)
    kex = re.findall(r"^\(kex\) (\S+)", out.stdout, re.M)
    assert kex and all("sntrup761" in k or "mlkem768" in k or k.startswith("kex-strict") or k.startswith("ext-info")
                       for k in kex), kex
    # Debian 12's OpenSSH 9.2 client speaks sntrup761x25519: the admin still logs in.
    login = client("%s gpuadmin@%s id -un" % (SSH, SERVER))
    assert login.rc == 0 and login.stdout.strip() == "gpuadmin", login.stderr
