#!/usr/bin/env bash
# The whole server on a booted kernel (make test-server): site.yml from the built collection over SSH into an Ubuntu
# 24.04 guest booted through OVMF, shim, grub and Ubuntu's signed kernel with Secure Boot on, with two NVMe disks as the
# instance store and no GPU; a re-run with changed=0; a reboot and the proof that everything came back; Lynis and
# OpenSCAP (CIS Level 1 Server) measured in the guest.
#   tests/vm/server.sh            every stage; each prints its time, the log of each is in build/server/ubuntu2404/
# Stages:
# 1. collection: `ansible-galaxy collection build` of this checkout, installed with `ansible-galaxy collection install`
#    into a fresh collections path (build/server/collections) that comes first on the path: the runs below use the
#    tarball's roles and plugins, not the checkout (its dependencies, ansible.posix, community.*, come from
#    .cache/collections: there is no Galaxy here).
# 2. image (cached by a recipe: the image's build, its playbook and the inventory, the collection's content, the base
#    and QEMU images, the wheels): a container of local/ubuntu2404 gets the kernel of Ubuntu's cloud images (linux-image-virtual, signed),
#    sshd, the admin user cloud-init would create (server-prepare.yml), Lynis and OpenSCAP's scanner (the measuring
#    tools), and is baked with the same site.yml and inventory through the Docker connection, as an image builder
#    (Packer, a golden image) does: the packages, the Python environments and the files that need no kernel. Storage,
#    backup and spot are left to the guest (they need its disks and the S3 server). Under TCG dpkg alone would take
#    hours (aide-common's postinst ran 29 minutes, tests/vm/README.md). docker export -> a GPT disk with an EFI
#    system partition (shim, grub, MokManager) and the ext4 root (tests/vm/lib.sh vm_efi_disk).
# 3. boot: QEMU 10 from Debian 13 in a container (QEMU 7.2 on this host crashes Ubuntu's kernel under multi-threaded
#    TCG), q35 with SMM, OVMF's Secure Boot code and Microsoft's keys (Debian 13's ovmf), 2 vCPUs, 4 GiB, the root
#    disk (virtio, a throw-away overlay) and two new 2 GiB NVMe disks (serials NVME0, NVME1). Secure Boot must be on.
# 4. site: moto (an S3 API) on the controller, which the guest reaches as 10.0.2.2:15081; then
#    `ansible-playbook gpuops.gpu_server.site -i tests/vm/server` over SSH as the admin with become, from a folder of
#    its own with a user's ansible.cfg (pipelining, ControlPersist): what the guest's kernel adds to the bake (storage:
#    RAID0 + LUKS2 + XFS, Docker's data-root moved onto it; sysctl, auditd, AppArmor, the firewall on real netfilter;
#    backup's repository and timers; spot's checkpoint sync).
# 5. rerun: the same command; its recap must say changed=0.
# 6. reboot: the boot ID before, a reboot (ansible.builtin.reboot), the boot ID after; server-check.yml proves what
#    came back (see its header).
# 7. lynis and cis: `lynis audit system` and `oscap xccdf eval` of ssg-ubuntu2404-ds.xml's CIS Level 1 Server profile
#    (scripts/ssg-content.sh: Debian 13's ssg-debderived 0.1.76), in the guest; the hardening index and the share of
#    applicable rules that pass are printed and held against GPUOPS_SERVER_MIN_LYNIS (90) and GPUOPS_SERVER_MIN_CIS (98).
# GPUOPS_SERVER_KEEP=1 leaves the guest running at the end (or at a failure); GPUOPS_SERVER_STAGES limits the stages
# after the boot (default "site rerun reboot lynis cis").
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PLATFORM=ubuntu2404
VM_DIR="${GPUOPS_VM_DIR:-$root/.cache/vm}"
OUT_DIR="$VM_DIR/server/$PLATFORM"
BUILD="$root/build/server"
LOG_DIR="$BUILD/$PLATFORM"
ROOT_MIB="${GPUOPS_SERVER_ROOT_MIB:-12288}"
BOOT_TIMEOUT="${GPUOPS_SERVER_BOOT_TIMEOUT:-1200}"
MIN_LYNIS="${GPUOPS_SERVER_MIN_LYNIS:-90}"
MIN_CIS="${GPUOPS_SERVER_MIN_CIS:-98}"
STAGES="${GPUOPS_SERVER_STAGES:-site rerun reboot lynis cis}"
S3_PORT=15081
BASE_IMAGE="local/$PLATFORM:latest"
QEMU_IMAGE=local/qemu:latest
INVENTORY="$root/tests/vm/server"
VM_NAME=${GPUOPS_SERVER_VM_NAME:-gpuops-server-vm}
BUILD_NAME=gpuops-server-build
export PATH="$root/.venv/bin:$PATH" ANSIBLE_FORCE_COLOR=0
start=$(date +%s)
stage_start=$start
# shellcheck source=tests/vm/lib.sh
source "$root/tests/vm/lib.sh"
say() { echo "[$(( $(date +%s) - start )) s] $*"; }
stage_done() {  # stage_done NAME: the stage's own time, and the total so far
  local now
  now=$(date +%s)
  printf '[%d s] stage %-10s %5d s\n' "$((now - start))" "$1" "$((now - stage_start))"
  printf '%s %d\n' "$1" "$((now - stage_start))" >> "$LOG_DIR/stages"
  stage_start=$now
}
fail() { echo "FAILED: $*" >&2; exit 1; }

