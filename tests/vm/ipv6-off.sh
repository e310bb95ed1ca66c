#!/usr/bin/env bash
# Issue 28, "IPv6 off": the hardening role converges on a kernel booted with ipv6.disable=1 and SSH answers on IPv4.
# Boots a throw-away overlay of tests/vm/build.sh's guest image (QEMU TCG) with ipv6.disable=1 on the kernel command
# line, then over real SSH (127.0.0.1 and the forwarded port, the admin gpuadmin with a key and passwordless sudo, as
# molecule/hardening/prepare.yml sets up in containers) runs tests/vm/ipv6-off.yml (the hardening role) with
# --tags hardening_preflight,hardening_sshd, and asserts:
#   - in the guest: /proc/net/if_inet6 is absent, /proc/cmdline holds ipv6.disable=1 (and, on Ubuntu, ssh.socket is
#     enabled: sshd is socket-activated, which is what the role's ssh.socket drop-in is about);
#   - the run succeeded and the role's own proof ("Prove a new TCP connection and a key login to the SSH port") ran ok;
#   - on Ubuntu, /etc/systemd/system/ssh.socket.d/zz-gpuops-listen.conf lists ListenStream=0.0.0.0:22 only (no [::]);
#   - `ss -Htln` shows 0.0.0.0:22 and no IPv6 listener;
#   - a new key login as gpuadmin over IPv4 from this host through the forwarded port works;
#   - a second run reports changed=0;
#   - negative control: with hardening_ssh_listen_addresses ["::"] the role refuses ("has no IPv6"), changes nothing,
#     and sshd still answers.
# Prints the timings (QEMU start to SSH, role run, re-run, refused run) and removes the guest on exit, also on failure
# (the logs of a failed run are kept and named).
# Usage: tests/vm/ipv6-off.sh [PLATFORM]   (ubuntu2404 (default) or debian12; from anywhere; needs make venv, the Docker
#        test image of PLATFORM (tests/images/build.sh PLATFORM), dockerd, qemu-system-x86, qemu-utils). `make test-vm-ipv6`.
# Env:   GPUOPS_VM_CPUS (default 2), GPUOPS_VM_MEMORY_MB (default 2048), GPUOPS_VM_TCG_THREAD (multi|single; default
#        single for ubuntu2404, multi for debian12, see below), GPUOPS_VM_SSH_TIMEOUT (default 900 s),
#        GPUOPS_IPV6_OFF_KEEP=1 keeps the guest running and the work folder (printed).
# One guest at a time: on 2 shared cores TCG is slow (a task takes seconds, the boot minutes).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PLATFORM="${1:-ubuntu2404}"
VM_CACHE="${GPUOPS_VM_DIR:-$ROOT/.cache/vm}"
# QEMU 7.2 (Debian 12's) has a multi-threaded TCG bug (fixed in 8.1, Launchpad #2051965) that killed Ubuntu 24.04's
# 6.8 kernel within minutes under thread=multi (tests/vm/README.md): that guest runs thread=single.
case "$PLATFORM" in
  ubuntu2404) IMAGE_DIR="$VM_CACHE/$PLATFORM"; TCG_THREAD="${GPUOPS_VM_TCG_THREAD:-single}" ;;
  debian12) IMAGE_DIR="$VM_CACHE"; TCG_THREAD="${GPUOPS_VM_TCG_THREAD:-multi}" ;;
  *) echo "unknown platform '$PLATFORM': ubuntu2404 or debian12 (tests/vm/build.sh)" >&2; exit 2 ;;
esac
VM_KEY="$VM_CACHE/id_ed25519"
CPUS="${GPUOPS_VM_CPUS:-2}"
MEMORY_MB="${GPUOPS_VM_MEMORY_MB:-2048}"
SSH_TIMEOUT="${GPUOPS_VM_SSH_TIMEOUT:-900}"
ADMIN=gpuadmin
PLAY="$ROOT/tests/vm/ipv6-off.yml"
TAGS=hardening_preflight,hardening_sshd
DROPIN=/etc/systemd/system/ssh.socket.d/zz-gpuops-listen.conf
PROOF_TASK="Prove a new TCP connection and a key login to the SSH port"
WORK="$(mktemp -d /tmp/gpuops-ipv6-off.XXXXXX)"
export PATH="$ROOT/.venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/.cache/collections"
export ANSIBLE_CONFIG="$WORK/ansible.cfg"
export ANSIBLE_FORCE_COLOR=0

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }
declare -A TIMES=()
TIME_ORDER=(boot run-1 run-2 refused)
declare -A TIME_LABEL=([boot]="QEMU start to SSH" [run-1]="role run (--tags $TAGS)" [run-2]="re-run (changed=0)"
                       [refused]="refused run (hardening_ssh_listen_addresses [\"::\"])")

