#!/usr/bin/env bash
# The demo's idempotent re-run beside its floor: site.yml once more on the converged demo container (as `make demo`
# runs it: plain Ansible, the repository's ansible.cfg, the demo inventory and the platform's demo variables), then N
# `stat` tasks on the same host and connection. The floor is the re-run's executed tasks (ok=) times the cost of one
# `stat` (one remote module run); the ratio says how much more than that floor the re-run spends. It also prints how
# much of one `stat` is ansible-core's module start on the host, which no change of ours can make cheaper.
# Usage, from the repository root after `make demo [PLATFORM=...]` (the container gpuops-demo converged):
#   bash benchmarks/rerun_floor.sh [PLATFORM] [N]      (defaults: debian12, 40 stat tasks)
# Numbers depend on the machine and its load; they are printed, never asserted. Target of issue 34: 120 s or less.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PLATFORM="${1:-debian12}"
N="${2:-40}"
HOST=gpuops-demo
export PATH="$ROOT/.venv/bin:$PATH" ANSIBLE_FORCE_COLOR=0
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

if ! docker inspect -f '{{.State.Running}}' "$HOST" 2>/dev/null | grep -q true; then
  echo "container $HOST is not running: run make demo PLATFORM=$PLATFORM first" >&2
  exit 1
fi
vars=()
[[ -f "inventories/demo-platforms/$PLATFORM.yml" ]] && vars=(-e "@inventories/demo-platforms/$PLATFORM.yml")

start=$(date +%s.%N)
ansible-playbook site.yml -i inventories/demo "${vars[@]}" >"$WORK/rerun.log" 2>&1 || {
  tail -40 "$WORK/rerun.log" >&2
  exit 1
}
end=$(date +%s.%N)
recap=$(grep -E "^$HOST +: " "$WORK/rerun.log" | tail -1)
ok=$(sed -E 's/.* ok=([0-9]+).*/\1/' <<<"$recap")
changed=$(sed -E 's/.* changed=([0-9]+).*/\1/' <<<"$recap")
skipped=$(sed -E 's/.* skipped=([0-9]+).*/\1/' <<<"$recap")
rerun=$(echo "$end - $start" | bc)

cat >"$WORK/stat.yml" <<PLAY
- name: One remote module run, $N times
  hosts: $HOST
  gather_facts: false
  become: true
  tasks:
    - name: stat
      ansible.builtin.stat:
        path: /etc/hostname
      loop: "{{ range($N) | list }}"
PLAY
ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks ansible-playbook -i inventories/demo "$WORK/stat.yml" \
  >"$WORK/stat.log" 2>&1
per=$(grep -E '^stat -+ ' "$WORK/stat.log" | awk -v n="$N" '{sub(/s$/, "", $NF); printf "%.3f", $NF / n}')
floor=$(echo "$ok * $per" | bc)

# What of one `stat` is ansible-core's own module start on the host (Python, the AnsiballZ payload, importing
# module_utils.basic from the zip): the payload kept on the host (no pipelining, ANSIBLE_KEEP_REMOTE_FILES), run there
# 5 times by hand, then removed.
payload=$(ANSIBLE_KEEP_REMOTE_FILES=1 ANSIBLE_PIPELINING=False ansible "$HOST" -i inventories/demo -m ansible.builtin.stat \
  -a path=/etc/hostname -vvv 2>&1 | grep -oE '/[^ '"'"'"]*/AnsiballZ_stat\.py' | head -n 1)
start_cost=$(docker exec "$HOST" sh -c 'python3 -c "
import subprocess, sys, time
t = time.monotonic()
for _ in range(5):
    subprocess.run([sys.executable, sys.argv[1]], stdout=subprocess.DEVNULL, check=True)
print(\"%.3f\" % ((time.monotonic() - t) / 5))
" "$1"; rm -rf "$(dirname "$1")"' sh "$payload")

echo "platform:               $PLATFORM"
echo "re-run of site.yml:     ${rerun%.*} s (ok=$ok, changed=$changed, skipped=$skipped)"
echo "one stat task:          $per s (mean of $N)"
echo "floor (ok x stat):      ${floor%.*} s"
echo "module start on host:   $start_cost s of each stat (the payload run by hand)"
echo "re-run / floor:         $(echo "scale=2; $rerun / $floor" | bc)"
echo "target (issue 34):      120 s"
