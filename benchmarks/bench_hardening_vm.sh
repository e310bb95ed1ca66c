#!/usr/bin/env bash
# Benchmark of the hardening role on a real kernel: a throw-away QEMU guest (TCG) from tests/vm/build.sh's image.
# In a container (benchmarks/bench_hardening.sh) the kernel is the host's, so the role's sysctls (Lynis KRNL-6000),
# module blacklists and auditd (ACCT-9628) cannot take effect; here they do, after a reboot as on a real server.
#   - Lynis hardening index (`lynis audit system --quick`, the guest's distribution package) before the role and
#     after the role and a reboot of the guest (sysctl.d, modprobe.d, auditd and the firewall as they come up at boot),
#   - the Lynis suggestions left, and every test that gave fewer than its maximum points (benchmarks/_lynis.sh),
#   - ssh-audit [fail]/[warn] counts against the hardened sshd (ssh-audit 3.9.0 from .venv, pinned in
#     requirements-dev.txt, run from the host against the guest's forwarded port),
#   - wall time of the first run and of an idempotent re-run (which must report changed=0), of Lynis, and of the
#     guest's boots (QEMU start to SSH, reboot to SSH).
# Ansible connects over SSH as a real deployment does (admin user benchadmin with a key and passwordless sudo,
# ControlPersist, pipelining); after the role root may no longer log in, so everything after it goes through
# benchadmin and sudo. The guest's apt goes through the host's apt-cacher-ng (10.0.2.2:3149) when it answers.
# TCG is slow (fork+exec ~25x slower than on the host): on 2 shared cores one Lynis run took 40 minutes and the
# role's package task alone over 25 (aide-common's postinst), so a whole run takes hours. One guest at a time.
# Usage: benchmarks/bench_hardening_vm.sh [PLATFORM]   (debian12 (default) or ubuntu2404; from the repository root;
#        needs make venv, the Docker test image of PLATFORM (tests/images/build.sh), dockerd, qemu-system-x86)
# Env:   BENCH_VM_CPUS (default 2), BENCH_VM_MEMORY_MB (default 2048), BENCH_VM_TCG_THREAD (multi|single, see below),
#        BENCH_KEEP=1 keeps the guest running and its folder (printed),
#        BENCH_EXTRA_VARS: extra variables for the role as JSON (as in bench_hardening.sh),
#        BENCH_LYNIS_BEFORE_REBOOT=1 adds a Lynis run between the role and the reboot (several minutes on TCG),
#        BENCH_LYNIS_SKIP_TESTS: Lynis tests skipped in every run (/etc/lynis/custom.prf), default
#        "BOOT-5264 CRYP-7902": they give no hardening points but take minutes on TCG; "" runs them all.
# Numbers depend on the machine and its load; they are printed, never asserted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PLATFORM="${1:-debian12}"
VM_CACHE="${GPUOPS_VM_DIR:-$ROOT/.cache/vm}"
# TCG threading: QEMU 7.2 (Debian 12's) has a multi-threaded TCG bug, fixed in QEMU 8.1 ("accel/tcg: Always lock
# pages before translation", Launchpad #2051965), that corrupts guest memory: Ubuntu 24.04's 6.8 kernel died of a
# general protection fault in its slab allocator within minutes. Its guest runs single-threaded TCG (both vCPUs on
# one host thread); Debian 12's 6.1 kernel has been stable with thread=multi (as in molecule/storage).
case "$PLATFORM" in
  debian12) IMAGE_DIR="$VM_CACHE"; TCG_THREAD="${BENCH_VM_TCG_THREAD:-multi}" ;;
  ubuntu2404) IMAGE_DIR="$VM_CACHE/$PLATFORM"; TCG_THREAD="${BENCH_VM_TCG_THREAD:-single}" ;;
  *) echo "unknown platform '$PLATFORM': debian12 or ubuntu2404 (tests/vm/build.sh)" >&2; exit 2 ;;