print_times() {
  local step
  echo "== timings ($PLATFORM, TCG thread=$TCG_THREAD, $CPUS vCPUs, $MEMORY_MB MB)"
  for step in "${TIME_ORDER[@]}"; do
    printf '  %-62s %s\n' "${TIME_LABEL[$step]}" "${TIMES[$step]:-not reached}${TIMES[$step]:+ s}"
  done
}

cleanup() {
  local rc=$?
  print_times
  if [ "${GPUOPS_IPV6_OFF_KEEP:-0}" = 1 ]; then
    echo "kept: $WORK (QEMU pid $(cat "$WORK/qemu.pid" 2>/dev/null), SSH port ${PORT:-?}, key $WORK/${ADMIN}_ed25519)" >&2
    return
  fi
  if [ -f "$WORK/qemu.pid" ]; then
    local pid
    pid="$(cat "$WORK/qemu.pid")"
    kill "$pid" 2>/dev/null || true
    # Wait for QEMU to let go of the overlay before removing it.
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$WORK/root.qcow2"
  if [ "$rc" != 0 ]; then
    echo "FAILED (rc $rc): logs in $WORK (console.log: the guest's serial console; run-N.log: the Ansible runs)" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }
indent() { local line; while IFS= read -r line; do printf '%s%s\n' "$1" "$line"; done; }

[ -x "$ROOT/.venv/bin/ansible-playbook" ] || fail "$ROOT/.venv/bin/ansible-playbook is missing: run make venv"
for tool in qemu-system-x86_64 qemu-img ssh ssh-keygen; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup-host.sh installs qemu-system-x86)"
done
make -C "$ROOT" --no-print-directory -s collection-path

echo "== VM image for $PLATFORM"
bash "$ROOT/tests/vm/build.sh" "$PLATFORM"

# A free port on the host's loopback for the guest's sshd.
PORT="$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")"
# ControlMaster=no: every call below is a new TCP connection and a new login.
SSH_OPTS=(-o BatchMode=yes -o IdentitiesOnly=yes -o ConnectTimeout=10 -o StrictHostKeyChecking=no
          -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ServerAliveInterval=5 -o ServerAliveCountMax=6
          -o ControlMaster=no -o ControlPath=none -F /dev/null -p "$PORT")
as_root() { ssh "${SSH_OPTS[@]}" -i "$VM_KEY" root@127.0.0.1 "$1"; }
as_admin() { ssh "${SSH_OPTS[@]}" -i "$WORK/${ADMIN}_ed25519" "$ADMIN@127.0.0.1" "$1"; }
# What a new login runs in the guest (expanded there).
# shellcheck disable=SC2016
LOGIN_CMD='echo "login ok: $(id -un) on $(hostname), SSH_CONNECTION=$SSH_CONNECTION"'

wait_ssh() {
  local deadline=$(( $(date +%s) + SSH_TIMEOUT ))
  until as_root true 2>/dev/null; do
    kill -0 "$(cat "$WORK/qemu.pid")" 2>/dev/null || { tail -n 40 "$WORK/console.log" >&2; fail "QEMU exited"; }
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 40 "$WORK/console.log" >&2
      fail "SSH did not answer within ${SSH_TIMEOUT}s (the end of the serial console above)"
    fi
    sleep 3
  done
}

echo "== guest: overlay of $IMAGE_DIR/$PLATFORM.qcow2, ipv6.disable=1 (TCG thread=$TCG_THREAD, $CPUS vCPUs," \
  "$MEMORY_MB MB, SSH on 127.0.0.1:$PORT)"
qemu-img create -q -f qcow2 -F qcow2 -b "$IMAGE_DIR/$PLATFORM.qcow2" "$WORK/root.qcow2"
boot_start="$(now)"
qemu-system-x86_64 -name "gpuops-ipv6-off-$PLATFORM" -machine q35 -accel "tcg,thread=$TCG_THREAD,tb-size=256" \
  -smp "$CPUS" -m "$MEMORY_MB" -display none -serial "file:$WORK/console.log" -daemonize -pidfile "$WORK/qemu.pid" \
  -kernel "$IMAGE_DIR/vmlinuz" -initrd "$IMAGE_DIR/initrd.img" \
  -append "root=UUID=$(cat "$IMAGE_DIR/root-uuid") rw console=ttyS0 net.ifnames=0 ipv6.disable=1" \
  -drive "file=$WORK/root.qcow2,if=virtio,format=qcow2,cache=unsafe" \
  -netdev "user,id=net0,hostfwd=tcp:127.0.0.1:$PORT-:22" -device virtio-net-pci,netdev=net0
