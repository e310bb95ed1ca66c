#!/usr/bin/env bash
# Build a local systemd test image with mmdebstrap + `docker import`: tests/images/build.sh PLATFORM
# PLATFORM: debian12 (default), debian13, ubuntu2204, ubuntu2404, ubuntu2604. No container registry is reachable from CI,
# so every image is built from the distribution's own archive, the way a cloud image is set up: Ubuntu with
# main, restricted, universe and multiverse plus -updates and -security, Debian with main plus -updates and
# -security (contrib/non-free are the base role's job, as on a fresh cloud VM).
# The image is tagged local/PLATFORM:<hash of this recipe>; the build is skipped when that tag exists.
set -euo pipefail

PLATFORM="${1:-${GPUOPS_PLATFORM:-debian12}}"
IMAGE_REPO="${GPUOPS_IMAGE_REPO:-local/${PLATFORM}}"
# Packages every test host needs: Python for Ansible, systemd as PID 1, sudo for become.
INCLUDE="python3,python3-apt,systemd,systemd-sysv,sudo,ca-certificates,iproute2,procps"
# Ubuntu's archive keyring: inside Ubuntu's ubuntu-keyring .deb (Debian has no such package), pinned by hash.
UBUNTU_KEYRING_DEB="pool/main/u/ubuntu-keyring/ubuntu-keyring_2023.11.28.1_all.deb"
UBUNTU_KEYRING_SHA256="36de43b15853ccae0028e9a767613770c704833f82586f28eb262f0311adb8a8"
UBUNTU_MIRROR="${GPUOPS_UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}"

debian_mirror() {
  if [[ -n "${GPUOPS_DEBIAN_MIRROR:-}" ]]; then echo "$GPUOPS_DEBIAN_MIRROR"; return; fi
  # The mirror this machine's own apt uses (deb822 or one-line format).
  local m
  m=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)
  [[ -n "$m" ]] || m=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}

case "$PLATFORM" in
  debian12) FAMILY=debian; SUITE=bookworm ;;
  debian13) FAMILY=debian; SUITE=trixie ;;
  ubuntu2204) FAMILY=ubuntu; SUITE=jammy ;;
  ubuntu2404) FAMILY=ubuntu; SUITE=noble ;;
  ubuntu2604) FAMILY=ubuntu; SUITE=resolute ;;
  *) echo "unknown platform '$PLATFORM': debian12, debian13, ubuntu2204, ubuntu2404 or ubuntu2604" >&2; exit 2 ;;
esac
if [[ $FAMILY == debian ]]; then MIRROR=$(debian_mirror); else MIRROR=$UBUNTU_MIRROR; fi

RECIPE_HASH=$( { cat "$0"; echo "$PLATFORM $SUITE $INCLUDE $MIRROR"; } | sha256sum | cut -c1-12)
TAG="${IMAGE_REPO}:${RECIPE_HASH}"

if docker image inspect "$TAG" >/dev/null 2>&1; then
  docker tag "$TAG" "${IMAGE_REPO}:latest"
  echo "image ${TAG} is up to date (recipe ${RECIPE_HASH}); build skipped"
  exit 0
fi