esac
VM_KEY="$VM_CACHE/id_ed25519"
CPUS="${BENCH_VM_CPUS:-2}"
MEMORY_MB="${BENCH_VM_MEMORY_MB:-2048}"
EXTRA_VARS="${BENCH_EXTRA_VARS:-}"
[ -n "$EXTRA_VARS" ] || EXTRA_VARS='{}'
LYNIS_SKIP_TESTS="${BENCH_LYNIS_SKIP_TESTS-BOOT-5264 CRYP-7902}"
SSH_TIMEOUT=900
WORK="$(mktemp -d /tmp/gpuops-bench-vm.XXXXXX)"
export PATH="$ROOT/.venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/.cache/collections"
export ANSIBLE_CONFIG="$WORK/ansible.cfg"
export ANSIBLE_FORCE_COLOR=0

cleanup() {
  local rc=$?
  if [ "${BENCH_KEEP:-0}" = 1 ]; then
    echo "kept: $WORK (QEMU pid $(cat "$WORK/qemu.pid" 2>/dev/null), SSH port ${PORT:-?})" >&2
    return
  fi
  if [ -f "$WORK/qemu.pid" ]; then kill "$(cat "$WORK/qemu.pid")" 2>/dev/null || true; fi
  if [ "$rc" != 0 ]; then
    # Keep the logs (not the disk) of a failed run.
    rm -f "$WORK/root.qcow2"
    echo "failed (rc $rc): logs in $WORK (console.log: the guest's serial console)" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
# A signal exits through cleanup with its status (the logs are then kept).
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }

echo "== VM image for $PLATFORM"
bash "$ROOT/tests/vm/build.sh" "$PLATFORM"

# A free port on the host's loopback for the guest's sshd.
PORT="$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")"
SSH_OPTS=(-o BatchMode=yes -o IdentitiesOnly=yes -o ConnectTimeout=10 -o StrictHostKeyChecking=no
          -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ServerAliveInterval=5 -o ServerAliveCountMax=6
          -p "$PORT")
as_root() { ssh "${SSH_OPTS[@]}" -i "$VM_KEY" root@127.0.0.1 "$1"; }
as_admin() { ssh "${SSH_OPTS[@]}" -i "$WORK/admin_ed25519" benchadmin@127.0.0.1 "$1"; }

# wait_ssh FUNCTION [BOOT_ID]: until FUNCTION answers (with another boot id than BOOT_ID when given).
wait_ssh() {
  local deadline=$(( $(date +%s) + SSH_TIMEOUT )) id
  while :; do
    if id="$("$1" 'cat /proc/sys/kernel/random/boot_id' 2>/dev/null)" && [ -n "$id" ] && [ "$id" != "${2:-}" ]; then
      return 0
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "SSH did not answer within ${SSH_TIMEOUT}s; the end of the serial console:" >&2
      tail -n 40 "$WORK/console.log" >&2
      exit 1
    fi
    sleep 3
  done
}

echo "== fresh guest from $IMAGE_DIR/$PLATFORM.qcow2 (TCG thread=$TCG_THREAD, $CPUS vCPUs, $MEMORY_MB MB, SSH on 127.0.0.1:$PORT)"
qemu-img create -q -f qcow2 -F qcow2 -b "$IMAGE_DIR/$PLATFORM.qcow2" "$WORK/root.qcow2"
boot_start="$(now)"
qemu-system-x86_64 -name "gpuops-bench-$PLATFORM" -machine q35 -accel "tcg,thread=$TCG_THREAD,tb-size=256" \
  -smp "$CPUS" -m "$MEMORY_MB" -display none -serial "file:$WORK/console.log" -daemonize -pidfile "$WORK/qemu.pid" \
  -kernel "$IMAGE_DIR/vmlinuz" -initrd "$IMAGE_DIR/initrd.img" \
  -append "root=UUID=$(cat "$IMAGE_DIR/root-uuid") rw console=ttyS0 net.ifnames=0" \
  -drive "file=$WORK/root.qcow2,if=virtio,format=qcow2,cache=unsafe" \
  -netdev "user,id=net0,hostfwd=tcp:127.0.0.1:$PORT-:22" -device virtio-net-pci,netdev=net0