wait_ssh
TIMES[boot]="$(elapsed "$boot_start")"
echo "QEMU start to SSH: ${TIMES[boot]} s ($(as_root 'uname -r'))"

echo "== the guest's kernel has no IPv6"
cmdline="$(as_root 'cat /proc/cmdline')"
echo "  /proc/cmdline: $cmdline"
grep -qw 'ipv6.disable=1' <<<"$cmdline" || fail "/proc/cmdline lacks ipv6.disable=1"
as_root 'test ! -e /proc/net/if_inet6' || fail "/proc/net/if_inet6 exists in the guest"
pass "/proc/cmdline has ipv6.disable=1 and /proc/net/if_inet6 is absent"
if [ "$PLATFORM" = ubuntu2404 ]; then
  as_root 'test -L /etc/systemd/system/sockets.target.wants/ssh.socket && systemctl is-enabled ssh.socket >/dev/null' \
    || fail "ssh.socket is not enabled in the guest: sshd is not socket-activated, the ssh.socket drop-in goes untested"
  pass "sshd is socket-activated (ssh.socket enabled; Listen: $(as_root 'systemctl show ssh.socket -p Listen --value' | paste -sd' '))"
fi
echo "  listeners before the role: $(as_root 'ss -Htln' | awk '{print $4}' | paste -sd' ')"

echo "== admin user $ADMIN (a key, passwordless sudo)"
ssh-keygen -q -t ed25519 -N '' -C "$ADMIN@gpuops-ipv6-off" -f "$WORK/${ADMIN}_ed25519"
as_root "set -e
  useradd -m -s /bin/bash -G sudo $ADMIN
  install -d -m 0700 -o $ADMIN -g $ADMIN /home/$ADMIN/.ssh
  install -m 0600 -o $ADMIN -g $ADMIN /dev/stdin /home/$ADMIN/.ssh/authorized_keys
  echo '$ADMIN ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/$ADMIN && chmod 0440 /etc/sudoers.d/$ADMIN
  visudo -cq" < "$WORK/${ADMIN}_ed25519.pub"
[ "$(as_admin 'sudo -n id -un')" = root ] || fail "$ADMIN cannot sudo"

# Slow guest: long connection and command timeouts, ServerAlive so that a half-open connection is noticed.
cat > "$WORK/ansible.cfg" <<CFG
[defaults]
stdout_callback = ansible.builtin.default
callbacks_enabled = ansible.posix.profile_tasks
interpreter_python = /usr/bin/python3
host_key_checking = False
timeout = 60
[ssh_connection]
pipelining = True
ssh_args = -o ControlMaster=auto -o ControlPersist=600s -o UserKnownHostsFile=/dev/null -o ServerAliveInterval=5 -o ServerAliveCountMax=6
control_path_dir = $WORK/cp
CFG
printf '%s ansible_host=127.0.0.1 ansible_port=%s ansible_user=%s ansible_ssh_private_key_file=%s\n' \
  "gpuops-ipv6-off" "$PORT" "$ADMIN" "$WORK/${ADMIN}_ed25519" > "$WORK/inventory"

# run_role NAME [ARGS...]: one run of the play, its output in $WORK/NAME.log, its time in TIMES[NAME]; returns its rc.
run_role() {
  local name="$1" start rc=0
  shift
  start="$(now)"
  # stdin from /dev/null: ssh leaves the terminal's stdin non-blocking, which ansible-playbook refuses.
  ansible-playbook -v -i "$WORK/inventory" "$PLAY" --tags "$TAGS" "$@" < /dev/null > "$WORK/$name.log" 2>&1 || rc=$?
  TIMES[$name]="$(elapsed "$start")"
  echo "  $name: rc $rc in ${TIMES[$name]} s, $(grep -E '^gpuops-ipv6-off +:' "$WORK/$name.log" | tail -n1 | tr -s ' ')"
  return "$rc"
}
recap() { grep -Eo "$2=[0-9]+" <(grep -E '^gpuops-ipv6-off +:' "$WORK/$1.log" | tail -n1); }

