#!/usr/bin/env bash
# Boot the NVIDIA driver's guest through the real Secure Boot chain and see what the kernel lets load:
#   tests/vm/secureboot.sh [PLATFORM]        (make test-kernel runs debian12, ubuntu2404, then ubuntu2604)
# Not `-kernel`, which skips the chain: OVMF with Microsoft's keys (Debian 12's ovmf: OVMF_CODE_4M.secboot.fd,
# OVMF_VARS_4M.ms.fd), the distribution's signed shim (EFI/BOOT/BOOTX64.EFI, removable-media path), its signed grub,
# and its signed kernel, under QEMU's TCG (KVM guests hang on this kind of host, /work/shared/ENVIRONMENT.md).
#
# 1. Image (cached by a recipe: this script, its playbooks, the role and plugins, the base image): a container of the
#    test image gets the kernel, sshd and mokutil, and a DKMS key pair generated here; tests/vm/secureboot-bake.yml runs
#    the nvidia_driver role in bake mode (Debian 12: DKMS builds and signs the module for the guest's kernel, and an
#    older kernel whose headers left the archive is installed beside it, without a module; Ubuntu 24.04 and 26.04:
#    Canonical's signed prebuilt module) and makes the negative controls (the module with its signature cut off;
#    another kernel's module signed by a key the guest trusts).
#    docker export -> a GPT disk with an EFI system partition (shim, grub, MokManager, grub.cfg; sgdisk and mtools in
#    a helper container) and the ext4 root written in place (mke2fs -E offset -d): no loop device, no mount.
# 2. Variable stores from OVMF_VARS_4M.ms.fd (virt-fw-vars, virt-firmware from PyPI): "enrolled" has the DKMS
#    certificate in shim's MOK list (MokList, non-volatile + boot-services, as shim requires; shim copies it to
#    MokListRT and the kernel trusts it for modules), "no-key" has not (Ubuntu boots only that one: Canonical's module
#    needs no MOK key). This writes the MOK list directly instead of driving MokManager through QEMU's monitor: what
#    it leaves untested is MokManager's own screen and password prompt (the role's nvidia_driver_secure_boot=enroll
#    queues the key with mokutil --import for that screen).
# 3. Each store boots the same disk (a throw-away overlay) in turn; over SSH tests/vm/secureboot-check.yml asserts
#    SecureBoot enabled, lockdown, sig_enforce=Y, and: enrolled, or Canonical's prebuilt module: modprobe fails only
#    with "No such device" and NVRM says no GPU; no-key with a DKMS module: "Key was rejected by service", "Loading of
#    module with unavailable key is rejected"; all: the unsigned copy is refused ("Loading of unsigned module is
#    rejected"), the other kernel's module fails on its format or symbols (or, unenrolled, on its key), neither
#    nouveau nor nova_core nor nvidia is loaded and both are blacklisted.
#    tests/vm/secureboot-role.yml then runs the role (--check, preflight and install tags, a fake PCI bus): DKMS and
#    no key: refused before any change, naming Secure Boot and the ways out; prebuilt: it passes that gate.
# 4. The enrolled Debian 12 boot runs tests/vm/secureboot-reboot.yml instead: the guest boots the older kernel, the role
#    (live, nvidia_driver_reboot) reboots it once into the kernel with the module, which finds no GPU; a second run
#    neither reboots nor changes anything.
# Logs: build/secureboot/<platform>/ (serial consoles, playbook output). GPUOPS_SECUREBOOT_KEEP=1 leaves the last guest
# running.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PLATFORM="${1:-debian12}"
VM_DIR="${GPUOPS_VM_DIR:-$root/.cache/vm}"
OUT_DIR="$VM_DIR/secureboot/$PLATFORM"
LOG_DIR="$root/build/secureboot/$PLATFORM"
ROOT_MIB="${GPUOPS_SB_ROOT_MIB:-6144}"
BOOT_TIMEOUT="${GPUOPS_SB_BOOT_TIMEOUT:-1200}"
export PATH="$root/.venv/bin:$PATH" ANSIBLE_COLLECTIONS_PATH="$root/.cache/collections" ANSIBLE_FORCE_COLOR=0
# Facts in memory only: the repository's ansible.cfg caches them in .cache/facts by inventory name, and a guest of one
# platform must never be planned with another's (seen: the Debian 12 guest's role run took the Ubuntu 26.04 guest's
# cached facts and planned Ubuntu's packages).
export ANSIBLE_CACHE_PLUGIN=ansible.builtin.memory
case "$PLATFORM" in
  debian12)
    # DKMS builds the module and signs it with the DKMS key; the guest boots with and without that key in shim's MOK
    # list. The other kernel's module: Debian 13's dummy.ko, re-signed with the DKMS key by secureboot-bake.yml.
    KERNEL_PACKAGE=linux-image-cloud-amd64
    EFI_PACKAGES=(shim-signed shim-helpers-amd64-signed grub-efi-amd64-signed)
    SHIM=usr/lib/shim/shimx64.efi.signed MOKMANAGER=usr/lib/shim/mmx64.efi.signed
    GRUB=usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed GRUB_PREFIX=debian
    THREAD=multi MODULE=nvidia-current DEFAULT_STORES="enrolled no-key" PREBUILT=false DRIVER_VARS=() SUITES=""
    # The reboot on a real kernel (secureboot-reboot.yml, the enrolled boot): an older signed cloud kernel whose headers
    # left the archive (bookworm-security keeps the images of superseded 6.1 kernels), which the guest boots first.
    OLD_KERNEL_PATTERN='6\.1\.0-[0-9]+-cloud-amd64' REBOOT_STORE=enrolled
    OTHER_IMAGE=local/debian13:latest
    # shellcheck disable=SC2016  # expanded in the container
    OTHER_MODULE='pkg=$(apt-cache depends linux-image-cloud-amd64 | awk "/Depends: linux-image-[0-9]/ {print \$2; exit}")
      apt-get download -qq "$pkg" >/dev/null && dpkg-deb -x "$pkg"_*.deb x && find x -name "dummy.ko*" | head -n1' ;;
  ubuntu2604|ubuntu2404)
    # Canonical's signed prebuilt module, no DKMS, no MOK key, so one variable store, Microsoft's keys only:
    # - Ubuntu 26.04: kernel 7.0.0-14-generic's, built from driver 580.126.20 (the kernel and driver of
    #   molecule/nvidia_driver_kernels' resolute host, from the release pocket);
    # - Ubuntu 24.04: the release kernel 6.8.0-31-generic's, built from 550.54.15, the driver of noble's release pocket.
    #   The guest's apt reads that pocket only (SUITES): noble-updates has made 550-server a transition to 570, which
    #   the role refuses, and no prebuilt module of a driver version noble's pockets still serve exists for any noble
    #   kernel (2026-12-06), so with every pocket the role picks DKMS there (molecule/nvidia_driver_kernels). An image
    #   built from the release pocket alone is what a snapshot of the release (a pinned mirror) gives.
    # The other kernel's module: Canonical's prebuilt NVIDIA module of Ubuntu 22.04's 6.8.0-1066-aws, signed by the same
    # Canonical key (linked from its objects and signature packages as its own package's install does), so that only
    # its kernel can make the guest refuse it. Ubuntu's kernels get TCG's single thread: under QEMU 7.2's thread=multi
    # Ubuntu 24.04's 6.8 kernel died of a general protection fault minutes after boot (tests/vm/README.md).
    if [[ $PLATFORM == ubuntu2604 ]]; then
      KERNEL_PACKAGE=linux-image-7.0.0-14-generic DRIVER_VARS=(-e nvidia_driver_version=580.126.20) SUITES=""
    else
      KERNEL_PACKAGE=linux-image-6.8.0-31-generic SUITES=noble
      DRIVER_VARS=(-e nvidia_driver_branch=550 -e nvidia_driver_version=550.54.15)
    fi
    EFI_PACKAGES=(shim-signed grub-efi-amd64-signed)
    SHIM=usr/lib/shim/shimx64.efi.signed.latest MOKMANAGER=usr/lib/shim/mmx64.efi
    GRUB=usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed GRUB_PREFIX=ubuntu
    THREAD=single MODULE=nvidia DEFAULT_STORES="no-key" PREBUILT=true OLD_KERNEL_PATTERN="" REBOOT_STORE=""
    OTHER_IMAGE=local/ubuntu2204:latest
    # shellcheck disable=SC2016  # expanded in the container
    OTHER_MODULE='abi=6.8.0-1066-aws
      apt-get install -y -qq --no-install-recommends binutils >/dev/null
      for pkg in linux-objects-nvidia-580-server-$abi linux-signatures-nvidia-$abi; do
        apt-get download -qq "$pkg" >/dev/null && dpkg-deb -x "$pkg"_*.deb x; done
      # What the package linux-modules-nvidia-580-server-<abi> does at its install: link the objects and append
      # Canonical'"'"'s signature (its postinst runs bits/BUILD).
      (cd x/lib/modules/$abi/kernel/nvidia-580srv/bits && sh ./BUILD >/dev/null)
      find x -path "*/nvidia-580srv/nvidia.ko" | head -n1' ;;
  *) echo "unknown platform '$PLATFORM': debian12, ubuntu2404 or ubuntu2604" >&2; exit 2 ;;
