# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read, without writing, what is on each disk given as an argument: its kernel name, whether it is a block
device, the signatures `wipefs --no-act --json` finds and the tree `lsblk --json --paths` shows. Prints one JSON
list, the input of the storage_plan filter. Run by the storage role (ansible.builtin.script): one call for all disks."""
import json
import os
import stat
import subprocess
import sys


def run(*cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, LC_ALL="C"), check=False)
    if proc.returncode != 0:
        sys.exit("%s failed (exit %d): %s" % (" ".join(cmd), proc.returncode, proc.stderr.strip()))
    return proc.stdout


out = []
for device in sys.argv[1:]:
    real = os.path.realpath(device)
    try:
        isblk = stat.S_ISBLK(os.stat(real).st_mode)
    except OSError:
        isblk = False
    entry = {"device": device, "real": real, "isblk": isblk, "wipefs": "", "lsblk": ""}
    if isblk:
        entry["wipefs"] = run("wipefs", "--no-act", "--json", device)
        entry["lsblk"] = run("lsblk", "--json", "--paths", "--output", "NAME,TYPE,MOUNTPOINT", device)
    out.append(entry)
print(json.dumps(out))
