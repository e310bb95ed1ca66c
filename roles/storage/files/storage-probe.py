# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read, without writing, what is on each disk given as an argument: its kernel name, whether it is a block
device, the signatures `wipefs --no-act --json` finds, the tree `lsblk --json --paths` shows (with filesystems,
UUIDs, partition tables and mounts), the holders of the disk and its partitions in /sys, and the active swap
(/proc/swaps). With --volume, also what the storage role recorded of that volume: its record (--record), and the
UUIDs of its md array, LUKS header and filesystem in mdadm.conf, crypttab and fstab. Prints one JSON object,
{"disks": [...], "volume": {...} or null}, the input of the storage_plan filter. Run by the storage role
(ansible.builtin.script): one call for all disks. Python 3.7 or later (it runs on the target)."""
import argparse
import json
import os
import re
import stat
import subprocess
import sys

MDADM_CONFS = ("/etc/mdadm/mdadm.conf", "/etc/mdadm.conf")
CRYPTTAB = "/etc/crypttab"
FSTAB = "/etc/fstab"
SWAPS = "/proc/swaps"
SYS_BLOCK = "/sys/class/block"


def run(*cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, LC_ALL="C"), check=False)
    if proc.returncode != 0:
        sys.exit("%s failed (exit %d): %s" % (" ".join(cmd), proc.returncode, proc.stderr.strip()))
    return proc.stdout


def read_lines(path):
    """The lines of a file, [] when it does not exist."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read().splitlines()
    except (IOError, OSError):
        return []


def unescape(field):
    """fstab, crypttab and /proc/swaps write a space as \\040 (octal escapes)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def table(path):
    """The fields of each line of a table file (fstab, crypttab), without comments and blank lines."""
    rows = []
    for line in read_lines(path):
        fields = [unescape(f) for f in line.split()]
        if fields and not fields[0].startswith("#"):
            rows.append(fields)
    return rows


def lsblk_columns():
    # MOUNTPOINTS (every mount of a device, a list) exists since util-linux 2.37 (Debian 12 has 2.38, Ubuntu 22.04
    # 2.37); EL 8's 2.32 has only MOUNTPOINT (one of them). The filter reads either.
    mounts = "MOUNTPOINTS" if re.search(r"^\s*MOUNTPOINTS\s", run("lsblk", "--help"), re.M) else "MOUNTPOINT"
    return "NAME,KNAME,TYPE,FSTYPE,LABEL,UUID,PTTYPE," + mounts


def holders(real):
    """What holds the disk or one of its partitions (md arrays, dm devices), as /dev/<kernel name>."""
    base = os.path.join(SYS_BLOCK, os.path.basename(real))
    dirs = [base]
    try:
        dirs += [os.path.join(base, p) for p in sorted(os.listdir(base)) if os.path.exists(os.path.join(base, p, "partition"))]
    except OSError:
        pass
    out = []
    for d in dirs:
        try:
            out += ["/dev/" + h for h in sorted(os.listdir(os.path.join(d, "holders")))]
        except OSError:
            pass
    return out


def swaps():
    """The active swap areas (devices by their path and their kernel name; files too, which match no disk)."""
    out = []
    for line in read_lines(SWAPS)[1:]:
        fields = line.split()
        if fields:
            path = unescape(fields[0])
            out += [path] + ([os.path.realpath(path)] if os.path.realpath(path) != path else [])
    return out


def volume(name, record_path):
    """What the storage role recorded of the volume `name`: the record it writes last, and the UUIDs it wrote to
    mdadm.conf (the array), crypttab (the LUKS header) and fstab (the filesystem, at the recorded mount point)."""
    out = {"name": name, "recorded": False, "devices": [], "encryption": None, "mount_point": None,
           "md_uuids": [], "luks_uuids": [], "fs_uuids": []}
    try:
        with open(record_path, encoding="utf-8") as f:
            record = json.load(f)
    except (IOError, OSError, ValueError):
        record = None
    if isinstance(record, dict) and record.get("name") in (None, name):
        out["recorded"] = True
        for key in ("encryption", "mount_point"):
            if isinstance(record.get(key), str):
                out[key] = record[key]
        devices = [d for d in record.get("devices") or [] if isinstance(d, str)] if isinstance(record.get("devices"), list) else []
        out["devices"] = sorted(set(devices + [os.path.realpath(d) for d in devices]))
    for path in MDADM_CONFS:
        # ARRAY lines, with their continuation lines (which start with a blank).
        lines = []
        for line in read_lines(path):
            if line[:1].isspace() and lines:
                lines[-1] += " " + line
            elif line.strip() and not line.lstrip().startswith("#"):
                lines.append(line)
        for fields in (line.split() for line in lines):
            if fields[0] != "ARRAY":
                continue
            names = [f[5:] for f in fields if f.startswith("name=")]
            if (len(fields) > 1 and fields[1] == "/dev/md/" + name) or any(n == name or n.endswith(":" + name) for n in names):
                out["md_uuids"] += [f[5:] for f in fields if f.startswith("UUID=")]
    for fields in table(CRYPTTAB):
        if fields[0] == name and len(fields) > 1 and fields[1].startswith("UUID="):
            out["luks_uuids"].append(fields[1][5:])
    if out["mount_point"]:
        for fields in table(FSTAB):
            if len(fields) > 1 and fields[1] == out["mount_point"] and fields[0].startswith("UUID="):
                out["fs_uuids"].append(fields[0][5:])
    return out


def settle():
    """udev fills lsblk's FSTYPE, UUID and PTTYPE: let it finish what it is doing (a disk just wiped), if it runs."""
    try:
        subprocess.run(["udevadm", "settle", "--timeout=10"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    except OSError:
        pass


def disk(device, columns, active_swaps):
    real = os.path.realpath(device)
    try:
        isblk = stat.S_ISBLK(os.stat(real).st_mode)
    except OSError:
        isblk = False
    entry = {"device": device, "real": real, "isblk": isblk, "wipefs": "", "lsblk": "", "holders": [], "swaps": active_swaps}
    if isblk:
        entry["wipefs"] = run("wipefs", "--no-act", "--json", device)
        entry["lsblk"] = run("lsblk", "--json", "--paths", "--output", columns, device)
        entry["holders"] = holders(real)
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--volume", help="the volume's name (storage_name): read what the role recorded of it")
    parser.add_argument("--record", help="the role's record of the volume (/etc/gpuops-storage/<name>.json)")
    parser.add_argument("devices", nargs="*")
    args = parser.parse_args()
    settle()
    columns = lsblk_columns() if args.devices else ""
    active = swaps()
    out = {"disks": [disk(device, columns, active) for device in args.devices],
           "volume": volume(args.volume, args.record or "") if args.volume else None}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
