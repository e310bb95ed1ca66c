#!/usr/bin/env bash
# Build the local Debian 12 systemd test image with debootstrap + `docker import`.
# No container registry is reachable from CI, so the image is built from the Debian mirror.
# The image is tagged with a hash of this recipe; the build is skipped when that tag exists.
set -euo pipefail

IMAGE_REPO="${GPUOPS_IMAGE_REPO:-local/debian12}"
SUITE="${GPUOPS_IMAGE_SUITE:-bookworm}"
# Packages every test host needs: Python for Ansible, systemd as PID 1, sudo for become.
INCLUDE="python3,python3-apt,systemd,systemd-sysv,sudo,ca-certificates,iproute2,procps"

mirror() {
  if [[ -n "${GPUOPS_DEBIAN_MIRROR:-}" ]]; then echo "$GPUOPS_DEBIAN_MIRROR"; return; fi
  # The mirror this machine's own apt uses (deb822 or one-line format).
  local m
  m=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)
  [[ -n "$m" ]] || m=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}

MIRROR=$(mirror)
RECIPE_HASH=$( { cat "$0"; echo "$SUITE $INCLUDE $MIRROR"; } | sha256sum | cut -c1-12)
TAG="${IMAGE_REPO}:${RECIPE_HASH}"

if docker image inspect "$TAG" >/dev/null 2>&1; then
  docker tag "$TAG" "${IMAGE_REPO}:latest"
  echo "image ${TAG} is up to date (recipe ${RECIPE_HASH}); build skipped"
  exit 0
fi

command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install debootstrap" >&2; exit 1; }
ROOTFS=$(mktemp -d /tmp/gpuops-rootfs.XXXXXX)
trap 'rm -rf "$ROOTFS"' EXIT
echo "building ${TAG} from ${MIRROR} (${SUITE}) ..."
start=$(date +%s)
debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1 \
  || { tail -n 30 "$ROOTFS.log" >&2; exit 1; }
rm -f "$ROOTFS.log"
# Security updates and the non-free components GPU software needs are the base role's job; keep the
# image as a plain fresh system. Systemd in a container: no getty, no udev-triggered units that fail.
rm -f "$ROOTFS"/etc/machine-id && : > "$ROOTFS"/etc/machine-id
for unit in getty.target systemd-udevd.service systemd-udev-trigger.service systemd-firstboot.service \
            systemd-modules-load.service sys-kernel-config.mount; do
  ln -sf /dev/null "$ROOTFS/etc/systemd/system/$unit"
done
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
# Test harness only: apt in the test containers goes through the package cache that scripts/setup-host.sh
# runs on the Docker host (apt-cacher-ng, port 3149) when it answers, and straight to the mirror otherwise.
# Only the Debian mirror goes through it: a scenario's own repository (a container) is reached directly.
mkdir -p "$ROOTFS/usr/local/lib/gpuops"
cat > "$ROOTFS/usr/local/lib/gpuops/apt-proxy-detect" <<PROXY
#!/usr/bin/python3
"""gpuops test image: print the Docker host's apt-cacher-ng for Debian's mirror when it answers, else DIRECT."""
import socket, struct, sys
MIRROR_HOSTS = {"$(echo "$MIRROR" | awk -F/ '{print $3}')", "deb.debian.org", "security.debian.org"}
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
tar -C "$ROOTFS" -c . | docker import -c 'CMD ["/lib/systemd/systemd"]' -c 'ENV container=docker' - "$TAG" >/dev/null
docker tag "$TAG" "${IMAGE_REPO}:latest"
echo "built ${TAG} in $(( $(date +%s) - start )) s ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%d MB", $1/1e6}'))"
