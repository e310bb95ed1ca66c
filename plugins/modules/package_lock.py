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
short_description: Wait until no process holds the package manager's locks
version_added: 0.1.0
description:
  - On a freshly booted cloud VM, cloud-init or unattended-upgrades often hold the dpkg or apt lock for
    minutes. Package tasks that start then fail or hang without saying why.
  - This module waits, bounded by O(timeout), until none of the lock files is held, and fails with a message
    that names the holding process when the time runs out.
  - A lock is tested with C(fcntl) F_GETLK, the same kind of lock dpkg, apt and rpm take, so the module never
    takes the lock itself and never changes the host.
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
      - Seconds to wait at the most before failing.
    type: int
    default: 300
  sleep:
    description:
      - Seconds between two looks.
    type: float
    default: 1.0
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
  sample: [{"path": "/var/lib/dpkg/lock-frontend", "pid": 812, "command": "/usr/bin/unattended-upgrade"}]
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


def lock_holder(path):
    """Return the pid holding a write-conflicting fcntl lock on path, or None."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (IOError, OSError):
        return None
    try:
        # struct flock {short l_type; short l_whence; off_t l_start; off_t l_len; pid_t l_pid;}
        query = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
        l_type, dummy, dummy, dummy, l_pid = struct.unpack("hhqqi4x", answer)
        if l_type == fcntl.F_UNLCK:
            return None
        return l_pid
    finally:
        os.close(fd)


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
        pid = pid_files_held(path) if path.endswith(".pid") else lock_holder(path)
        if pid:
            found.append({"path": path, "pid": pid, "command": _process_command(pid)})
    return found


def main():
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type="list", elements="path"),
            timeout=dict(type="int", default=300),
            sleep=dict(type="float", default=1.0),
        ),
        supports_check_mode=True,
    )
    paths = module.params["paths"]
    if not paths:
        family = "dpkg" if os.path.exists("/var/lib/dpkg") else "rpm"
        paths = DEFAULT_LOCKS[family]
    if module.params["timeout"] < 0:
        module.fail_json(msg="timeout must be 0 or more seconds, got %d" % module.params["timeout"])

    start = time.time()
    first = holders_of(paths)
    current = first
    while current:
        if time.time() - start >= module.params["timeout"]:
            module.fail_json(
                msg="The package manager is still locked after %d s by %s. Wait for it to finish (cloud-init's "
                    "first boot or unattended-upgrades) or raise the timeout (base_package_lock_timeout)."
                    % (module.params["timeout"], "; ".join(
                        "pid %d (%s) on %s" % (h["pid"], h["command"] or "unknown command", h["path"])
                        for h in current)),
                holders=current, paths=paths, waited=round(time.time() - start, 1))
        time.sleep(module.params["sleep"])
        current = holders_of(paths)

    module.exit_json(changed=False, waited=round(time.time() - start, 1), holders=first, paths=paths)


if __name__ == "__main__":
    main()
