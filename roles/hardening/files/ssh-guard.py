# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The hardening role's SSH change guard, run on the host (ansible.builtin.script, root):

  arm      keep a copy of the SSH files about to change (or note that they are absent), and the addresses sshd listens
           on now; start a transient systemd timer that puts them back and restarts the previous listener after
           --seconds, should the play never get to prove the new login (its connection lost with the change).
  prove    open a new TCP connection to every address sshd is configured to listen on (the ssh.socket's Listen= lines,
           or sshd -T's listenaddress) and read the SSH banner; then log in with a key as --user over the SSH port:
           a one-time key pair, allowed for this login only (restrict, from= these addresses) in the user's
           AuthorizedKeysFile and taken out again whatever happens. That file is written as root without following a
           link anyone but root could have planted (see probe_key): such a link fails the proof, naming it.
  disarm   stop the timer and forget the copies: the new configuration is proved.
  restore  put the copies back, restart the previous listener and check that it answers (also what the timer runs).

Each prints one JSON object; a failure exits 1 with the reason on stderr and in the object's "msg".
"""
import contextlib
import errno
import json
import os
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

UNIT = "gpuops-ssh-rollback"
MANIFEST = "manifest.json"


class GuardError(Exception):
    pass


def run(cmd, check=True, timeout=60):
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              env=dict(os.environ, LC_ALL="C"), timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GuardError("%s: %s" % (" ".join(cmd), exc))
    if check and proc.returncode != 0:
        raise GuardError("%s failed (exit %d): %s" % (" ".join(cmd), proc.returncode, proc.stderr.strip()))
    return proc


def listeners(socket_unit):
    """host:port strings sshd is configured to listen on: ssh.socket's Listen= (socket activation), else sshd -T."""
    out = []
    if socket_unit:
        # One "ADDRESS (Stream)" line per ListenStream= (systemd 249-259).
        for line in run(["systemctl", "show", socket_unit, "-p", "Listen", "--value"]).stdout.splitlines():
            if line.strip().endswith("(Stream)"):
                out.append(line.strip()[:-len("(Stream)")].strip())
        return out
    for line in run(["sshd", "-T"]).stdout.splitlines():
        if line.startswith("listenaddress "):
            out.append(line.split(None, 1)[1].strip())
    return out


def split(listen):
    """'0.0.0.0:22' / '[::]:22' / '22' -> (host, port). A bare port (systemd) means every address."""
    host, _sep, port = listen.rpartition(":")
    if not _sep:
        return "::", int(listen)
    return host.strip("[]") or "::", int(port)


def target(host):
    """The address to connect to for a listener on host: the loopback address of its family for a wildcard."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "*": "127.0.0.1"}.get(host, host)


def banner(host, port, timeout=10.0):
    """None once an SSH banner was read from a new TCP connection, else why not."""
    deadline = time.monotonic() + timeout
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect((host, port))
            data = b""
            while b"\n" not in data and len(data) < 256 and time.monotonic() < deadline:
                chunk = sock.recv(256)
                if not chunk:
                    break
                data += chunk
    except OSError as exc:
        return str(exc)
    if not data.startswith(b"SSH-2.0-"):
        return "no SSH banner (read %r)" % data[:60]
    return None


def reachable(listen):
    """The (address, port) to connect to for a listener, or None with the reason when this host cannot try it: an IPv6
    wildcard where the host has no usable IPv6 address is tried over 127.0.0.1, as a dual-stack socket answers there."""
    host, port = split(listen)
    addr = target(host)
    if ipv6_unusable(addr):
        if host == "::":
            return "127.0.0.1", port, None
        return None, port, "no usable IPv6 address on this host to connect from: not tried"
    return addr, port, None


def ipv6_unusable(host):
    """True when host is IPv6 and this host has no usable IPv6 address to connect from (lo with disable_ipv6)."""
    if ":" not in host:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return True
    return False


def write_atomically(path, data, like):
    """Write bytes to path through a temporary file in its directory, with the mode and owner of `like` (a stat)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".gpuops-ssh-guard.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, like.st_mode & 0o7777)
        os.chown(tmp, like.st_uid, like.st_gid)
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def arm(args):
    state = args.state
    kept = os.path.exists(os.path.join(state, MANIFEST))
    if not kept:
        # A copy left by an earlier run that never proved its change is the last proven configuration: keep it.
        os.makedirs(os.path.join(state, "files"), mode=0o700, exist_ok=True)
        os.chmod(state, 0o700)
        files = []
        for index, path in enumerate(args.file):
            entry = {"path": path}
            if os.path.lexists(path):
                saved = os.path.join(state, "files", str(index))
                shutil.copy2(path, saved)
                st = os.stat(path)
                entry.update(saved=saved, mode=st.st_mode & 0o7777, uid=st.st_uid, gid=st.st_gid)
            files.append(entry)
        manifest = {"files": files, "service": args.service, "socket": args.socket,
                    "listen": listeners(args.socket), "armed_at": int(time.time())}
        with open(os.path.join(state, MANIFEST + ".tmp"), "w") as f:
            json.dump(manifest, f)
        os.rename(os.path.join(state, MANIFEST + ".tmp"), os.path.join(state, MANIFEST))
    shutil.copy2(os.path.abspath(__file__), os.path.join(state, "ssh-guard.py"))
    run(["systemctl", "stop", UNIT + ".timer"], check=False)
    run(["systemctl", "reset-failed", UNIT + ".timer", UNIT + ".service"], check=False)
    run(["systemd-run", "--unit", UNIT, "--description", "gpuops hardening: put back the SSH configuration not proved",
         "--on-active", "%ds" % args.seconds, "--timer-property", "AccuracySec=1s",
         sys.executable, os.path.join(state, "ssh-guard.py"), "restore", "--state", state])
    return {"armed": True, "seconds": args.seconds, "kept_earlier_copy": kept, "state": state}


def authorized_keys_file(user, home, uid):
    """The first AuthorizedKeysFile sshd uses for user, its %-tokens expanded."""
    out = run(["sshd", "-T", "-C", "user=%s,host=localhost,addr=127.0.0.1" % user]).stdout
    first = ".ssh/authorized_keys"
    for line in out.splitlines():
        if line.startswith("authorizedkeysfile "):
            first = line.split()[1]
            break
    path = first.replace("%%", "\0").replace("%h", home).replace("%u", user).replace("%U", str(uid)).replace("\0", "%")
    return path if path.startswith("/") else os.path.join(home, path)


# The admin's AuthorizedKeysFile is written as root in directories the admin may own (issue 52): a link planted there
# would make root create, chmod and chown whatever it points to. So the path is walked from / one component at a time,
# each directory opened relative to the one before it (O_DIRECTORY|O_NOFOLLOW), and the file itself is opened,
# created, changed and put back only through the descriptor of its directory: nothing is looked up twice, so nothing
# can be swapped between a check and its use. A link is followed only where only root can have put it (a directory
# owned by root that no group or other may write, as /home or /etc); a link anywhere else, a link or a hard-linked file
# at the key file itself, and '..' in the configured path are refused.
MAX_LINKS = 40
O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def root_only(st):
    """True for a directory whose entries only root can add, rename or replace."""
    return st.st_uid == 0 and not st.st_mode & 0o022


def open_directory(path, created):
    """(fd of the directory of the absolute path, the file's name in it), walked as said above. A missing directory
    is made (root's, 0755, so that sshd's StrictModes accepts it) and noted in created as (fd of its parent, name)
    for remove_created()."""
    if not path.startswith("/"):
        raise GuardError("the AuthorizedKeysFile %s is not an absolute path" % path)
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise GuardError("refusing the AuthorizedKeysFile %s: it has no file name or holds '..'; name the file by its "
                         "own path in sshd's AuthorizedKeysFile" % path)
    name = parts.pop()
    fd = os.open("/", O_DIR)
    walked, links = "", 0
    try:
        while parts:
            part = parts.pop(0)
            try:
                child = os.open(part, O_DIR, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(part, 0o700, dir_fd=fd)
                created.append((os.dup(fd), part))
                child = os.open(part, O_DIR, dir_fd=fd)
                if os.fstat(child).st_uid == 0:
                    os.fchmod(child, 0o755)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise GuardError("%s: cannot open %s/%s: %s" % (path, walked, part, exc.strerror))
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISLNK(st.st_mode):
                    raise GuardError("refusing the AuthorizedKeysFile %s: %s/%s is not a directory"
                                     % (path, walked, part))
                if not root_only(os.fstat(fd)):
                    raise GuardError(
                        "refusing to write the AuthorizedKeysFile %s as root: %s/%s is a symbolic link (to %s) in a "
                        "directory that someone other than root can change, and root follows no link there (a planted "
                        "one makes root write where it points). Make %s/%s a real directory, or point sshd's "
                        "AuthorizedKeysFile at the real path. Nothing was written."
                        % (path, walked, part, link_target(part, fd), walked, part))
                target = os.readlink(part, dir_fd=fd)
                links += 1
                if links > MAX_LINKS:
                    raise GuardError("refusing the AuthorizedKeysFile %s: more than %d links on its way"
                                     % (path, MAX_LINKS))
                if target.startswith("/"):
                    top = os.open("/", O_DIR)
                    os.close(fd)
                    fd, walked = top, ""
                parts[:0] = [p for p in target.split("/") if p not in ("", ".")]
                continue
            os.close(fd)
            fd, walked = child, "%s/%s" % (walked, part)
    except BaseException:
        os.close(fd)
        raise
    return fd, name


def link_target(name, dfd):
    try:
        return os.readlink(name, dir_fd=dfd)
    except OSError as exc:
        return "? (%s)" % exc.strerror


def remove_created(created):
    """Remove the directories open_directory() made, the deepest first, where they are still empty."""
    while created:
        parent, name = created.pop()
        try:
            os.rmdir(name, dir_fd=parent)
        except OSError:
            pass
        os.close(parent)


def read_keys(dfd, name, path):
    """(bytes, stat) of the regular file name in the directory dfd, or (None, None) when there is none."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise GuardError("refusing to write the AuthorizedKeysFile %s as root: it is a symbolic link (to %s); "
                             "root writes the probe key only into a regular file. Put the file itself in its place. "
                             "Nothing was written." % (path, link_target(name, dfd)))
        raise GuardError("%s: cannot open it: %s" % (path, exc.strerror))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise GuardError("refusing the AuthorizedKeysFile %s: it is not a regular file. Nothing was written."
                             % path)
        if st.st_nlink != 1:
            raise GuardError("refusing to write the AuthorizedKeysFile %s as root: it has %d hard links (another name "
                             "for the same file, perhaps outside the home directory). Nothing was written."
                             % (path, st.st_nlink))
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def write_in(dfd, name, data, mode, uid, gid, replace):
    """Write name in the directory dfd with this mode and owner, never through a link: a new file (O_EXCL), or a
    temporary one renamed over the old (replace)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    tmp = ".gpuops-ssh-guard.%s" % secrets.token_hex(8) if replace else name
    fd = os.open(tmp, flags, 0o600, dir_fd=dfd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        raise


@contextlib.contextmanager
def probe_key(path, line, uid, gid):
    """Add line to the AuthorizedKeysFile path for the body of the with, then put the file back as it was (or remove it
    and the directories made for it). New files are the user's (uid, gid), 0600; an existing one keeps its own."""
    created = []
    dfd = None
    try:
        dfd, name = open_directory(path, created)
        before, like = read_keys(dfd, name, path)
        try:
            if before is None:
                write_in(dfd, name, line, 0o600, uid, gid, replace=False)
            else:
                sep = b"" if not before or before.endswith(b"\n") else b"\n"
                write_in(dfd, name, before + sep + line, like.st_mode & 0o7777, like.st_uid, like.st_gid, replace=True)
            yield
        finally:
            if before is not None:
                write_in(dfd, name, before, like.st_mode & 0o7777, like.st_uid, like.st_gid, replace=True)
            else:
                try:
                    os.unlink(name, dir_fd=dfd)
                except FileNotFoundError:
                    pass
    finally:
        if dfd is not None:
            os.close(dfd)
        remove_created(created)


def prove(args):
    import pwd
    addresses, problems, checked = [], [], []
    for listen in listeners(args.socket):
        addr, port, skipped = reachable(listen)
        if skipped:
            checked.append("%s (%s)" % (listen, skipped))
            continue
        why = banner(addr, port)
        if why and split(listen)[0] == "::" and addr == "127.0.0.1":
            checked.append("%s (IPv6 only; no usable IPv6 address on this host to connect from: not tried)" % listen)
        elif why:
            problems.append("%s: %s" % (listen, why))
        else:
            if (addr, port) not in addresses:
                addresses.append((addr, port))
            checked.append(listen)
    if problems or not addresses:
        raise GuardError("sshd does not answer on %s" % ("; ".join(problems) or "any address it should listen on"))
    try:
        entry = pwd.getpwnam(args.user)
    except KeyError:
        raise GuardError("the admin user %s does not exist" % args.user)
    keys_file = authorized_keys_file(args.user, entry.pw_dir, entry.pw_uid)
    work = tempfile.mkdtemp(prefix="gpuops-ssh-guard.")
    logins = []
    try:
        key = os.path.join(work, "probe")
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuops-ssh-guard-probe", "-f", key])
        with open(key + ".pub") as f:
            public = f.read().strip()
        allowed = ",".join(sorted(set(a for a, _p in addresses)))
        line = ('from="%s",restrict %s\n' % (allowed, public)).encode()
        with probe_key(keys_file, line, entry.pw_uid, entry.pw_gid):
            for addr, port in addresses:
                proc = run(["ssh", "-i", key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                            "-o", "PreferredAuthentications=publickey", "-o", "StrictHostKeyChecking=no",
                            "-o", "UserKnownHostsFile=/dev/null", "-o", "GlobalKnownHostsFile=/dev/null",
                            "-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR", "-F", "/dev/null",
                            "-p", str(port), "%s@%s" % (args.user, addr), "echo", "gpuops-ssh-guard-login-ok"],
                           check=False, timeout=60)
                if proc.returncode != 0 or "gpuops-ssh-guard-login-ok" not in proc.stdout:
                    raise GuardError("a key login as %s to %s port %d failed (exit %d): %s"
                                     % (args.user, addr, port, proc.returncode, proc.stderr.strip()))
                logins.append("%s@%s port %d" % (args.user, addr, port))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"answered": checked, "logins": logins, "authorized_keys_file": keys_file}


def disarm(args):
    run(["systemctl", "stop", UNIT + ".timer"], check=False)
    run(["systemctl", "reset-failed", UNIT + ".timer", UNIT + ".service"], check=False)
    shutil.rmtree(args.state, ignore_errors=True)
    return {"armed": False}


def restore(args):
    path = os.path.join(args.state, MANIFEST)
    if not os.path.exists(path):
        return {"restored": [], "removed": [], "msg": "nothing to restore (no copy in %s)" % args.state}
    with open(path) as f:
        manifest = json.load(f)
    run(["systemctl", "stop", UNIT + ".timer"], check=False)
    restored, removed = [], []
    for entry in manifest["files"]:
        if "saved" in entry:
            with open(entry["saved"], "rb") as f:
                data = f.read()
            st = os.stat(entry["saved"])
            write_atomically(entry["path"], data, st)
            os.chmod(entry["path"], entry["mode"])
            os.chown(entry["path"], entry["uid"], entry["gid"])
            restored.append(entry["path"])
        elif os.path.lexists(entry["path"]):
            os.unlink(entry["path"])
            removed.append(entry["path"])
    run(["systemctl", "daemon-reload"])
    if manifest.get("socket"):
        run(["systemctl", "restart", manifest["socket"]])
        run(["systemctl", "try-restart", manifest["service"]], check=False)
    else:
        run(["systemctl", "restart", manifest["service"]])
    answering, silent = [], []
    deadline = time.monotonic() + 30
    for listen in manifest.get("listen") or []:
        addr, port, skipped = reachable(listen)
        if skipped:
            continue
        while True:
            why = banner(addr, port, timeout=5.0)
            if why is None or time.monotonic() > deadline:
                break
            time.sleep(1)
        if why and split(listen)[0] == "::" and addr == "127.0.0.1":
            continue
        (silent if why else answering).append(listen if not why else "%s (%s)" % (listen, why))
    shutil.rmtree(args.state, ignore_errors=True)
    return {"restored": restored, "removed": removed, "answering": answering, "silent": silent,
            "listen": manifest.get("listen") or []}


def main(argv):
    import argparse
    parser = argparse.ArgumentParser(prog="ssh-guard")
    parser.add_argument("action", choices=["arm", "prove", "disarm", "restore"])
    parser.add_argument("--state", default="/var/lib/gpuops-hardening/ssh-rollback")
    parser.add_argument("--seconds", type=int, default=300)
    parser.add_argument("--file", action="append", default=[])
    parser.add_argument("--service", default="ssh")
    parser.add_argument("--socket", default="")
    parser.add_argument("--user", default="root")
    args = parser.parse_args(argv)
    try:
        result = {"arm": arm, "prove": prove, "disarm": disarm, "restore": restore}[args.action](args)
    except (GuardError, OSError, ValueError) as exc:
        msg = "ssh-guard %s: %s" % (args.action, exc)
        print(json.dumps({"failed": True, "msg": msg}))
        print(msg, file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
