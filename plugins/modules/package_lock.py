#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
---
module: package_lock
short_description: Wait until no process holds the package manager's locks, then say which packages are missing
version_added: 1.0.0
description:
  - On a freshly booted cloud VM, cloud-init or unattended-upgrades often hold the dpkg or apt lock for
    minutes. Package tasks that start then fail or hang without saying why.
  - This module waits, bounded by O(timeout), until none of the lock files is held, and fails with a message
    that names the holding process when the time runs out.
  - A lock is tested with C(fcntl) F_GETLK, the same kind of lock dpkg, apt and rpm take, so the module never
    takes the lock itself and never changes the host. F_GETLK also sees open file description (OFD) locks, for
    which the kernel reports no pid; the holder is then looked up among the processes that have the file open
    (null when that is not one process).
  - "C(flock) locks, which dpkg, apt and rpm do not take but other tools (scripts with C(flock(1))) do, are invisible
    to F_GETLK: the module reads them from C(/proc/locks) and waits for them too."
  - With O(packages), once the locks are free it reads dpkg's status file and returns in RV(missing) the
    specifications that ansible.builtin.apt with O(ansible.builtin.apt#module:state=present) would still install.
    A role then runs apt only when there is something to install, instead of one apt run (about a second, most of it
    spent opening apt's cache) per task and run.
author:
  - gpuops maintainers (@gpuops)
options:
  paths:
    description:
      - Lock files to watch. When omitted, the module uses the lock files of the host's package manager
        (dpkg/apt on Debian and Ubuntu, rpm/dnf on EL).
      - Lock files that do not exist are not held.
    type: list
    elements: path
  timeout:
    description:
      - Seconds to wait at the most before failing; 0 or more (0 looks once). The wait never runs past it,
        whatever O(sleep) is.
    type: int
    default: 300
  sleep:
    description:
      - Seconds between two looks; more than 0.
    type: float
    default: 1.0
  packages:
    description:
      - apt package specifications, as ansible.builtin.apt takes them (V(NAME), V(NAME:ARCH), V(NAME=VERSION)).
      - A package counts as present when dpkg's state is C(installed) (held packages included) and, for
        V(NAME=VERSION), its version is VERSION; without an architecture, the host's own or C(all).
      - Reported missing so that apt decides, as before, are a version with a wildcard (apt moves an installed match
        to a newer candidate that matches too), name wildcards, V(>=), paths, virtual packages, and every
        specification on a host without dpkg.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: The module only reads; it waits in check mode as well.
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to diff.
  platform:
    support: full
    platforms: posix
    description: Linux hosts with dpkg/apt or rpm/dnf.
notes:
  - The module never reports a change.
"""

EXAMPLES = r"""
- name: Wait for cloud-init or unattended-upgrades to release the package manager
  gpuops.gpu_server.package_lock:
    timeout: 600

- name: Wait for the package manager, then read which of the packages are missing
  gpuops.gpu_server.package_lock:
    packages: [logrotate, rsyslog]
  register: __lock

- name: Install logrotate and rsyslog where one is missing
  ansible.builtin.apt:
    name: [logrotate, rsyslog]
    state: present
  when: __lock.missing | length > 0
"""

RETURN = r"""
waited:
  description: Seconds the module waited for the locks to be released.
  returned: always
  type: float
  sample: 12.5
holders:
  description: The processes that held a lock when the module first looked (empty when none did).
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/var/lib/dpkg/lock-frontend", "pid": 812, "command": "/usr/bin/unattended-upgrade", "lock": "posix"}]
  contains:
    path:
      description: The lock file.
      type: str
    pid:
      description: The holding process; null when it cannot be told (an OFD lock on a file several processes have open).
      type: int
    command:
      description: The holder's command line; null when unknown.
      type: str
    lock:
      description: The kind of lock, V(posix) (fcntl, as dpkg/apt/rpm), V(ofd), V(flock), or V(pid file) (yum/dnf).
      type: str
missing:
  description: The entries of O(packages) that apt would still have to install, in their order (empty when none).
  returned: always
  type: list
  elements: str
  sample: ["nvidia-cuda-toolkit"]
paths:
  description: The lock files that were watched.
  returned: always
  type: list
  elements: str
  sample: ["/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock"]
"""

import fcntl
import os
import struct
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _open_files, _packages

DPKG_STATUS = "/var/lib/dpkg/status"

DEFAULT_LOCKS = {
    "dpkg": [
        "/var/lib/dpkg/lock-frontend",
        "/var/lib/dpkg/lock",
        "/var/lib/apt/lists/lock",
        "/var/cache/apt/archives/lock",
    ],
    "rpm": [
        "/var/lib/rpm/.rpm.lock",
        "/var/cache/dnf/metadata_lock.pid",
        "/var/run/yum.pid",
    ],
}


def _process_command(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            raw = f.read()
    except (IOError, OSError):
        return None
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip() or None


_FLOCK = struct.Struct("hhqqi4x")   # struct flock {short l_type; short l_whence; off_t l_start; off_t l_len; pid_t l_pid;}


def _posix_holder(path):
    """``(pid, kind)`` of a write-conflicting fcntl record lock on path, or None.

    F_GETLK sees POSIX locks (``posix``, dpkg/apt/rpm) and open file description locks (``ofd``), whose pid
    it reports as -1: that pid is looked up in /proc.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (IOError, OSError):
        return None
    try:
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    except (IOError, OSError):
        return None
    finally:
        os.close(fd)
    l_type, dummy, dummy, dummy, l_pid = _FLOCK.unpack(answer)
    if l_type == fcntl.F_UNLCK:
        return None
    if l_pid > 0:
        return l_pid, "posix"
    return None, "ofd"


def _proc_locks(st):
    """``(kind, pid)`` of each lock /proc/locks lists as held on the file ``st`` describes (waiters excluded)."""
    found = []
    try:
        with open("/proc/locks") as f:
            lines = f.read().splitlines()
    except (IOError, OSError):
        return found
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            dev = os.makedev(int(major, 16), int(minor, 16))
            pid = int(fields[4])
        except ValueError:
            continue
        if dev == st.st_dev and int(inode) == st.st_ino:
            found.append((fields[1].lower(), pid if pid > 0 else None))
    return found


def lock_holders(path):
    """Who holds a lock on path: ``[(pid or None, kind)]``, kind ``posix``, ``ofd`` or ``flock``."""
    try:
        st = os.stat(path)
    except (IOError, OSError):
        return []
    holders = []
    posix = _posix_holder(path)
    if posix is not None:
        pid, kind = posix
        if pid is None:
            owners = _open_files.pids_with_open(st)
            pid = owners[0] if len(owners) == 1 else None
        holders.append((pid, kind))
    # flock() locks are invisible to F_GETLK; /proc/locks lists them (apt and dpkg do not use them, other tools do).
    for kind, pid in _proc_locks(st):
        if kind == "flock" and (pid, kind) not in holders:
            holders.append((pid, kind))
    return holders


def pid_files_held(path):
    """yum/dnf pid files: held while the pid inside is alive."""
    try:
        with open(path) as f:
            pid = int(f.read().strip() or 0)
    except (IOError, OSError, ValueError):
        return None
    if pid > 0 and os.path.exists("/proc/%d" % pid):
        return pid
    return None


def holders_of(paths):
    found = []
    for path in paths:
        if path.endswith(".pid"):
            pid = pid_files_held(path)
            holders = [(pid, "pid file")] if pid else []
        else:
            holders = lock_holders(path)
        for pid, kind in holders:
            found.append({"path": path, "pid": pid, "lock": kind,
                          "command": _process_command(pid) if pid else None})
    return found


def _describe(holder):
    return "%s (%s) on %s [%s lock]" % ("pid %d" % holder["pid"] if holder["pid"] else "an unknown process",
                                        holder["command"] or "unknown command", holder["path"], holder["lock"])


def missing_packages(module, specs):
    """The specifications dpkg's status file does not show installed (all of them on a host without dpkg)."""
    if not specs:
        return []
    dpkg = module.get_bin_path("dpkg")
    if not dpkg or not os.path.exists(DPKG_STATUS):
        return list(specs)
    rc, out, dummy = module.run_command([dpkg, "--print-architecture"])
    try:
        with open(DPKG_STATUS, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except (IOError, OSError) as e:
        module.fail_json(msg="Cannot read %s: %s" % (DPKG_STATUS, e))
    return _packages.missing(specs, _packages.parse_dpkg_status(text), out.strip() if rc == 0 else None)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type="list", elements="path"),
            timeout=dict(type="int", default=300),
            sleep=dict(type="float", default=1.0),
            packages=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
    )
    paths = module.params["paths"]
    if not paths:
        family = "dpkg" if os.path.exists("/var/lib/dpkg") else "rpm"
        paths = DEFAULT_LOCKS[family]
    timeout, sleep = module.params["timeout"], module.params["sleep"]
    if timeout < 0:
        module.fail_json(msg="timeout must be 0 or more seconds, got %d" % timeout)
    if not sleep > 0:
        module.fail_json(msg="sleep must be more than 0 seconds, got %s" % sleep)

    start = time.monotonic()
    first = holders_of(paths)
    current = first
    while current:
        waited = time.monotonic() - start
        if waited >= timeout:
            module.fail_json(
                msg="The package manager is still locked after %.1f s by %s. Wait for it to finish (cloud-init's "
                    "first boot or unattended-upgrades) or raise the timeout (base_package_lock_timeout)."
                    % (waited, "; ".join(_describe(h) for h in current)),
                holders=current, paths=paths, waited=round(waited, 1))
        # Never sleep past the timeout: the wait is bounded by timeout, not by timeout + sleep.
        time.sleep(min(sleep, timeout - waited))
        current = holders_of(paths)

    waited = round(time.monotonic() - start, 1)
    module.exit_json(changed=False, waited=waited, holders=first, paths=paths,
                     missing=missing_packages(module, module.params["packages"]))


if __name__ == "__main__":
    main()