esac
BASE_IMAGE="local/$PLATFORM:latest"
# shim's vendor GUID: the owner of MOK list entries (shim's lib/guid.c SHIM_LOCK_GUID).
SHIM_GUID=605dab50-e046-4300-abb6-3dd810dd8b23
start=$(date +%s)
# shellcheck source=tests/vm/lib.sh
source "$root/tests/vm/lib.sh"
say() { echo "[$(( $(date +%s) - start )) s] $*"; }

mkdir -p "$OUT_DIR" "$LOG_DIR"
vm_start "$VM_DIR" "$BASE_IMAGE" "$PLATFORM" docker mke2fs qemu-img qemu-system-x86_64 ssh ssh-keygen openssl \
  virt-fw-vars ansible-playbook
# The DKMS signing key of the guest, kept across rebuilds (so the variable stores stay valid).
if [[ ! -f "$OUT_DIR/mok.key" ]]; then
  openssl req -new -x509 -nodes -days 36500 -subj "/CN=gpuops test DKMS module signing key" -newkey rsa:2048 \
    -keyout "$OUT_DIR/mok.key" -outform DER -out "$OUT_DIR/mok.pub" 2>/dev/null
  chmod 0600 "$OUT_DIR/mok.key"
fi

WORK=$(mktemp -d /tmp/gpuops-sb.XXXXXX)
CONTAINER="gpuops-sb-build-$$"
QEMU_PID=""
cleanup() {
  docker rm -f "$CONTAINER" >/dev/null 2>&1 || true
  if [[ -n "$QEMU_PID" && -z "${GPUOPS_SECUREBOOT_KEEP:-}" ]]; then kill "$QEMU_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

build_image() {
  say "building the Secure Boot guest image (recipe $RECIPE) from $BASE_IMAGE ..."
  # The files of the boot chain from the guest's archive, the firmware (OVMF with Microsoft's keys) from Debian 12's
  # for every guest (it belongs to the hypervisor, not the guest), and a module of another kernel.
  docker run --rm -v "$WORK:/out" -e DEBIAN_FRONTEND=noninteractive "$BASE_IMAGE" bash -euc '
    apt-get update -qq && cd /tmp && apt-get download -qq "$@" >/dev/null
    for deb in *.deb; do dpkg-deb -x "$deb" /out/efi-files; done' _ "${EFI_PACKAGES[@]}" >"$LOG_DIR/efi.log" 2>&1
  docker run --rm -v "$WORK:/out" -e DEBIAN_FRONTEND=noninteractive local/debian12:latest bash -euc '
    apt-get update -qq && cd /tmp && apt-get download -qq ovmf >/dev/null && dpkg-deb -x ovmf_*.deb /out/efi-files' \
    >>"$LOG_DIR/efi.log" 2>&1
  docker run --rm -v "$WORK:/out" -e DEBIAN_FRONTEND=noninteractive "$OTHER_IMAGE" bash -euc '
    apt-get update -qq && cd /tmp
    module=$('"$OTHER_MODULE"')
    cp "$module" "/out/other.$(basename "$module")"' >"$LOG_DIR/other-kernel.log" 2>&1
  # Uncompressed (Debian 13 ships its modules xz-compressed, Ubuntu zstd-compressed in places); secureboot-bake.yml
  # cuts Debian's signature off and signs it with the DKMS key, and leaves Canonical's on.
  python3 - "$WORK" <<'PY'
import glob, lzma, os, subprocess, sys
[found] = glob.glob(os.path.join(sys.argv[1], 'other.*.ko*'))
data = open(found, 'rb').read()
if found.endswith('.xz'):
    data = lzma.decompress(data)
elif found.endswith('.zst'):
    data = subprocess.run(['zstd', '-dc', found], check=True, stdout=subprocess.PIPE).stdout
open(os.path.join(sys.argv[1], 'other-kernel.ko'), 'wb').write(data)
PY

  # systemd as the image starts it (tests/images/build.sh: Ubuntu 26.04's through gpuops-init in its own cgroup
  # namespace).
  local init=(--cgroupns host "$BASE_IMAGE" /lib/systemd/systemd)
  [[ "$(docker image inspect -f '{{ index .Config.Labels "gpuops.cgroupns" }}' "$BASE_IMAGE")" == private ]] \
    && init=(--cgroupns private "$BASE_IMAGE")
  docker run -d --name "$CONTAINER" --cap-add SYS_ADMIN --security-opt seccomp=unconfined \
    --security-opt apparmor=unconfined --tmpfs /run --tmpfs /run/lock \
    -v /sys/fs/cgroup:/sys/fs/cgroup:rw "${init[@]}" >/dev/null
  docker exec -e DEBIAN_FRONTEND=noninteractive "$CONTAINER" bash -euc '
    mkdir -p /etc/initramfs-tools/conf.d /var/lib/dkms /root/negative
    echo MODULES=most > /etc/initramfs-tools/conf.d/gpuops-build.conf
    # The package cache has answered a refresh with an index it could not verify while other runs refreshed theirs.
    for try in 1 2 3; do apt-get update -qq && break; sleep 10; done
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null' _ "$KERNEL_PACKAGE" initramfs-tools udev dbus \
    libpam-systemd systemd-timesyncd openssh-server sudo python3 python3-apt kmod iproute2 procps ca-certificates \
    mokutil keyutils >"$LOG_DIR/install.log" 2>&1 || { tail -n 40 "$LOG_DIR/install.log" >&2; exit 1; }
  if [[ -n $SUITES ]]; then  # the suites the guest's apt reads from now on (Ubuntu's deb822 sources)
    docker exec "$CONTAINER" sed -i "s/^Suites: .*/Suites: $SUITES/" /etc/apt/sources.list.d/ubuntu.sources
  fi
  docker cp "$OUT_DIR/mok.key" "$CONTAINER:/var/lib/dkms/mok.key"
  docker cp "$OUT_DIR/mok.pub" "$CONTAINER:/var/lib/dkms/mok.pub"
  docker cp "$WORK/other-kernel.ko" "$CONTAINER:/root/negative/other-kernel-original.ko"
  kver=$(docker exec "$CONTAINER" sh -c 'ls /lib/modules | sort -V | tail -n1')
  old_kver=""
  if [[ -n $OLD_KERNEL_PATTERN ]]; then
    # The newest kernel image older than the guest's whose headers apt no longer knows.
    old_kver=$(docker exec "$CONTAINER" bash -c '
      headers=$(apt-cache pkgnames linux-headers-)
      apt-cache pkgnames linux-image- | sed -En "s/^linux-image-($1)$/\1/p" | sort -V \
        | while read -r r; do [[ $(printf "%s\n%s\n" "$r" "$2" | sort -V | head -n1) == "$r" && $r != "$2" ]] || continue
            grep -qx "linux-headers-$r" <<<"$headers" || echo "$r"; done | tail -n1' _ "$OLD_KERNEL_PATTERN" "$kver")
    [[ -n $old_kver ]] || { echo "no older $OLD_KERNEL_PATTERN kernel without headers in the archive" >&2; exit 1; }
    docker exec -e DEBIAN_FRONTEND=noninteractive "$CONTAINER" apt-get install -y -qq --no-install-recommends \
      "linux-image-$old_kver" >>"$LOG_DIR/install.log" 2>&1 || { tail -n 40 "$LOG_DIR/install.log" >&2; exit 1; }
    say "the older kernel $old_kver (no headers in the archive), which the reboot test boots first"
  fi
  say "kernel $kver; the nvidia_driver role in bake mode ..."
  ansible-playbook -i "$CONTAINER," -c community.docker.docker -e ansible_python_interpreter=/usr/bin/python3 \
    -e gpuops_sb_kernel="$kver" -e gpuops_sb_module="$MODULE" -e gpuops_sb_prebuilt="$PREBUILT" "${DRIVER_VARS[@]}" \
    "$root/tests/vm/secureboot-bake.yml" >"$LOG_DIR/bake.log" 2>&1 \
    || { tail -n 60 "$LOG_DIR/bake.log" >&2; exit 1; }

  # The root file system, configured for a VM (as tests/vm/build.sh does).
  ROOTFS="$WORK/rootfs"
  mkdir -p "$ROOTFS"
  docker stop -t 5 "$CONTAINER" >/dev/null
  docker export "$CONTAINER" | tar -C "$ROOTFS" --numeric-owner -xpf -
  docker rm -f "$CONTAINER" >/dev/null
  uuid=$(cat /proc/sys/kernel/random/uuid)
  vm_rootfs "$ROOTFS" gpuops-sb "$uuid" "$VM_DIR/id_ed25519.pub"
  # MODULES=most while the container builds initramfs images (with MODULES=dep mkinitramfs cannot find the root device
  # of a container), MODULES=dep in the guest.
  echo MODULES=dep > "$ROOTFS/etc/initramfs-tools/conf.d/gpuops-build.conf"
  for k in $kver $old_kver; do
    [[ -f "$ROOTFS/boot/vmlinuz-$k" && -f "$ROOTFS/boot/initrd.img-$k" ]] \
      || { echo "no kernel or initrd for $k in /boot" >&2; exit 1; }
  done

  # The EFI system partition's files: shim on the removable-media path with grub and MokManager beside it (no
  # fbx64.efi: shim would run the fallback, which writes boot entries and resets), and grub.cfg where the signed grub
  # looks for it (its prefix /EFI/<distribution>) and beside it.
  mkdir -p "$WORK/esp"
  cp "$WORK/efi-files/$SHIM" "$WORK/esp/BOOTX64.EFI"
  cp "$WORK/efi-files/$GRUB" "$WORK/esp/grubx64.efi"
  cp "$WORK/efi-files/$MOKMANAGER" "$WORK/esp/mmx64.efi"
  cat > "$WORK/esp/grub.cfg" <<CFG
set timeout=0
set default=0
search --no-floppy --fs-uuid --set=root $uuid
menuentry "$PLATFORM (Secure Boot test)" {
  linux /boot/vmlinuz-$kver root=UUID=$uuid ro console=ttyS0,115200n8
  initrd /boot/initrd.img-$kver
}
CFG
  if [[ -n $old_kver ]]; then
    cat >> "$WORK/esp/grub.cfg" <<CFG
menuentry "$PLATFORM (older kernel $old_kver)" {
  linux /boot/vmlinuz-$old_kver root=UUID=$uuid ro console=ttyS0,115200n8
  initrd /boot/initrd.img-$old_kver
}
CFG
  fi
  # GPT: the ESP and the root file system, written in place into the disk file (tests/vm/lib.sh).
  vm_efi_disk "$WORK/disk.qcow2" "$ROOTFS" "$uuid" "$ROOT_MIB" "$WORK/esp" "$GRUB_PREFIX" "$BASE_IMAGE" \
    "$LOG_DIR/disk.log"

  # The variable stores: Microsoft's keys and Secure Boot on (OVMF_VARS_4M.ms.fd), with and without the DKMS key.
  local ovmf="$WORK/efi-files/usr/share/OVMF"
  cp "$ovmf/OVMF_CODE_4M.secboot.fd" "$WORK/code.fd"
  virt-fw-vars -i "$ovmf/OVMF_VARS_4M.ms.fd" -o "$WORK/vars-no-key.fd" --secure-boot >"$LOG_DIR/vars.log" 2>&1
  virt-fw-vars -i "$ovmf/OVMF_VARS_4M.ms.fd" -o "$WORK/vars-enrolled.fd" --secure-boot \
    --add-mok "$SHIM_GUID" "$OUT_DIR/mok.pub" >>"$LOG_DIR/vars.log" 2>&1
  for f in disk.qcow2 code.fd vars-no-key.fd vars-enrolled.fd; do mv -f "$WORK/$f" "$OUT_DIR/$f"; done
  echo "$kver" > "$OUT_DIR/kernel"
  echo "$old_kver" > "$OUT_DIR/old-kernel"
  echo "$RECIPE" > "$OUT_DIR/recipe"
  say "built $OUT_DIR/disk.qcow2 ($(du -m "$OUT_DIR/disk.qcow2" | cut -f1) MB, kernel $kver)"
}

# The recipe: what makes the image (build_image itself, the bake playbook, the role and the plugins, the base images,
# the keys), not the checks, so that changing a check does not rebuild it.
# shellcheck disable=SC2154  # image_id: set by vm_start (tests/vm/lib.sh)
RECIPE=$( { declare -f build_image vm_rootfs vm_efi_disk; echo "$KERNEL_PACKAGE ${DRIVER_VARS[*]} $SUITES $OLD_KERNEL_PATTERN $OTHER_MODULE";
            cat "$root/tests/vm/secureboot-bake.yml"; echo "$image_id $ROOT_MIB";
            docker image inspect -f '{{.Id}}' "$OTHER_IMAGE" local/debian12:latest; cat "$VM_DIR/id_ed25519.pub" "$OUT_DIR/mok.pub";
            find "$root/roles/nvidia_driver" "$root/plugins" -type f \( -name '*.yml' -o -name '*.py' \) | sort | xargs cat;
          } | sha256sum | cut -c1-12)
if [[ "$(cat "$OUT_DIR/recipe" 2>/dev/null)" == "$RECIPE" && -f "$OUT_DIR/disk.qcow2" ]]; then
  say "Secure Boot guest image up to date (recipe $RECIPE)"
else
  build_image
fi
flock -u 9

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

boot_and_check() {  # boot_and_check STORE (enrolled | no-key)
  local store=$1 port overlay serial
  port=$(free_port)
  overlay="$WORK/$store.qcow2"
  serial="$LOG_DIR/$store.serial.log"
  qemu-img create -q -f qcow2 -F qcow2 -b "$OUT_DIR/disk.qcow2" "$overlay"
  cp "$OUT_DIR/vars-$store.fd" "$WORK/vars-$store.fd"
  say "booting with the '$store' variable store (port $port, serial log $serial) ..."
  qemu-system-x86_64 -machine q35,smm=on -accel "tcg,thread=$THREAD,tb-size=256" -smp 2 -m 2048 \
    -global driver=cfi.pflash01,property=secure,value=on -global ICH9-LPC.disable_s3=1 \
    -drive if=pflash,format=raw,unit=0,readonly=on,file="$OUT_DIR/code.fd" \
    -drive if=pflash,format=raw,unit=1,file="$WORK/vars-$store.fd" \
    -drive file="$overlay",if=none,id=root,format=qcow2,cache=unsafe -device virtio-blk-pci,drive=root,bootindex=0 \
    -netdev user,id=net0,hostfwd=tcp:127.0.0.1:"$port"-:22 -device virtio-net-pci,netdev=net0,romfile= \
    -display none -serial file:"$serial" -daemonize -pidfile "$WORK/qemu.pid"
  QEMU_PID=$(cat "$WORK/qemu.pid")
  local ssh_opts=(-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10
                  -o ServerAliveInterval=5 -o ServerAliveCountMax=3 -o LogLevel=ERROR -i "$VM_DIR/id_ed25519")
  local waited=0
  until ssh "${ssh_opts[@]}" -p "$port" root@127.0.0.1 true 2>/dev/null; do
    sleep 10; waited=$((waited + 10))
    if ((waited >= BOOT_TIMEOUT)); then
      echo "no SSH after $BOOT_TIMEOUT s; the serial console's last lines:" >&2; tail -n 30 "$serial" >&2; exit 1
    fi
  done
  say "'$store': SSH after $waited s"
  local inventory="$WORK/inventory-$store.ini"
  printf 'sb-%s ansible_host=127.0.0.1 ansible_port=%s ansible_user=root ansible_python_interpreter=/usr/bin/python3 ansible_ssh_private_key_file=%s ansible_ssh_common_args="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ServerAliveInterval=5 -o ServerAliveCountMax=3"\n' \
    "$PLATFORM" "$port" "$VM_DIR/id_ed25519" > "$inventory"
  local enrolled=false
  [[ $store == enrolled ]] && enrolled=true
  ansible-playbook -i "$inventory" -e gpuops_sb_enrolled=$enrolled -e gpuops_sb_module="$MODULE" \
    -e gpuops_sb_prebuilt="$PREBUILT" "$root/tests/vm/secureboot-check.yml" \
    >"$LOG_DIR/$store.check.log" 2>&1 || { tail -n 60 "$LOG_DIR/$store.check.log" >&2; exit 1; }
  say "'$store': the kernel's checks passed"
  if [[ $store == "$REBOOT_STORE" ]]; then
    # The role live (its Secure Boot gate, its plan, the install and the reboot): the guest boots the older kernel, the
    # role reboots it once into the new one; then the same run again, which neither reboots nor changes anything.
    local pass
    for pass in first again; do
      say "'$store': the role with nvidia_driver_reboot ($pass run) ..."
      ansible-playbook -i "$inventory" -e gpuops_sb_pass=$pass -e gpuops_sb_kernel="$(cat "$OUT_DIR/kernel")" \
        -e gpuops_sb_old_kernel="$(cat "$OUT_DIR/old-kernel")" "${DRIVER_VARS[@]}" \
        "$root/tests/vm/secureboot-reboot.yml" >"$LOG_DIR/$store.reboot-$pass.log" 2>&1 \
        || { tail -n 60 "$LOG_DIR/$store.reboot-$pass.log" >&2; exit 1; }
      if [[ $pass == again ]] && ! grep -qE 'changed=0 +unreachable=0 +failed=0' "$LOG_DIR/$store.reboot-$pass.log"; then
        echo "the re-run changed something: $LOG_DIR/$store.reboot-$pass.log" >&2; exit 1
      fi
    done
  else
    say "'$store': the role's plan ..."
    ansible-playbook -i "$inventory" -e gpuops_sb_enrolled=$enrolled -e gpuops_sb_prebuilt="$PREBUILT" \
      "${DRIVER_VARS[@]}" --check \
      --tags nvidia_driver_preflight,nvidia_driver_install "$root/tests/vm/secureboot-role.yml" \
      >"$LOG_DIR/$store.role.log" 2>&1 || { tail -n 60 "$LOG_DIR/$store.role.log" >&2; exit 1; }
  fi
  say "'$store': passed"
  if [[ -z "${GPUOPS_SECUREBOOT_KEEP:-}" || $store != "${LAST_STORE}" ]]; then
    kill "$QEMU_PID" 2>/dev/null || true
    while kill -0 "$QEMU_PID" 2>/dev/null; do sleep 1; done
    QEMU_PID=""
  fi
}

read -r -a STORES <<< "${GPUOPS_SB_STORES:-$DEFAULT_STORES}"
LAST_STORE=${STORES[-1]}
for store in "${STORES[@]}"; do boot_and_check "$store"; done
say "Secure Boot guest ($PLATFORM): every check passed"