command -v mmdebstrap >/dev/null || { echo "mmdebstrap is missing: apt-get install mmdebstrap (or make host-demo)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/gpuops-image.XXXXXX)
ROOTFS="$WORK/rootfs"
trap 'rm -rf "$WORK"' EXIT
echo "building ${TAG} from ${MIRROR} (${SUITE}) ..."
start=$(date +%s)

# mmdebstrap, not debootstrap: it resolves and downloads with apt, all at once, and installs in one dpkg pass; the same
# root file system (the `minbase` set: Priority required, apt, and INCLUDE; merged /usr) in 23 s instead of
# debootstrap's 51 s for Debian 12 (2026-12-07, 2 cores). It needs no per-suite script, so new Ubuntu suites work as is.
# The package set is debootstrap's: its minbase adds apt, and on Ubuntu (where both are Priority important, not
# required) apt and ubuntu-keyring. Debian 12 gets merged /usr as debootstrap sets it up, the links first and then
# usr-is-merged (mmdebstrap's merged-usr hook), not through the `usrmerge` package and perl; Debian 13's base-files and
# Ubuntu's packages make the links themselves. Each platform's package list was compared with its debootstrap image's
# (2026-12-07): the same packages.
args=(--variant=minbase)
if [[ $SUITE == bookworm ]]; then
  args+=(--include="$INCLUDE" --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr)
elif [[ $FAMILY == debian ]]; then
  args+=(--include="$INCLUDE")
else
  args+=(--include="$INCLUDE,apt,ubuntu-keyring" --components="main,restricted,universe,multiverse"
         --keyring="$WORK/ubuntu-archive-keyring.gpg")
  python3 - "$MIRROR/$UBUNTU_KEYRING_DEB" "$UBUNTU_KEYRING_SHA256" "$WORK/ubuntu-keyring.deb" <<'PY'
import hashlib, sys, urllib.request
url, sha, dest = sys.argv[1:4]
data = urllib.request.urlopen(url, timeout=60).read()
if hashlib.sha256(data).hexdigest() != sha:
    sys.exit("ubuntu-keyring .deb hash mismatch: %s" % url)
open(dest, "wb").write(data)
PY
  # dpkg-deb reads the .deb's zstd-compressed data member, which Python's tarfile cannot.
  dpkg-deb --fsys-tarfile "$WORK/ubuntu-keyring.deb" \
    | tar -xO ./usr/share/keyrings/ubuntu-archive-keyring.gpg > "$WORK/ubuntu-archive-keyring.gpg"
fi
# --skip=cleanup/reproducible keeps what debootstrap keeps and a cloud image has: dpkg's and apt's logs of the
# image's own installs (molecule/nvidia_driver_refuse reads /var/log/dpkg.log to show that nothing was installed since).
mkdir "$ROOTFS"
mmdebstrap "${args[@]}" --skip=cleanup/reproducible "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/mmdebstrap.log" 2>&1 \
  || { tail -n 30 "$WORK/mmdebstrap.log" >&2; exit 1; }

# The sources a cloud image of this platform has.
if [[ $FAMILY == ubuntu ]]; then
  if [[ $SUITE == jammy ]]; then
    {
      echo "deb $MIRROR $SUITE main restricted universe multiverse"
      echo "deb $MIRROR $SUITE-updates main restricted universe multiverse"
      echo "deb $MIRROR $SUITE-security main restricted universe multiverse"
    } > "$ROOTFS/etc/apt/sources.list"
  else
    : > "$ROOTFS/etc/apt/sources.list"
    cat > "$ROOTFS/etc/apt/sources.list.d/ubuntu.sources" <<SRC
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates $SUITE-security
Components: main restricted universe multiverse
Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg
SRC
  fi
else
  if [[ $SUITE == bookworm ]]; then
    {
      echo "deb $MIRROR $SUITE main"
      echo "deb $MIRROR $SUITE-updates main"
      echo "deb ${MIRROR%/debian}/debian-security $SUITE-security main"
    } > "$ROOTFS/etc/apt/sources.list"
  else
    : > "$ROOTFS/etc/apt/sources.list"
    cat > "$ROOTFS/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
fi

# Systemd in a container: no getty, no udev-triggered units that fail.
rm -f "$ROOTFS"/etc/machine-id && : > "$ROOTFS"/etc/machine-id
for unit in getty.target systemd-udevd.service systemd-udev-trigger.service systemd-firstboot.service \
            systemd-modules-load.service sys-kernel-config.mount; do
  ln -sf /dev/null "$ROOTFS/etc/systemd/system/$unit"
done
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
# Test harness only: dpkg skips its fsync calls while unpacking (force-unsafe-io). A test container or guest that
# crashes is thrown away, never repaired; measured 15 % faster installs of build-essential and dkms (86 -> 73 s,
# 110 -> 93 s). Production hosts keep dpkg's default.
echo force-unsafe-io > "$ROOTFS/etc/dpkg/dpkg.cfg.d/01gpuops-test-unsafe-io"
# Test harness only: apt in the test containers goes through the package cache that scripts/setup-host.sh
# runs on the Docker host (apt-cacher-ng, port 3149) when it answers, and straight to the mirror otherwise.
# Only the distributions' archives go through it: a scenario's own repository (a container) is reached directly.
mkdir -p "$ROOTFS/usr/local/lib/gpuops"
cat > "$ROOTFS/usr/local/lib/gpuops/apt-proxy-detect" <<PROXY
#!/usr/bin/python3
"""gpuops test image: print the Docker host's apt-cacher-ng for the distribution's archive when it answers, else DIRECT."""
import socket, struct, sys
MIRROR_HOSTS = {"$(echo "$MIRROR" | awk -F/ '{print $3}')", "deb.debian.org", "security.debian.org",
                "archive.ubuntu.com", "security.ubuntu.com"}
host = sys.argv[1].split("/")[2].split(":")[0] if len(sys.argv) > 1 and "//" in sys.argv[1] else ""
proxy = "DIRECT"
if host in MIRROR_HOSTS:
    try:
        for line in open("/proc/net/route").read().splitlines()[1:]:
            fields = line.split()
            if fields[1] == "00000000":
                gateway = socket.inet_ntoa(struct.pack("<L", int(fields[2], 16)))
                socket.create_connection((gateway, 3149), timeout=0.5).close()
                proxy = "http://%s:3149" % gateway
                break
    except OSError:
        pass
print(proxy)
PROXY
chmod 0755 "$ROOTFS/usr/local/lib/gpuops/apt-proxy-detect"
echo 'Acquire::http::Proxy-Auto-Detect "/usr/local/lib/gpuops/apt-proxy-detect";' \
  > "$ROOTFS/etc/apt/apt.conf.d/01gpuops-test-proxy"
# How the container starts systemd, in the image itself (its CMD, and the label gpuops.cgroupns for the cgroup namespace
# the container needs: scripts/molecule-all.sh and `make demo` read it). systemd 258 dropped cgroup v1 (Ubuntu 26.04
# has 259), and a Docker host on cgroup v1 gives a container only v1 hierarchies: systemd 259 then exits at once
# (status 255, no output). Such an image starts through gpuops-init, which mounts cgroup2 over /sys/fs/cgroup first,
# in a private cgroup namespace (the container's own root, as on a VM; without one it also runs, but sees the host's
# whole unified tree). On a cgroup v2 host the mount is already cgroup2 and gpuops-init only starts systemd.
# The other platforms' systemd (252 to 255) runs on the host's v1 hierarchies, bind-mounted, in the host's namespace.
cmd='CMD ["/lib/systemd/systemd"]'
cgroupns=host
if [[ $SUITE == resolute ]]; then
  cat > "$ROOTFS/usr/local/lib/gpuops/gpuops-init" <<'INIT'
#!/bin/sh
# gpuops test image: systemd 258+ needs cgroup v2; mount it when /sys/fs/cgroup is not cgroup2, then become systemd.
set -e
if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
  umount /sys/fs/cgroup 2>/dev/null || true
  mount -t tmpfs none /sys/fs/cgroup
  mount -t cgroup2 none /sys/fs/cgroup
fi
exec /lib/systemd/systemd "$@"
INIT
  chmod 0755 "$ROOTFS/usr/local/lib/gpuops/gpuops-init"
  cmd='CMD ["/usr/local/lib/gpuops/gpuops-init"]'
  cgroupns=private
fi
tar -C "$ROOTFS" -c . | docker import -c "$cmd" -c 'ENV container=docker' -c "LABEL gpuops.cgroupns=$cgroupns" - "$TAG" >/dev/null
docker tag "$TAG" "${IMAGE_REPO}:latest"
echo "built ${TAG} in $(( $(date +%s) - start )) s ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%d MB", $1/1e6}'))"