rm -rf "$LOG_DIR"
mkdir -p "$OUT_DIR" "$LOG_DIR"
vm_start "$VM_DIR" "$BASE_IMAGE" "$PLATFORM" docker mke2fs qemu-img ssh ssh-keygen virt-fw-vars ansible-playbook \
  ansible-galaxy
KEY="$VM_DIR/id_ed25519"
export GPUOPS_SERVER_SSH_KEY="$KEY"

WORK=$(mktemp -d /tmp/gpuops-server.XXXXXX)
MOTO_PID=""
cleanup() {
  docker rm -f -v "$BUILD_NAME" >/dev/null 2>&1 || true
  if [[ -z "${GPUOPS_SERVER_KEEP:-}" ]]; then
    docker rm -f "$VM_NAME" >/dev/null 2>&1 || true
    [[ -n $MOTO_PID ]] && kill "$MOTO_PID" 2>/dev/null
    rm -rf "$WORK"
  else
    echo "kept: the guest ($VM_NAME, ssh -p \$(cat $WORK/port) -i $KEY gpuadmin@127.0.0.1), moto (pid $MOTO_PID), $WORK"
  fi
}
trap cleanup EXIT

# ---- 1. the collection from its tarball --------------------------------------------------------------------------
rm -rf "$BUILD/collections" "$BUILD/dist"
mkdir -p "$BUILD/dist" "$BUILD/run"
ansible-galaxy collection build --force --output-path "$BUILD/dist" "$root" >"$LOG_DIR/collection.log" 2>&1 \
  || { cat "$LOG_DIR/collection.log" >&2; fail "ansible-galaxy collection build"; }
