# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the booted server of `make test-server` has running after its reboot, read in the guest as root and printed as
one JSON object for tests/vm/server-check.yml to assert on (the script module runs it; Python's standard library
only).

system         `systemctl is-system-running --wait`: "running" once every unit has started, "degraded" if one failed
units          every enabled service, timer and socket unit: its ActiveState, SubState, Result, Type, start condition
not_running    those of them not doing their job (see not_running(); a oneshot without RemainAfterExit is "inactive"
               with Result "success" once it ran, a unit whose condition did not hold has not run)
failed         systemctl --failed
nft_tables     `nft list tables` ("inet gpuops", Docker's "ip filter", "ip nat" ...); ruleset: whose rules are loaded
nft_before_link  the firewall unit's start (ufw.service or nftables.service) and the first link up in this boot's
               journal, in monotonic seconds
luks           `cryptsetup status` of every open dm-crypt mapping; mounts: findmnt of the data volume
docker_root    `docker info`'s DockerRootDir
sysctl         the hardening role's file (/etc/sysctl.d/99-zz-gpuops-hardening.conf): key, wanted, running value
audit_rules    `auditctl -l`; audit_rules_missing: the hardening role's rules (AUDIT_FILE) that it does not list
timers         `systemctl list-timers --all` lines
boots          `journalctl --list-boots` (the previous boot must be there)
"""
import json
import re
import subprocess
import sys

SYSCTL_FILE = "/etc/sysctl.d/99-zz-gpuops-hardening.conf"
AUDIT_FILE = "/etc/audit/rules.d/50-gpuops.rules"


def run(*argv):
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              check=False)
    except OSError as error:  # the command is missing
        return 127, str(error)
    return proc.returncode, proc.stdout


def unit_states():
    _rc, out = run("systemctl", "list-unit-files", "--state=enabled", "--type=service,timer,socket", "--no-legend",
                   "--plain")
    names = [line.split()[0] for line in out.splitlines() if line.strip() and "@" not in line.split()[0]]
    units = {}
    for name in names:
        _rc, show = run("systemctl", "show", name, "-p", "ActiveState,SubState,Result,Type,RemainAfterExit,"
                        "ConditionResult,ConditionTimestampMonotonic,ExecMainStartTimestampMonotonic,"
                        "NextElapseUSecRealtime,LoadState,WantedBy,RequiredBy")
        units[name] = dict(line.split("=", 1) for line in show.splitlines() if "=" in line)
    return units


def wanted_by_active(unit):
    """Whether a unit that wants this one (its WantedBy/RequiredBy in the running manager: multi-user.target, a
    service whose Wants= names it) is active. mdadm's mdcheck timers are enabled for mdmonitor.service, which runs only
    where an array has redundancy to watch."""
    for name in (unit.get("WantedBy", "") + " " + unit.get("RequiredBy", "")).split():
        if run("systemctl", "is-active", "--quiet", name)[0] == 0:
            return True
    return False


def not_running(units):
    """The enabled units that are not doing their job: of those an active unit wants, a timer or socket not active, or
    a service not active that is neither a oneshot (or idle) job which ran and succeeded nor a unit whose start
    condition did not hold in this boot."""
    problems = {}
    for name, unit in sorted(units.items()):
        active = unit.get("ActiveState") == "active"
        if active or not wanted_by_active(unit):
            continue
        if name.endswith((".timer", ".socket")):
            problems[name] = unit.get("ActiveState", "?")
            continue
        ran = unit.get("ExecMainStartTimestampMonotonic", "0") not in ("", "0")
        if unit.get("Type") in ("oneshot", "idle") and ran and unit.get("Result") == "success":
            continue
        if unit.get("ConditionTimestampMonotonic", "0") not in ("", "0") and unit.get("ConditionResult") == "no":
            continue
        problems[name] = "%s/%s (result %s)" % (unit.get("ActiveState"), unit.get("SubState"), unit.get("Result"))
    return problems


def first_monotonic(lines, pattern):
    for line in lines:
        stamp, _sep, text = line.partition(" ")
        if re.search(pattern, text):
            return float(stamp.strip("[]"))
    return None


def firewall_before_link(unit):
    # short-monotonic: "[   12.345678] host unit[pid]: message"
    _rc, out = run("journalctl", "-b", "-o", "short-monotonic", "--no-pager", "-q")
    lines = [re.sub(r"^\[\s*", "[", line) for line in out.splitlines()]
    firewall = first_monotonic(lines, r"systemd\[1\]: (Finished|Started) %s" % re.escape(unit))
    link = first_monotonic(lines, r"(systemd-networkd\[\d+\]: \S+: (Link UP|Gained carrier)|kernel: .*: Link is Up)")
    return {"unit": unit, "firewall": firewall, "first_link_up": link}


def luks():
    _rc, out = run("dmsetup", "ls", "--target", "crypt")
    mappings = [line.split()[0] for line in out.splitlines() if line.strip() and "No devices" not in line]
    status = {}
    for name in mappings:
        _rc, text = run("cryptsetup", "status", name)
        status[name] = text
    return status


def sysctl():
    rows = []
    try:
        with open(SYSCTL_FILE) as handle:
            text = handle.read()
    except OSError as error:
        return {"error": str(error)}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        key, wanted = (part.strip() for part in line.split("=", 1))
        rc, value = run("sysctl", "-n", key)
        wanted, value = " ".join(wanted.split()), " ".join(value.split())
        rows.append({"key": key, "wanted": wanted, "running": value, "in_effect": rc == 0 and wanted == value})
    return {"rows": rows}


def missing_audit_rules(loaded):
    """The rules of the hardening role's file (AUDIT_FILE) that `auditctl -l` does not list (it prints a watched
    directory without its trailing slash)."""
    try:
        with open(AUDIT_FILE) as handle:
            wanted = [line.strip() for line in handle if line.startswith(("-w", "-a"))]
    except OSError as error:
        return ["%s: %s" % (AUDIT_FILE, error)]
    listed = {" ".join(line.split()) for line in loaded}
    return [rule for rule in wanted if " ".join(re.sub(r"^(-w \S+?)/( |$)", r"\1\2", rule).split()) not in listed]


def main():
    state = {}
    # Once the system has finished starting (or failed to): "running" or "degraded".
    state["system"] = run("systemctl", "is-system-running", "--wait")[1].strip()
    state["boot_id"] = open("/proc/sys/kernel/random/boot_id").read().strip()
    state["units"] = unit_states()
    state["not_running"] = not_running(state["units"])
    state["failed"] = run("systemctl", "--failed", "--no-legend", "--plain")[1].strip()
    # The firewall role's backend: ufw on Ubuntu (its chains in iptables-nft's tables), nftables (table inet gpuops)
    # elsewhere; Docker's chains beside it.
    firewall = "ufw.service" if "ufw.service" in state["units"] else "nftables.service"
    state["nft_tables"] = run("nft", "list", "tables")[1].splitlines()
    ruleset = run("nft", "list", "ruleset")[1]
    state["ruleset"] = {"gpuops_table": "table inet gpuops" in state["nft_tables"],
                        "ufw_chains": "chain ufw-user-input" in ruleset,
                        "docker_chains": "chain DOCKER" in ruleset, "lines": len(ruleset.splitlines())}
    state["nft_before_link"] = firewall_before_link(firewall)
    state["luks"] = luks()
    state["mounts"] = run("findmnt", "-n", "-o", "TARGET,SOURCE,FSTYPE", "-l")[1].splitlines()
    state["docker_root"] = run("docker", "info", "--format", "{{.DockerRootDir}}")[1].strip()
    state["sysctl"] = sysctl()
    state["audit_rules"] = run("auditctl", "-l")[1].splitlines()
    state["audit_rules_missing"] = missing_audit_rules(state["audit_rules"])
    state["timers"] = run("systemctl", "list-timers", "--all", "--no-legend", "--plain")[1].splitlines()
    state["boots"] = run("journalctl", "--list-boots", "--no-pager", "-q")[1].splitlines()
    state["apparmor"] = run("aa-status", "--json")[1].strip()[:2000]
    json.dump(state, sys.stdout)


if __name__ == "__main__":
    main()