wait_ssh as_root
boot="$(elapsed "$boot_start")"
echo "QEMU start to SSH: ${boot}s ($(as_root 'uname -r'))"

# The admin Ansible logs in as (and the lockout guard protects): a key and passwordless sudo, as a cloud image has.
ssh-keygen -q -t ed25519 -N "" -f "$WORK/admin_ed25519"
install_start="$(now)"
as_root 'for i in 1 2 3 4 5; do apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lynis sudo openssh-server >/dev/null && break; sleep 5; done
         command -v lynis >/dev/null
         useradd -m -s /bin/bash -G sudo benchadmin && install -d -m 0700 -o benchadmin -g benchadmin /home/benchadmin/.ssh
         echo "benchadmin ALL=(ALL) NOPASSWD: ALL" > /etc/sudoers.d/benchadmin && chmod 0440 /etc/sudoers.d/benchadmin'
as_root 'cat > /home/benchadmin/.ssh/authorized_keys
         chown benchadmin: /home/benchadmin/.ssh/authorized_keys && chmod 0600 /home/benchadmin/.ssh/authorized_keys' \
  < "$WORK/admin_ed25519.pub"
echo "apt-get install lynis sudo openssh-server, admin user: $(elapsed "$install_start")s"
# Lynis tests that give no hardening points (so the index does not change) but take minutes under TCG:
# BOOT-5264 (systemd-analyze security, ~1 min) and CRYP-7902 (openssl on each of ~140 CA certificates, ~5 min).
if [ -n "$LYNIS_SKIP_TESTS" ]; then
  # shellcheck disable=SC2086  # one word per test
  printf 'skip-test=%s\n' $LYNIS_SKIP_TESTS | as_root 'cat > /etc/lynis/custom.prf'
fi

# shellcheck source=benchmarks/_lynis.sh
. "$ROOT/benchmarks/_lynis.sh"
# lynis_run NAME: a Lynis run through benchadmin's sudo; its log and report land in $WORK/NAME.log, NAME-report.dat.
lynis_run() {
  local start
  start="$(now)"
  as_admin 'sudo lynis audit system --quick --no-colors >/tmp/lynis.out 2>&1 || true'
  elapsed "$start" > "$WORK/$1.seconds"
  as_admin 'sudo cat /var/log/lynis.log' > "$WORK/$1.log"
  as_admin 'sudo cat /var/log/lynis-report.dat' > "$WORK/$1-report.dat"
}
lynis_index() { sed -n 's/^hardening_index=//p' "$WORK/$1-report.dat"; }

lynis_run lynis-before
before="$(lynis_index lynis-before)"
before_points="$(lynis_points "$WORK/lynis-before.log")"
echo "Lynis hardening index before: $before ($before_points points, Lynis ran $(cat "$WORK/lynis-before.seconds")s)"

# Slow guest: long connection and command timeouts; ServerAlive so that a half-open connection is noticed.
cat > "$WORK/ansible.cfg" <<CFG
[defaults]
stdout_callback = ansible.builtin.default
callbacks_enabled = ansible.posix.profile_tasks
interpreter_python = /usr/bin/python3
gathering = implicit
host_key_checking = False
timeout = 60
[ssh_connection]
pipelining = True
ssh_args = -o ControlMaster=auto -o ControlPersist=600s -o UserKnownHostsFile=/dev/null -o ServerAliveInterval=5 -o ServerAliveCountMax=6
control_path_dir = $WORK/cp
CFG
# hardening_admin_user is left at its default: the user Ansible connects as (benchadmin).
printf '%s ansible_host=127.0.0.1 ansible_port=%s ansible_user=benchadmin ansible_ssh_private_key_file=%s\n' \
  "gpuops-bench-$PLATFORM" "$PORT" "$WORK/admin_ed25519" > "$WORK/inventory"
