#!/usr/bin/env bash
# Benchmark of the hardening role on a fresh container from the test image:
#   - Lynis hardening index (lynis 3.0.8, `lynis audit system --quick`) before and after the role,
#   - the Lynis suggestions left, and every test that gave fewer than its maximum points (what holds the index down),
#   - ssh-audit [fail]/[warn] counts against the hardened sshd (ssh-audit 3.9.0 from .venv, pinned in
#     requirements-dev.txt, run from the host against the container's address: the container cannot reach PyPI),
#   - wall time of the first run and of an idempotent re-run (which must report changed=0).
# Ansible connects over SSH as a real deployment does (admin user with a key and sudo, ControlPersist,
# pipelining), so the role's reconnect after the sshd restart is exercised for real. The container starts
# with Debian's stock openssh-server, as a server reachable over SSH has.
# Usage: benchmarks/bench_hardening.sh            (from the repository root; needs make venv image, dockerd)
# Env:   GPUOPS_TEST_IMAGE (default local/debian12:latest), BENCH_KEEP=1 keeps the container, BENCH_NAME its name,
#        BENCH_EXTRA_VARS: extra variables for the role as JSON, e.g. '{"hardening_ssh_post_quantum_only": true}'.
# Numbers depend on the machine and its load; they are printed, never asserted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IMAGE="${GPUOPS_TEST_IMAGE:-local/debian12:latest}"
NAME="${BENCH_NAME:-gpuops-bench-hardening}"
EXTRA_VARS="${BENCH_EXTRA_VARS:-}"
[ -n "$EXTRA_VARS" ] || EXTRA_VARS='{}'
WORK="$(mktemp -d)"
export PATH="$ROOT/.venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/.cache/collections"
export ANSIBLE_CONFIG="$WORK/ansible.cfg"
export ANSIBLE_FORCE_COLOR=0

cleanup() {
  if [ "${BENCH_KEEP:-0}" != 1 ]; then docker rm -f "$NAME" >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

in_box() { docker exec "$NAME" bash -c "$1"; }

lynis_index() {
  in_box 'lynis audit system --quick --no-colors >/tmp/lynis.out 2>&1 || true
          sed -n "s/^hardening_index=//p" /var/log/lynis-report.dat'
}

# What holds the index down: the tests that were given fewer points than their maximum, and the suggestions.
# shellcheck source=benchmarks/_lynis.sh
. "$ROOT/benchmarks/_lynis.sh"
lynis_details() {
  docker exec "$NAME" cat /var/log/lynis.log > "$WORK/lynis.log"
  docker exec "$NAME" cat /var/log/lynis-report.dat > "$WORK/lynis-report.dat"
  lynis_summary "$WORK/lynis.log" "$WORK/lynis-report.dat"
}

echo "== fresh container from $IMAGE"
docker rm -f "$NAME" >/dev/null 2>&1 || true
docker run -d --name "$NAME" --hostname "$NAME" \
  --cap-add SYS_ADMIN --cap-add NET_ADMIN \
  --security-opt seccomp=unconfined --security-opt apparmor=unconfined --cgroupns=host \
  -v /sys/fs/cgroup:/sys/fs/cgroup:rw \
  --tmpfs /run --tmpfs /run/lock --tmpfs /tmp "$IMAGE" /lib/systemd/systemd >/dev/null
timeout 60 bash -c "until docker exec $NAME systemctl is-system-running 2>/dev/null | grep -qE 'running|degraded'; do sleep 1; done"

# The admin Ansible logs in as (and the lockout guard protects): a key and passwordless sudo, as a cloud image has.
ssh-keygen -q -t ed25519 -N "" -f "$WORK/admin_ed25519"
in_box 'for i in 1 2 3 4 5; do apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lynis sudo openssh-server >/dev/null && break; sleep 5; done
        useradd -m -s /bin/bash -G sudo benchadmin && install -d -m 0700 -o benchadmin -g benchadmin /home/benchadmin/.ssh
        echo "benchadmin ALL=(ALL) NOPASSWD: ALL" > /etc/sudoers.d/benchadmin && chmod 0440 /etc/sudoers.d/benchadmin'
docker cp "$WORK/admin_ed25519.pub" "$NAME:/home/benchadmin/.ssh/authorized_keys"
in_box 'chown benchadmin: /home/benchadmin/.ssh/authorized_keys && chmod 0600 /home/benchadmin/.ssh/authorized_keys'

before="$(lynis_index)"
echo "Lynis hardening index before: $before"

ADDRESS="$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$NAME")"
cat > "$WORK/ansible.cfg" <<CFG
[defaults]
stdout_callback = ansible.builtin.default
callbacks_enabled = ansible.posix.profile_tasks
interpreter_python = /usr/bin/python3
gathering = implicit
host_key_checking = False
[ssh_connection]
pipelining = True
ssh_args = -o ControlMaster=auto -o ControlPersist=120s -o UserKnownHostsFile=/dev/null
control_path_dir = $WORK/cp
CFG
# hardening_admin_user is left at its default: the user Ansible connects as (benchadmin).
printf '%s ansible_host=%s ansible_user=benchadmin ansible_ssh_private_key_file=%s\n' \
  "$NAME" "$ADDRESS" "$WORK/admin_ed25519" > "$WORK/inventory"
hardening_play "$WORK/play.yml"

first="$(run_role 1)"
echo "First run: ${first}s ($(grep -Eo 'changed=[0-9]+' "$WORK/run-1.log" | tail -1))"
second="$(run_role 2)"
second_changed="$(grep -Eo 'changed=[0-9]+' "$WORK/run-2.log" | tail -1)"
echo "Idempotent re-run: ${second}s (${second_changed}); slowest tasks:"
sed -n '/TASKS RECAP/,$p' "$WORK/run-2.log" | sed -n '4,11p'

after="$(lynis_index)"
echo "Lynis hardening index after: $after"
lynis_details

audit_version="$(ssh_audit_version)"
read -r fails warns <<<"$(ssh_audit_counts "$WORK/ssh-audit.out" "$ADDRESS")"
echo "ssh-audit $audit_version: ${fails} [fail], ${warns} [warn]"
grep -E "\[(fail|warn)\]" "$WORK/ssh-audit.out" || true

echo
echo "| metric | value | target |"
echo "|---|---|---|"
echo "| Lynis hardening index before | $before | |"
echo "| Lynis hardening index after | $after | >= 85 |"
echo "| ssh-audit $audit_version [fail] | $fails | 0 |"
echo "| ssh-audit $audit_version [warn] | $warns | 0 with hardening_ssh_post_quantum_only |"
echo "| first run (s) | $first | |"
echo "| idempotent re-run (s), $second_changed | $second | well under 30 |"
[ "$second_changed" = "changed=0" ] || { echo "the re-run was not idempotent" >&2; exit 1; }
