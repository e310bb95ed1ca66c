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

# vm_efi_disk QCOW2 ROOTFS UUID ROOT_MIB ESP_DIR GRUB_PREFIX IMAGE LOG: a GPT disk for OVMF, written without a loop
# device or a mount: an EFI system partition (64 MiB from 1 MiB; ESP_DIR's BOOTX64.EFI, grubx64.efi, mmx64.efi and
# grub.cfg in /EFI/BOOT, the removable-media path, and grub.cfg again in /EFI/GRUB_PREFIX, where the signed grub looks)
# and the ext4 root (ROOT_MIB, label gpuops-root, UUID) made from ROOTFS in place (mke2fs -E offset -d). sgdisk and
# mtools run in a container of IMAGE; the raw disk is made beside QCOW2 and converted.
vm_efi_disk() {
  local qcow2=$1 rootfs=$2 uuid=$3 root_mib=$4 esp_dir=$5 prefix=$6 image=$7 log=$8
  local dir raw esp_start=2048 esp_end=$((2048 + 64 * 2048 - 1))
  local root_start=$((esp_end + 1)) root_end=$((esp_end + root_mib * 2048))
  dir=$(dirname "$qcow2")
  raw="$dir/disk.raw"
  truncate -s $(( (root_end + 1 + 2048) * 512 )) "$raw"
  docker run --rm -v "$dir:/w" -v "$esp_dir:/esp:ro" -e DEBIAN_FRONTEND=noninteractive "$image" bash -euc '
    apt-get update -qq && apt-get install -y -qq --no-install-recommends gdisk mtools >/dev/null
    sgdisk --clear -n 1:'"$esp_start:$esp_end"' -t 1:EF00 -c 1:ESP -n 2:'"$root_start:$root_end"' -t 2:8304 \
      -c 2:root /w/disk.raw >/dev/null
    esp=/w/disk.raw@@'"$((esp_start * 512))"'
    mformat -i "$esp" -F -T '"$((64 * 2048))"' -v ESP ::
    mmd -i "$esp" ::/EFI ::/EFI/BOOT ::/EFI/'"$prefix"'
    mcopy -i "$esp" /esp/BOOTX64.EFI /esp/grubx64.efi /esp/mmx64.efi /esp/grub.cfg ::/EFI/BOOT/
    mcopy -i "$esp" /esp/grub.cfg ::/EFI/'"$prefix"'/
    sgdisk -v /w/disk.raw | grep -q "No problems found"' >"$log" 2>&1 || { tail -n 20 "$log" >&2; exit 1; }
  mke2fs -q -F -t ext4 -L gpuops-root -U "$uuid" -E offset=$((root_start * 512)),root_owner=0:0 \
    -d "$rootfs" "$raw" "${root_mib}M"
  qemu-img convert -O qcow2 "$raw" "$qcow2"
  rm -f "$raw"
}
