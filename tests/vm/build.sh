#!/usr/bin/env bash
# Build the cached VM image of the VM scenarios (molecule/storage) and benchmarks: tests/vm/build.sh [PLATFORM]
# This host's kernel has no md and no device-mapper, so mdadm and LUKS are tested in a QEMU guest (TCG: KVM
# guests hang here, see /work/shared/ENVIRONMENT.md). The guest is the Docker test image local/debian12:latest
# (tests/images/build.sh) plus a kernel, udev, sshd and the storage tools, baked in once because fork+exec in
# the guest is ~25x slower than here:
#   docker run (apt-get install through the host's apt-cacher-ng) -> docker export -> mke2fs -d (no mount)
#   -> qemu-img convert.
# PLATFORM: debian12 (default; from local/debian12:latest with linux-image-cloud-amd64) or ubuntu2404 (from
# local/ubuntu2404:latest with Ubuntu's linux-image-virtual; tests/images/build.sh ubuntu2404 builds the base).
# Output in .cache/vm/ (GPUOPS_VM_DIR): debian12.qcow2 (ext4 root, no partition table; the base of each
# scenario's overlay), vmlinuz and initrd.img (booted with -kernel/-initrd, so no boot loader), id_ed25519(.pub)
# (authorized for root), root-uuid, recipe. Other platforms write the same names in their own folder,
# .cache/vm/PLATFORM/ (PLATFORM.qcow2, vmlinuz, initrd.img, root-uuid, recipe), with the same key pair.
# Skipped when the recipe (this script, the base image's id, the package list, the public key) is unchanged.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PLATFORM="${1:-debian12}"
VM_DIR="${GPUOPS_VM_DIR:-$root/.cache/vm}"
ROOT_SIZE="${GPUOPS_VM_ROOT_SIZE:-6G}"
# Everything but the kernel is the same on every platform.
PACKAGES=(initramfs-tools udev dbus libpam-systemd systemd-timesyncd openssh-server
          sudo python3 python3-apt mdadm cryptsetup cryptsetup-initramfs xfsprogs e2fsprogs rclone util-linux
          kmod iproute2 procps ca-certificates)
case "$PLATFORM" in
  # debian12 keeps its historical place: molecule/storage/create.yml reads .cache/vm/debian12.qcow2 etc.
  debian12) OUT_DIR="$VM_DIR"; PACKAGES=(linux-image-cloud-amd64 "${PACKAGES[@]}") ;;
  # linux-image-virtual: the generic kernel without linux-modules-extra and linux-firmware.
  ubuntu2404) OUT_DIR="$VM_DIR/$PLATFORM"; PACKAGES=(linux-image-virtual "${PACKAGES[@]}") ;;
  *) echo "unknown platform '$PLATFORM': debian12 or ubuntu2404" >&2; exit 2 ;;
esac
BASE_IMAGE="${GPUOPS_VM_BASE_IMAGE:-local/$PLATFORM:latest}"
QCOW2="$OUT_DIR/$PLATFORM.qcow2"
start=$(date +%s)
# shellcheck source=tests/vm/lib.sh
source "$root/tests/vm/lib.sh"

mkdir -p "$OUT_DIR"
# One build at a time (make vm-image and a scenario's create.yml may both call this).
vm_start "$VM_DIR" "$BASE_IMAGE" "$PLATFORM" docker mke2fs qemu-img ssh-keygen
RECIPE=$( { cat "$0" "$root/tests/vm/lib.sh"; echo "$image_id ${PACKAGES[*]} $ROOT_SIZE"; cat "$VM_DIR/id_ed25519.pub"; } | sha256sum | cut -c1-12)

if [[ "$(cat "$OUT_DIR/recipe" 2>/dev/null)" == "$RECIPE" && -f "$QCOW2" \
      && -f "$OUT_DIR/vmlinuz" && -f "$OUT_DIR/initrd.img" ]]; then
  echo "vm image $QCOW2 is up to date (recipe $RECIPE); build skipped in $(( $(date +%s) - start )) s"
  exit 0
fi

WORK=$(mktemp -d /tmp/gpuops-vm.XXXXXX)
CONTAINER="gpuops-vm-build-$$"
cleanup() { docker rm -f "$CONTAINER" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
echo "building the VM image (recipe $RECIPE) from $BASE_IMAGE ..."

# 1. Packages, in a container of the test image (its apt goes through the host's apt-cacher-ng when it answers).
docker run --name "$CONTAINER" -e DEBIAN_FRONTEND=noninteractive "$BASE_IMAGE" bash -euc '
  # MODULES=most (the default) for the initrd built here: the container cannot detect the guest'"'"'s modules.
  mkdir -p /etc/initramfs-tools/conf.d
  echo MODULES=most > /etc/initramfs-tools/conf.d/gpuops-build.conf
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
  lsinitramfs /boot/initrd.img-* > /tmp/initrd.list
  for m in virtio_blk virtio_net virtio_pci nvme ext4; do
    grep -q "/$m.ko" /tmp/initrd.list || grep -qw "$m" /lib/modules/*/modules.builtin \
      || { echo "initrd lacks $m" >&2; exit 1; }
  done
  # In the guest MODULES=dep: the one rebuild a converge makes is then about a minute on TCG, not several.
  echo MODULES=dep > /etc/initramfs-tools/conf.d/gpuops-build.conf
  apt-get clean
' _ "${PACKAGES[@]}" >"$WORK/install.log" 2>&1 || { tail -n 40 "$WORK/install.log" >&2; exit 1; }

# 2. The root file system, configured for a VM instead of a container.
ROOTFS="$WORK/rootfs"
mkdir -p "$ROOTFS"
docker export "$CONTAINER" | tar -C "$ROOTFS" --numeric-owner -xpf -
docker rm -f "$CONTAINER" >/dev/null
uuid=$(cat /proc/sys/kernel/random/uuid)
vm_rootfs "$ROOTFS" gpuops-vm "$uuid" "$VM_DIR/id_ed25519.pub"
kernel=$(find "$ROOTFS/boot" -name 'vmlinuz-*' | sort -V | tail -n1)
initrd=$(find "$ROOTFS/boot" -name 'initrd.img-*' | sort -V | tail -n1)
[[ -n "$kernel" && -n "$initrd" ]] || { echo "no kernel or initrd in /boot" >&2; exit 1; }

# 3. ext4 from the directory (no loop mount), then qcow2.
truncate -s "$ROOT_SIZE" "$WORK/root.raw"
mke2fs -q -F -t ext4 -L gpuops-root -U "$uuid" -E root_owner=0:0 -d "$ROOTFS" "$WORK/root.raw" "$ROOT_SIZE"
qemu-img convert -O qcow2 "$WORK/root.raw" "$WORK/$PLATFORM.qcow2"
cp "$kernel" "$WORK/vmlinuz" && cp "$initrd" "$WORK/initrd.img"
for f in "$PLATFORM.qcow2" vmlinuz initrd.img; do mv -f "$WORK/$f" "$OUT_DIR/$f"; done
echo "$uuid" > "$OUT_DIR/root-uuid"
echo "$RECIPE" > "$OUT_DIR/recipe"
echo "built vm image $QCOW2 (recipe $RECIPE, kernel ${kernel##*/vmlinuz-}," \
  "$(du -m "$QCOW2" | cut -f1) MB) in $(( $(date +%s) - start )) s"