echo "== hardening role, first run"
run_role run-1 || { tail -n 60 "$WORK/run-1.log" >&2; fail "the first run failed"; }
[ "$(recap run-1 failed)" = failed=0 ] || fail "the first run has failed tasks"
# The result line right after the proof task's header: "ok: [gpuops-ipv6-off] => {... "stdout": "{\"answered\"...".
proof="$(awk -v t="TASK [gpuops.gpu_server.hardening : $PROOF_TASK]" \
  'index($0, t) == 1 {found = 1; next} found && /^(ok|changed|failed|fatal|skipping):/ {print; exit}' "$WORK/run-1.log")"
[[ "$proof" == "ok: "* ]] || fail "the role's proof task did not run ok: ${proof:-not in the log}"
# Its JSON, unescaped: {"answered": ["0.0.0.0:22"], "logins": ["gpuadmin@127.0.0.1 port 22"], ...}
proof="$(grep -o '{\\"answered[^}]*}' <<<"$proof" | head -n1 | sed 's/\\"/"/g')"
[[ "$proof" == *'"answered": ["0.0.0.0:22"]'* && "$proof" == *"\"$ADMIN@127.0.0.1 port 22\""* ]] \
  || fail "the proof did not reach 0.0.0.0:22 only and log in as $ADMIN over 127.0.0.1: $proof"
pass "the role's proof ran ok: $proof"

echo "== after the role"
if [ "$PLATFORM" = ubuntu2404 ]; then
  dropin="$(as_admin "sudo cat $DROPIN")" || fail "$DROPIN is missing"
  indent '  | ' <<<"$dropin"
  listen="$(grep '^ListenStream=' <<<"$dropin" | paste -sd' ')"
  [ "$listen" = "ListenStream= ListenStream=0.0.0.0:22" ] \
    || fail "$DROPIN lists '$listen', not 'ListenStream= ListenStream=0.0.0.0:22'"
  ! grep -qF '[::]' <<<"$dropin" || fail "$DROPIN names [::]"
  pass "$DROPIN lists only ListenStream=0.0.0.0:22 and no [::]"
  echo "  ssh.socket Listen: $(as_admin 'systemctl show ssh.socket -p Listen --value' | paste -sd' ')"
fi
ss_out="$(as_admin 'ss -Htln')"
indent '  ss -Htln | ' <<<"$ss_out"
awk '$4 == "0.0.0.0:22"' <<<"$ss_out" | grep -q . || fail "ss shows no listener on 0.0.0.0:22"
# IPv6 listeners are "[addr]:port" (or "*:port", a dual-stack socket) in ss's local address column.
v6="$(awk '$4 ~ /^\[/ || $4 ~ /^\*:/ {print $4}' <<<"$ss_out" | paste -sd' ')"
[ -z "$v6" ] || fail "IPv6 listeners in the guest: $v6"
pass "ss -Htln shows 0.0.0.0:22 and no IPv6 listener"
login="$(as_admin "$LOGIN_CMD")" \
  || fail "a new key login as $ADMIN to 127.0.0.1:$PORT failed"
[[ "$login" == "login ok: $ADMIN on "* ]] || fail "unexpected login output: $login"
pass "a new key login as $ADMIN over IPv4 (127.0.0.1:$PORT -> guest port 22): $login"

echo "== re-run"
run_role run-2 || { tail -n 60 "$WORK/run-2.log" >&2; fail "the re-run failed"; }
[ "$(recap run-2 changed)" = changed=0 ] || fail "the re-run was not idempotent ($(recap run-2 changed))"
pass "the re-run reports changed=0"

echo "== negative control: hardening_ssh_listen_addresses [\"::\"]"
if run_role refused -e '{"hardening_ssh_listen_addresses": ["::"]}'; then
  fail "the role accepted an IPv6 listen address on a kernel without IPv6"
fi
refusal="$(grep -o 'hardening_ssh_listen_addresses lists IPv6 addresses[^"]*' "$WORK/refused.log" | head -n1)"
[[ "$refusal" == *"has no IPv6"* ]] || { tail -n 30 "$WORK/refused.log" >&2; fail "the run failed without the role's refusal"; }
pass "the role refused: $refusal"
[ "$(recap refused changed)" = changed=0 ] || fail "the refused run changed something ($(recap refused changed))"
if [ "$PLATFORM" = ubuntu2404 ]; then
  [ "$(as_admin "sudo cat $DROPIN")" = "$dropin" ] || fail "$DROPIN changed in the refused run"
fi
login="$(as_admin "$LOGIN_CMD")" \
  || fail "sshd does not answer after the refused run"
awk '$4 == "0.0.0.0:22"' <<<"$(as_admin 'ss -Htln')" | grep -q . || fail "no listener on 0.0.0.0:22 after the refused run"
pass "sshd still answers after the refused run: $login"

echo "all IPv6-off checks passed on $PLATFORM"