TARBALL=$(ls "$BUILD"/dist/gpuops-gpu_server-*.tar.gz)
# The dependencies without the checkout's own link (.cache/collections/ansible_collections/gpuops is the checkout).
DEPS="$BUILD/deps/ansible_collections"
rm -rf "$BUILD/deps"
mkdir -p "$DEPS"
for ns in "$root"/.cache/collections/ansible_collections/*; do
  [[ $(basename "$ns") == gpuops ]] || ln -s "$ns" "$DEPS/$(basename "$ns")"
done
export ANSIBLE_COLLECTIONS_PATH="$BUILD/collections:$BUILD/deps"
# A user's ansible.cfg in a folder of its own (not the checkout's): the runs below never read the repository. What
# docs/ansible-cfg.md recommends: pipelining, ControlPersist, and Mitogen's strategy (one Python per host for the whole
# run: site.yml's ~860 tasks took 14 min of the guest's first run with plain SSH, the whole re-run 4-5 min under
# Mitogen). The reboot's playbook runs on the plain strategy (ansible-plain.cfg). The guest is new at every run:
# no host key to check.
mitogen=$(python3 "$root/scripts/mitogen/strategy_path.py" 2>/dev/null) \
  || fail "Mitogen is missing from .venv (make venv)"
for cfg in plain mitogen; do
  {
    echo "[defaults]"
    [[ $cfg == mitogen ]] && printf 'strategy_plugins = %s\nstrategy = mitogen_linear\n' "$mitogen"
    printf 'interpreter_python = auto_silent\nhost_key_checking = False\ncallbacks_enabled = ansible.posix.profile_tasks\n'
    printf 'retry_files_enabled = False\ntimeout = 60\nforks = 10\n'
    printf '[ssh_connection]\npipelining = True\nssh_args = -o ControlMaster=auto -o ControlPersist=300s\n'
  } > "$BUILD/run/ansible-$cfg.cfg"
done
export ANSIBLE_CONFIG="$BUILD/run/ansible-mitogen.cfg" ANSIBLE_CACHE_PLUGIN=ansible.builtin.memory
(cd "$BUILD/run" && ansible-galaxy collection install --offline --no-deps --force -p "$BUILD/collections" "$TARBALL") \
  >>"$LOG_DIR/collection.log" 2>&1 \
  || { cat "$LOG_DIR/collection.log" >&2; fail "ansible-galaxy collection install"; }
installed=$(cd "$BUILD/run" && ansible-galaxy collection list gpuops.gpu_server 2>/dev/null | awk '/^# /{p=$2} /^gpuops.gpu_server/{print p; exit}')
[[ $installed == "$BUILD/collections/ansible_collections" ]] \
  || fail "gpuops.gpu_server resolves to '$installed', not the installed tarball"
say "collection $(basename "$TARBALL") installed into $BUILD/collections"
stage_done collection

# ---- 2. the image ----------------------------------------------------------------------------------------------
qemu_image() {  # QEMU 10 and OVMF from Debian 13 (its image, tests/images/build.sh), cached by its base image
  local base
  base=$(docker image inspect -f '{{.Id}}' local/debian13:latest) || fail "local/debian13 is missing (make image)"
  [[ "$(docker image inspect -f '{{ index .Config.Labels "gpuops.base" }}' "$QEMU_IMAGE" 2>/dev/null)" == "$base" ]] \
    && return 0
  printf 'FROM local/debian13:latest\nLABEL gpuops.base=%s\nRUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-x86 qemu-utils ovmf >/dev/null && rm -rf /var/lib/apt/lists/*\n' \
    "$base" | docker build -q -t "$QEMU_IMAGE" - >"$LOG_DIR/qemu-image.log" 2>&1 \
    || { cat "$LOG_DIR/qemu-image.log" >&2; fail "the QEMU image"; }
}

build_image() {
  say "building the server image (recipe $RECIPE) from $BASE_IMAGE: bake with site.yml ..."
  local efi="$WORK/efi-files" rootfs="$WORK/rootfs" uuid kver
  docker run --rm -v "$WORK:/out" -e DEBIAN_FRONTEND=noninteractive "$BASE_IMAGE" bash -euc '
    apt-get update -qq && cd /tmp && apt-get download -qq shim-signed grub-efi-amd64-signed >/dev/null
    for deb in *.deb; do dpkg-deb -x "$deb" /out/efi-files; done' >"$LOG_DIR/efi.log" 2>&1 \
    || { cat "$LOG_DIR/efi.log" >&2; fail "the EFI files"; }
  # systemd as the image starts it, with what dockerd in the container needs (the demo's options): its data on
  # volumes of the container's own, which docker export leaves out.
  docker run -d --name "$BUILD_NAME" --hostname gpuops-server \
    --cap-add SYS_ADMIN --cap-add NET_ADMIN --cap-add NET_RAW --cap-add MKNOD \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined --cgroupns host \
    -v /sys/fs/cgroup:/sys/fs/cgroup:rw -v /var/lib/docker -v /var/lib/containerd \
    --tmpfs /run --tmpfs /run/lock --tmpfs /tmp "$BASE_IMAGE" /lib/systemd/systemd >/dev/null
  docker exec -e DEBIAN_FRONTEND=noninteractive "$BUILD_NAME" bash -euc '
    mkdir -p /etc/initramfs-tools/conf.d
    echo MODULES=most > /etc/initramfs-tools/conf.d/gpuops-build.conf
    for try in 1 2 3; do apt-get update -qq && break; sleep 10; done
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null' _ linux-image-virtual initramfs-tools udev dbus \
    libpam-systemd systemd-timesyncd systemd-resolved openssh-server sudo python3 python3-apt kmod iproute2 procps \
    ca-certificates mokutil apparmor mdadm cryptsetup xfsprogs lynis openscap-scanner >"$LOG_DIR/install.log" 2>&1 \
    || { tail -n 40 "$LOG_DIR/install.log" >&2; fail "the image's packages"; }
  # The sources as Ubuntu's cloud images list them: the security pocket from security.ubuntu.com in a stanza of its own
  # (the test image serves it from the archive's host; Lynis 3.0.9's PKGS-7388 looks for security.ubuntu.com).
  printf '%s\n' 'Types: deb' 'URIs: http://archive.ubuntu.com/ubuntu' 'Suites: noble noble-updates noble-backports' \
    'Components: main restricted universe multiverse' 'Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg' '' \
    'Types: deb' 'URIs: http://security.ubuntu.com/ubuntu' 'Suites: noble-security' \
    'Components: main restricted universe multiverse' 'Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg' \
    | docker exec -i "$BUILD_NAME" tee /etc/apt/sources.list.d/ubuntu.sources >/dev/null
  docker exec "$BUILD_NAME" mkdir -p /opt/gpuops-wheels /usr/share/gpuops-test
  docker cp "$root/.cache/wheels/$PLATFORM/." "$BUILD_NAME:/opt/gpuops-wheels/"
  docker cp "$root/.cache/ssg/ssg-ubuntu2404-ds.xml" "$BUILD_NAME:/usr/share/gpuops-test/ssg-ubuntu2404-ds.xml"
  kver=$(docker exec "$BUILD_NAME" sh -c 'ls /lib/modules | sort -V | tail -n1')
  # The same inventory with the build container as the host (host_vars: extra vars would reach the tasks delegated
  # to the controller too).
  cp -r "$INVENTORY" "$WORK/bake-inventory"
  mkdir -p "$WORK/bake-inventory/host_vars"
  printf 'ansible_connection: community.docker.docker\nansible_host: %s\nansible_user: root\n' "$BUILD_NAME" \
    > "$WORK/bake-inventory/host_vars/gpuops-server.yml"
  local bake=(-i "$WORK/bake-inventory")
  (cd "$BUILD/run" && ansible-playbook "${bake[@]}" "$root/tests/vm/server-prepare.yml") >"$LOG_DIR/bake.log" 2>&1 \
    || { tail -n 60 "$LOG_DIR/bake.log" >&2; fail "server-prepare.yml"; }
  (cd "$BUILD/run" && ansible-playbook "${bake[@]}" -e '{"gpuops_skip_roles": ["storage", "backup", "spot"]}' \
     gpuops.gpu_server.site) >>"$LOG_DIR/bake.log" 2>&1 \
    || { tail -n 80 "$LOG_DIR/bake.log" >&2; fail "the bake (site.yml in the build container)"; }
  say "baked: $(grep -E '^gpuops-server +:' "$LOG_DIR/bake.log" | tail -n1)"

  mkdir -p "$rootfs"
  docker stop -t 10 "$BUILD_NAME" >/dev/null
  docker export "$BUILD_NAME" | tar -C "$rootfs" --numeric-owner -xpf -
  docker rm -f -v "$BUILD_NAME" >/dev/null
  uuid=$(cat /proc/sys/kernel/random/uuid)
  vm_rootfs "$rootfs" gpuops-server "$uuid" "$KEY.pub"
  # vm_rootfs masks apt's timers for the role scenarios; this server is what a user gets, where hardening enables them.
  rm -f "$rootfs/etc/systemd/system/apt-daily.timer" "$rootfs/etc/systemd/system/apt-daily-upgrade.timer"
  echo MODULES=dep > "$rootfs/etc/initramfs-tools/conf.d/gpuops-build.conf"
  [[ -f "$rootfs/boot/vmlinuz-$kver" && -f "$rootfs/boot/initrd.img-$kver" ]] || fail "no kernel or initrd for $kver"
  # grub.cfg on the root file system, where Ubuntu's grub keeps it and where a kernel upgrade's /boot/vmlinuz links
  # point; the ESP's grub.cfg only finds it (as Ubuntu's does).
  mkdir -p "$rootfs/boot/grub"
  cat > "$rootfs/boot/grub/grub.cfg" <<CFG
set timeout=0
set default=0
menuentry "Ubuntu 24.04 (gpuops test server)" {
  search --no-floppy --fs-uuid --set=root $uuid
  linux /boot/vmlinuz root=UUID=$uuid ro console=ttyS0,115200n8
  initrd /boot/initrd.img
}
CFG
  mkdir -p "$WORK/esp"
  cp "$efi/usr/lib/shim/shimx64.efi.signed.latest" "$WORK/esp/BOOTX64.EFI"
  cp "$efi/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" "$WORK/esp/grubx64.efi"
  cp "$efi/usr/lib/shim/mmx64.efi" "$WORK/esp/mmx64.efi"
  # shellcheck disable=SC2016  # grub's variables
  printf 'search --no-floppy --fs-uuid --set=root %s\nset prefix=($root)/boot/grub\nconfigfile $prefix/grub.cfg\n' \
    "$uuid" > "$WORK/esp/grub.cfg"
  vm_efi_disk "$WORK/disk.qcow2" "$rootfs" "$uuid" "$ROOT_MIB" "$WORK/esp" ubuntu "$BASE_IMAGE" "$LOG_DIR/disk.log"
  rm -rf "$rootfs"
  # The firmware: Debian 13's OVMF, its Secure Boot code and a variable store with Microsoft's keys, Secure Boot on.
  docker run --rm -v "$WORK:/out" "$QEMU_IMAGE" cp /usr/share/OVMF/OVMF_CODE_4M.secboot.fd \
    /usr/share/OVMF/OVMF_VARS_4M.ms.fd /out/
  virt-fw-vars -i "$WORK/OVMF_VARS_4M.ms.fd" -o "$WORK/vars.fd" --secure-boot >"$LOG_DIR/vars.log" 2>&1
  mv -f "$WORK/disk.qcow2" "$OUT_DIR/disk.qcow2"
  mv -f "$WORK/OVMF_CODE_4M.secboot.fd" "$OUT_DIR/code.fd"
  mv -f "$WORK/vars.fd" "$OUT_DIR/vars.fd"
  echo "$kver" > "$OUT_DIR/kernel"
  echo "$RECIPE" > "$OUT_DIR/recipe"
  say "built $OUT_DIR/disk.qcow2 ($(du -m "$OUT_DIR/disk.qcow2" | cut -f1) MB, kernel $kver)"
}

[[ -f "$root/.cache/wheels/$PLATFORM/SHA256SUMS" || -n "$(ls "$root/.cache/wheels/$PLATFORM" 2>/dev/null)" ]] \
  || fail "no wheels in .cache/wheels/$PLATFORM (make wheels)"
bash "$root/scripts/ssg-content.sh" "$root/.cache/ssg" >/dev/null
qemu_image
# shellcheck disable=SC2154  # image_id: set by vm_start (tests/vm/lib.sh)
RECIPE=$( { declare -f build_image vm_rootfs vm_efi_disk; echo "$image_id $ROOT_MIB";
            docker image inspect -f '{{.Id}}' "$QEMU_IMAGE"; cat "$KEY.pub";
            cat "$root/tests/vm/server-prepare.yml"; find "$INVENTORY" -type f | sort | xargs cat;
            (cd "$root" && find galaxy.yml meta playbooks roles plugins -type f | sort | xargs sha256sum);
            ls "$root/.cache/wheels/$PLATFORM"; } | sha256sum | cut -c1-12)
if [[ "$(cat "$OUT_DIR/recipe" 2>/dev/null)" == "$RECIPE" && -f "$OUT_DIR/disk.qcow2" ]]; then
  say "server image up to date (recipe $RECIPE)"
else
  build_image
fi
flock -u 9
stage_done image

# ---- 3. boot ---------------------------------------------------------------------------------------------------
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
echo "$PORT" > "$WORK/port"
# SSH, JupyterLab and Prometheus through QEMU's forwarded ports on the controller's loopback.
GPUOPS_SERVER_JUPYTER_PORT=$(free_port) GPUOPS_SERVER_PROMETHEUS_PORT=$(free_port)
export GPUOPS_SERVER_SSH_PORT="$PORT" GPUOPS_SERVER_JUPYTER_PORT GPUOPS_SERVER_PROMETHEUS_PORT
qemu-img create -q -f qcow2 -F qcow2 -b "$OUT_DIR/disk.qcow2" "$WORK/root.qcow2"
cp "$OUT_DIR/vars.fd" "$WORK/vars.fd"
for n in 0 1; do truncate -s 2G "$WORK/nvme$n.img"; done
docker rm -f "$VM_NAME" >/dev/null 2>&1 || true
# The serial console's log sits in LOG_DIR; the container's own network is the host's (the forwarded port on its
# loopback, 10.0.2.2 in the guest is the host's loopback).
docker run -d --name "$VM_NAME" --network host -v "$WORK:$WORK" -v "$OUT_DIR:$OUT_DIR:ro" -v "$LOG_DIR:$LOG_DIR" \
  "$QEMU_IMAGE" qemu-system-x86_64 -machine q35,smm=on -accel tcg,thread=multi,tb-size=256 -smp 2 -m 4096 \
  -global driver=cfi.pflash01,property=secure,value=on -global ICH9-LPC.disable_s3=1 \
  -drive if=pflash,format=raw,unit=0,readonly=on,file="$OUT_DIR/code.fd" \
  -drive if=pflash,format=raw,unit=1,file="$WORK/vars.fd" \
  -drive file="$WORK/root.qcow2",if=none,id=root,format=qcow2,cache=unsafe -device virtio-blk-pci,drive=root,bootindex=0 \
  -drive file="$WORK/nvme0.img",if=none,id=nv0,format=raw,cache=unsafe -device nvme,serial=NVME0,drive=nv0 \
  -drive file="$WORK/nvme1.img",if=none,id=nv1,format=raw,cache=unsafe -device nvme,serial=NVME1,drive=nv1 \
  -netdev user,id=net0,hostfwd=tcp:127.0.0.1:"$PORT"-:22,hostfwd=tcp:127.0.0.1:"$GPUOPS_SERVER_JUPYTER_PORT"-:8888,hostfwd=tcp:127.0.0.1:"$GPUOPS_SERVER_PROMETHEUS_PORT"-:9090 \
  -device virtio-net-pci,netdev=net0,romfile= \
  -object rng-random,id=rng0,filename=/dev/urandom -device virtio-rng-pci,rng=rng0 \
  -display none -serial file:"$LOG_DIR/serial.log" >/dev/null
SSH=(ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10 -o ServerAliveInterval=5
     -o ServerAliveCountMax=3 -o LogLevel=ERROR -o IdentitiesOnly=yes -i "$KEY" -p "$PORT" gpuadmin@127.0.0.1)
waited=0
until "${SSH[@]}" true 2>/dev/null; do
  sleep 10; waited=$((waited + 10))
  [[ "$(docker inspect -f '{{.State.Running}}' "$VM_NAME")" == true ]] || { docker logs "$VM_NAME" >&2; fail "QEMU exited"; }
  ((waited < BOOT_TIMEOUT)) || { tail -n 30 "$LOG_DIR/serial.log" >&2; fail "no SSH after $BOOT_TIMEOUT s"; }
done
secure_boot=$("${SSH[@]}" mokutil --sb-state 2>&1 || true)
say "SSH after $waited s (port $PORT); kernel $("${SSH[@]}" uname -r); $secure_boot"
[[ $secure_boot == *"SecureBoot enabled"* ]] || fail "Secure Boot is not on in the guest: $secure_boot"
stage_done boot

playbook() {  # playbook LOG ARGS...: ansible-playbook from the run folder, its recap line printed
  local log=$1
  shift
  (cd "$BUILD/run" && ansible-playbook -i "$INVENTORY" "$@") >"$log" 2>&1 || { tail -n 80 "$log" >&2; return 1; }
  grep -E '^gpuops-server +:' "$log" | tail -n1
}

# ---- 4. site.yml over SSH --------------------------------------------------------------------------------------
if [[ " $STAGES " == *" site "* ]]; then
  if [[ ! -f "$root/.cache/moto-py311/moto/server.py" ]]; then
    PYTHON=python3 bash "$root/tests/fixtures/moto/build.sh" "$root/.cache/moto-py311" >"$LOG_DIR/moto-build.log" 2>&1 \
      || { tail -n 20 "$LOG_DIR/moto-build.log" >&2; fail "moto's packages"; }
  fi
  PYTHONPATH="$root/.cache/moto-py311" python3 -m moto.server -H 127.0.0.1 -p "$S3_PORT" >"$LOG_DIR/moto.log" 2>&1 &
  MOTO_PID=$!
  for _ in $(seq 30); do curl -fs -o /dev/null "http://127.0.0.1:$S3_PORT/" && break; sleep 1; done
  # Another program on the port would answer instead (seen: a kept guest's moto).
  kill -0 "$MOTO_PID" 2>/dev/null || { cat "$LOG_DIR/moto.log" >&2; fail "moto did not start on port $S3_PORT"; }
  PYTHONPATH="$root/.cache/moto-py311" python3 -c 'import boto3, sys
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1", aws_access_key_id="gpuops-test",
                  aws_secret_access_key="gpuops-test-secret")
for bucket in ("gpuops-backups", "gpuops-checkpoints"):
    s3.create_bucket(Bucket=bucket)' "http://127.0.0.1:$S3_PORT"
  say "S3 (moto) on 127.0.0.1:$S3_PORT; site.yml over SSH ..."
  recap=$(playbook "$LOG_DIR/site.log" gpuops.gpu_server.site) || fail "site.yml (log: $LOG_DIR/site.log)"
  say "site: $recap"
  stage_done site
fi

# ---- 5. the re-run ---------------------------------------------------------------------------------------------
if [[ " $STAGES " == *" rerun "* ]]; then
  recap=$(playbook "$LOG_DIR/rerun.log" gpuops.gpu_server.site) || fail "the re-run (log: $LOG_DIR/rerun.log)"
  say "re-run: $recap"
  [[ $recap =~ changed=0[[:space:]] && $recap =~ failed=0[[:space:]] ]] \
    || { grep -B2 -E '^changed:' "$LOG_DIR/rerun.log" | head -n 40 >&2; fail "the re-run changed something"; }
  stage_done rerun
fi

# ---- 6. the reboot and what came back ----------------------------------------------------------------------------
if [[ " $STAGES " == *" reboot "* ]]; then
  boot_before=$("${SSH[@]}" cat /proc/sys/kernel/random/boot_id)
  say "boot ID before: $boot_before; rebooting ..."
  recap=$(ANSIBLE_CONFIG="$BUILD/run/ansible-plain.cfg" playbook "$LOG_DIR/reboot.log" "$root/tests/vm/server-check.yml" \
          -e gpuops_server_boot_before="$boot_before") || fail "after the reboot (log: $LOG_DIR/reboot.log)"
  boot_after=$("${SSH[@]}" cat /proc/sys/kernel/random/boot_id)
  say "boot ID after: $boot_after"
  [[ $boot_before != "$boot_after" ]] || fail "the boot ID did not change"
  sed -n '/TASK \[Show what came back/,/^$/p' "$LOG_DIR/reboot.log"
  say "after the reboot: $recap"
  stage_done reboot
fi

# ---- 7. Lynis and OpenSCAP in the guest --------------------------------------------------------------------------
if [[ " $STAGES " == *" lynis "* ]]; then
  "${SSH[@]}" sudo lynis audit system --quick --no-colors >"$LOG_DIR/lynis.log" 2>&1 || true
  "${SSH[@]}" sudo cat /var/log/lynis-report.dat >"$LOG_DIR/lynis-report.dat"
  index=$(sed -n 's/^hardening_index=//p' "$LOG_DIR/lynis-report.dat")
  say "Lynis $(sed -n 's/^lynis_version=//p' "$LOG_DIR/lynis-report.dat"): hardening index ${index:-?} (at least $MIN_LYNIS);" \
      "suggestions: $(grep -c '^suggestion\[\]=' "$LOG_DIR/lynis-report.dat" || true)"
  stage_done lynis
  [[ -n $index ]] && ((index >= MIN_LYNIS)) || LYNIS_SHORT="Lynis hardening index ${index:-?} < $MIN_LYNIS"
fi
if [[ " $STAGES " == *" cis "* ]]; then
  profile=xccdf_org.ssgproject.content_profile_cis_level1_server
  "${SSH[@]}" sudo oscap xccdf eval --profile "$profile" --results /root/oscap-results.xml \
    /usr/share/gpuops-test/ssg-ubuntu2404-ds.xml >"$LOG_DIR/oscap.log" 2>&1 || true
  "${SSH[@]}" sudo cat /root/oscap-results.xml >"$LOG_DIR/oscap-results.xml"
  python3 "$root/tests/support/scap_count.py" "$LOG_DIR/oscap-results.xml" > "$LOG_DIR/oscap-count.json"
  read -r cis applicable < <(python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))
print(c["percent"], c["applicable"]); print("\n".join(c["failed"]), file=open(sys.argv[2], "w"))' \
    "$LOG_DIR/oscap-count.json" "$LOG_DIR/oscap-failed.txt")
  say "CIS Level 1 Server (ssg-ubuntu2404-ds.xml): $cis % of $applicable applicable rules pass (at least $MIN_CIS %);" \
      "$(wc -l < "$LOG_DIR/oscap-failed.txt") fail: $LOG_DIR/oscap-failed.txt"
  stage_done cis
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$cis" "$MIN_CIS" \
    || CIS_SHORT="CIS $cis % < $MIN_CIS %"
fi
sort -k2 -n -r "$LOG_DIR/stages" | awk '{printf "  %-10s %5d s\n", $1, $2}'
[[ -z "${LYNIS_SHORT:-}${CIS_SHORT:-}" ]] || fail "${LYNIS_SHORT:-} ${CIS_SHORT:-}"
say "the server on a booted kernel: every stage passed ($STAGES)"
