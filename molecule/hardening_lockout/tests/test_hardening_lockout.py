"""The lockout guard refused: sshd, the firewall and the packages are exactly as before the run."""


def test_sshd_config_untouched(host):
    assert host.run("sha256sum --check --quiet /root/gpuops-before.sha256").rc == 0
    assert not host.file("/etc/ssh/sshd_config.d/00-gpuops-hardening.conf").exists
    assert host.check_output("ls /etc/ssh/sshd_config.d/") == \
        host.file("/root/gpuops-before.sshd_config.d").content_string.strip()


def test_password_login_still_allowed(host):
    out = host.check_output("sshd -T -C user=gpuadmin,host=client,addr=10.0.0.1")
    assert "passwordauthentication yes" in out.splitlines()


def test_no_firewall_rules(host):
    ruleset = host.check_output("nft list ruleset")
    assert "gpuops_filter" not in ruleset
    assert "policy drop" not in ruleset


def test_nothing_installed(host):
    now = host.check_output("dpkg-query -W -f='${Package}\\n' | sort")
    assert now == host.file("/root/gpuops-before.packages").content_string.strip()
    assert not host.package("fail2ban").is_installed
