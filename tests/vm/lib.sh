# shellcheck shell=bash
# Sourced by tests/vm/build.sh and tests/vm/secureboot.sh: what both do before and while turning a test container into a
# QEMU guest's disk.

# vm_start VM_DIR BASE_IMAGE PLATFORM TOOL...: the tools are there, the base image exists (its id in $image_id), one
# build at a time (the lock .lock in VM_DIR, held on descriptor 9 until the caller releases it or exits), and the
# guests' SSH key pair (VM_DIR/id_ed25519, kept across rebuilds: the recipes hash its public half).
vm_start() {
  local vm_dir=$1 base_image=$2 platform=$3 tool
  shift 3
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (make venv, scripts/setup-host.sh)" >&2; exit 1; }
  done
  # shellcheck disable=SC2034  # image_id: read by the caller (its recipe)
  image_id=$(docker image inspect -f '{{.Id}}' "$base_image" 2>/dev/null) \
    || { echo "$base_image is missing: run tests/images/build.sh $platform (make image) first" >&2; exit 1; }
  mkdir -p "$vm_dir"
  exec 9>"$vm_dir/.lock"
  flock 9
  [[ -f "$vm_dir/id_ed25519" ]] || ssh-keygen -q -t ed25519 -N '' -C gpuops-test-vm -f "$vm_dir/id_ed25519"
}

# vm_rootfs ROOTFS HOSTNAME UUID PUBLIC_KEY: the root file system of an exported test container, made to boot in a QEMU
# guest (user-mode networking, sshd with the key).
vm_rootfs() {
  local rootfs=$1 name=$2 uuid=$3 key=$4 unit
  rm -f "$rootfs/.dockerenv"
  # What tests/images/build.sh masks for containers runs in a VM; systemd-firstboot stays masked (it would prompt
  # on the console, /etc/machine-id being empty).
  for unit in getty.target systemd-udevd.service systemd-udev-trigger.service systemd-modules-load.service \
              sys-kernel-config.mount; do
    rm -f "$rootfs/etc/systemd/system/$unit"
  done
  # No apt runs of its own while a test uses apt (it would hold the lock).
  for unit in apt-daily.timer apt-daily-upgrade.timer; do ln -sf /dev/null "$rootfs/etc/systemd/system/$unit"; done
  echo "UUID=$uuid / ext4 errors=remount-ro 0 1" > "$rootfs/etc/fstab"
  echo "$name" > "$rootfs/etc/hostname"
  printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$name" > "$rootfs/etc/hosts"
  # QEMU user networking: DHCP from 10.0.2.2, DNS at 10.0.2.3, the host (its loopback) at 10.0.2.2.
  rm -f "$rootfs/etc/resolv.conf"
  echo "nameserver 10.0.2.3" > "$rootfs/etc/resolv.conf"
  mkdir -p "$rootfs/etc/systemd/network"
  printf '[Match]\nName=eth* en*\n\n[Network]\nDHCP=ipv4\n' > "$rootfs/etc/systemd/network/20-wired.network"
  ln -sf /lib/systemd/system/systemd-networkd.service \
    "$rootfs/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"
  # Ansible's reboot and wait_for_connection need no more than sshd; do not wait for "network online".
  ln -sf /dev/null "$rootfs/etc/systemd/system/systemd-networkd-wait-online.service"
  install -d -m 0700 "$rootfs/root/.ssh"
  install -m 0600 "$key" "$rootfs/root/.ssh/authorized_keys"
  # sshd: no reverse DNS lookups (slow through slirp), keys only.
  printf 'UseDNS no\nPasswordAuthentication no\n' > "$rootfs/etc/ssh/sshd_config.d/gpuops-test.conf"
}