hardening_play "$WORK/play.yml"

first="$(run_role 1)"
first_changed="$(grep -Eo 'changed=[0-9]+' "$WORK/run-1.log" | tail -1)"
echo "First run: ${first}s (${first_changed}); slowest tasks:"
sed -n '/TASKS RECAP/,$p' "$WORK/run-1.log" | sed -n '4,11p'
second="$(run_role 2)"
second_changed="$(grep -Eo 'changed=[0-9]+' "$WORK/run-2.log" | tail -1)"
echo "Idempotent re-run: ${second}s (${second_changed}); slowest tasks:"
sed -n '/TASKS RECAP/,$p' "$WORK/run-2.log" | sed -n '4,11p'
[ "$second_changed" = "changed=0" ] || echo "WARNING: the re-run was not idempotent (${second_changed})" >&2

after_role="not measured"
if [ "${BENCH_LYNIS_BEFORE_REBOOT:-0}" = 1 ]; then
  lynis_run lynis-after-role
  after_role="$(lynis_index lynis-after-role) ($(lynis_points "$WORK/lynis-after-role.log"))"
  echo "Lynis hardening index after the role, before the reboot: $after_role"
fi

# A reboot, as a real server gets: sysctl.d, modprobe.d, auditd's rules and the firewall as they come up at boot.
echo "== reboot"
old_boot_id="$(as_admin 'cat /proc/sys/kernel/random/boot_id')"
reboot_start="$(now)"
as_admin 'sudo systemctl reboot' || true
wait_ssh as_admin "$old_boot_id"
reboot="$(elapsed "$reboot_start")"
echo "Reboot to SSH: ${reboot}s"
as_admin 'timeout 600 systemctl is-system-running --wait; systemctl --failed --no-legend' | sed 's/^/  system: /' || true

lynis_run lynis-after
after="$(lynis_index lynis-after)"
after_points="$(lynis_points "$WORK/lynis-after.log")"
lynis_seconds="$(cat "$WORK/lynis-after.seconds")"
echo "Lynis hardening index after the role and a reboot: $after ($after_points points, Lynis ran ${lynis_seconds}s)"
lynis_summary "$WORK/lynis-after.log" "$WORK/lynis-after-report.dat"

audit_version="$(ssh_audit_version)"
read -r fails warns <<<"$(ssh_audit_counts "$WORK/ssh-audit.out" -p "$PORT" 127.0.0.1)"
echo "ssh-audit $audit_version: ${fails} [fail], ${warns} [warn]"
grep -E "\[(fail|warn)\]" "$WORK/ssh-audit.out" || true

echo
echo "| metric ($PLATFORM, QEMU TCG guest, $(as_admin 'uname -r')) | value | target |"
echo "|---|---|---|"
echo "| Lynis hardening index before | $before ($before_points) | |"
echo "| Lynis hardening index after the role, before the reboot | $after_role | |"
echo "| Lynis hardening index after the role and a reboot | $after ($after_points) | >= 85 |"
echo "| ssh-audit $audit_version [fail] | $fails | 0 |"
echo "| ssh-audit $audit_version [warn] | $warns | 0 with hardening_ssh_post_quantum_only |"
echo "| first run (s), $first_changed | $first | |"
echo "| idempotent re-run (s), $second_changed | $second | |"
echo "| Lynis --quick run (s), after | $lynis_seconds | |"
echo "| QEMU start to SSH (s) | $boot | |"
echo "| reboot to SSH (s) | $reboot | |"
[ "$second_changed" = "changed=0" ] || { echo "the re-run was not idempotent" >&2; exit 1; }
