#!/usr/bin/env bash
# What one more host costs a push of site.yml, beside what it costs the transport (issue 57).
# The converged demo container (`make demo`) is committed to an image and multiplied into FLEET_HOSTS containers
# (default 10) that Ansible reaches over SSH, as it reaches cloud VMs: the demo's admin user and key (.cache/demo), sudo,
# the hardened sshd and firewall that site.yml left there. Then, for two settings:
#   plain        ansible-core's defaults (forks 5, no pipelining, facts gathered by every play, linear strategy);
#   recommended  docs/ansible-cfg.md's fleet settings (forks 50, pipelining, SSH ControlPersist, smart gathering with a
#                JSON fact cache) and Mitogen's mitogen_linear strategy (mitogen in requirements-dev.txt supports the
#                pinned ansible-core; docs/ansible-cfg.md)
# it times site.yml's idempotent re-run (after one untimed run on all N that settles the fleet inventory's state: each
# clone's Prometheus lists all N) at 1 host (--limit) and at N, and `ansible -m ping` at 1 and N:
#   task cost  X = (t(N) - t(1)) / ((N - 1) * tasks run per host)   (tasks run = ok + changed of one host's recap)
#   ping cost  Y = (t_ping(N) - t_ping(1)) / (N - 1)
#   ratio      Z = X / Y
# Its last line: `fleet: N hosts, per-host task cost X s, ping per host Y s, ratio Z` (the recommended settings; the
# plain ones on the line before). Numbers depend on the machine and its load (the controller and every "host" share its
# cores); they are printed, never asserted. Figures: docs/benchmarks.md.
# Usage, after `make demo` (PLATFORM debian12 by default):  bash benchmarks/fleet_scale.sh
#   FLEET_HOSTS=N, FLEET_TAGS=tag,... (time only part of site.yml), FLEET_KEEP=1 (leave the containers running).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
N=${FLEET_HOSTS:-10}
DEMO=${DEMO_NAME:-gpuops-demo}
PLATFORM=${PLATFORM:-debian12}
IMAGE=gpuops-fleet:latest
KEY=$ROOT/.cache/demo/id_ed25519
export PATH="$ROOT/.venv/bin:$PATH" ANSIBLE_FORCE_COLOR=0 ANSIBLE_NOCOLOR=1
[[ $N =~ ^[0-9]+$ && $N -ge 2 ]] || { echo "fleet: FLEET_HOSTS must be a whole number of at least 2, not '$N'" >&2; exit 2; }
[[ $(docker inspect -f '{{.State.Running}}' "$DEMO" 2>/dev/null) == true ]] \
  || { echo "fleet: the demo container $DEMO is not running: make demo first" >&2; exit 1; }
[[ -f $KEY ]] || { echo "fleet: no demo admin key $KEY: make demo first" >&2; exit 1; }
WORK=$(mktemp -d)
names=()
cleanup() {
  if [[ ${FLEET_KEEP:-} != 1 && ${#names[@]} -gt 0 ]]; then
    docker rm -f "${names[@]}" >/dev/null 2>&1 || true
    docker volume rm -f "${names[@]/%/-docker}" >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# docker commit pauses the demo container while it copies it (a consistent image): nothing else may run against the
# demo meanwhile (a make ee-demo run beside it found the container paused and failed).
echo "fleet: committing $DEMO to $IMAGE and starting $N containers"
docker commit "$DEMO" "$IMAGE" >/dev/null
cgroupns=$(docker image inspect -f '{{ index .Config.Labels "gpuops.cgroupns" }}' "local/$PLATFORM:latest")
admin=$(sed -n 's/^hardening_admin_user: *//p' inventories/demo/group_vars/all.yml)
{
  echo "all:"
  echo "  vars:"
  echo "    ansible_user: $admin"
  echo "    ansible_ssh_private_key_file: $KEY"
  echo "    ansible_python_interpreter: /usr/bin/python3"
  echo "  children:"
  echo "    gpu_servers:"
  echo "      hosts:"
} > "$WORK/hosts.yml"
for i in $(seq 1 "$N"); do
  name=gpuops-fleet-$i
  names+=("$name")
  docker rm -f "$name" >/dev/null 2>&1 || true
  docker run -d --name "$name" --hostname "$name" \
    --cap-add SYS_ADMIN --cap-add NET_ADMIN --cap-add NET_RAW --cap-add MKNOD \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    --cgroupns="$([[ $cgroupns == private ]] && echo private || echo host)" \
    -v /sys/fs/cgroup:/sys/fs/cgroup:rw -v "$name-docker:/var/lib/docker" \
    -v "$ROOT/.cache/wheels/$PLATFORM:/opt/gpuops-wheels:ro" \
    --tmpfs /run --tmpfs /run/lock --tmpfs /tmp "$IMAGE" >/dev/null
done
ips=()
for name in "${names[@]}"; do
  ips+=("$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$name")")
  printf '        %s: {ansible_host: %s}\n' "$name" "${ips[-1]}" >> "$WORK/hosts.yml"
done
# Every clone plays the demo's two parts (GPU server and monitoring server), as the demo host does.
printf '%s\n' "    monitoring:" "      hosts:" >> "$WORK/hosts.yml"
for name in "${names[@]}"; do printf '        %s:\n' "$name" >> "$WORK/hosts.yml"; done
mkdir -p "$WORK/group_vars"
grep -v '^ansible_connection:' inventories/demo/group_vars/all.yml > "$WORK/group_vars/all.yml"
vars=()
[[ -f inventories/demo-platforms/$PLATFORM.yml ]] && vars=(-e "@inventories/demo-platforms/$PLATFORM.yml")
tags=()
[[ -n ${FLEET_TAGS:-} ]] && tags=(--tags "$FLEET_TAGS")
# The clones' host keys (sshd starts with systemd: wait for every one), checked on every connection.
for _try in $(seq 30); do
  ssh-keyscan -T 5 -t ed25519 "${ips[@]}" > "$WORK/known_hosts" 2>/dev/null || true
  [[ $(wc -l < "$WORK/known_hosts") -ge $N ]] && break
  sleep 2
done
ssh_common="-o UserKnownHostsFile=$WORK/known_hosts -o StrictHostKeyChecking=yes"

# The two settings, each a whole ansible.cfg (nothing of the checkout's own).
mitogen_strategy=$(python "$ROOT/scripts/mitogen/strategy_path.py")
# Both wait up to 60 s for an SSH connection: the "hosts" share the controller's cores, and under load sshd answered
# ten copies later than ansible-core's default 10 s (docs/benchmarks.md, Fleet push).
cat > "$WORK/plain.cfg" <<CFG
[defaults]
collections_path = $ROOT/.cache/collections
inventory = $WORK/hosts.yml
timeout = 60
[ssh_connection]
ssh_common_args = $ssh_common
CFG
cat > "$WORK/recommended.cfg" <<CFG
[defaults]
collections_path = $ROOT/.cache/collections
inventory = $WORK/hosts.yml
timeout = 60
forks = 50
gathering = smart
fact_caching = jsonfile
fact_caching_connection = $WORK/facts
fact_caching_timeout = 3600
strategy_plugins = $mitogen_strategy
strategy = mitogen_linear
[connection]
pipelining = True
[ssh_connection]
pipelining = True
ssh_args = -o ControlMaster=auto -o ControlPersist=120s -o ServerAliveInterval=30
ssh_common_args = $ssh_common
control_path_dir = $WORK/cp
CFG

seconds() { python -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$1"; }
now() { python -c 'import time; print(time.time())'; }
run_play() {  # setting limit log
  local start
  start=$(now)
  ANSIBLE_CONFIG="$WORK/$1.cfg" ansible-playbook site.yml "${vars[@]}" "${tags[@]}" ${2:+--limit "$2"} > "$3" 2>&1 \
    || { tail -40 "$3" >&2; echo "fleet: site.yml failed ($1, limit ${2:-all}), log above" >&2; exit 1; }
  seconds "$start"
}
run_ping() {  # setting pattern
  local start
  start=$(now)
  ANSIBLE_CONFIG="$WORK/$1.cfg" ansible "$2" -m ansible.builtin.ping -o > "$WORK/ping.log" 2>&1 \
    || { cat "$WORK/ping.log" >&2; exit 1; }
  seconds "$start"
}
recap() {  # log host field
  sed -n "s/^$2 *:.* $3=\([0-9]*\).*/\1/p" "$1" | tail -1
}

echo "fleet: settling run on all $N hosts (recommended settings, untimed)"
run_play recommended "" "$WORK/settle.log" > /dev/null
declare -A line
for setting in plain recommended; do
  t1=$(run_play "$setting" "${names[0]}" "$WORK/$setting-1.log")
  tn=$(run_play "$setting" "" "$WORK/$setting-n.log")
  p1=$(run_ping "$setting" "${names[0]}")
  pn=$(run_ping "$setting" all)
  ok=$(recap "$WORK/$setting-1.log" "${names[0]}" ok)
  changed=$(recap "$WORK/$setting-1.log" "${names[0]}" changed)
  changed_n=$(awk '/^gpuops-fleet-[0-9]+ *:/ {for (i = 1; i <= NF; i++) if ($i ~ /^changed=/) {split($i, a, "="); s += a[2]}} END {print s + 0}' "$WORK/$setting-n.log")
  tasks=$((ok + changed))
  echo "fleet [$setting]: raw: t1=$t1 tn=$tn p1=$p1 pn=$pn ok=$ok changed=$changed"
  [[ $tasks -gt 0 ]] || { echo "fleet: no PLAY RECAP line for ${names[0]} in the $setting run" >&2; exit 1; }
  result=$(python - "$N" "$t1" "$tn" "$p1" "$pn" "$tasks" <<'PY'
import sys
n, t1, tn, p1, pn, tasks = int(sys.argv[1]), *map(float, sys.argv[2:6]), int(sys.argv[6])
x = (tn - t1) / ((n - 1) * tasks)
y = (pn - p1) / (n - 1)
print("%.4f %.3f %s" % (x, y, ("%.2f" % (x / y)) if y > 0 else "n/a"))
PY
)
  read -r x y z <<< "$result"
  echo "fleet [$setting]: site.yml re-run 1 host ${t1} s, $N hosts ${tn} s ($tasks tasks run per host, changed: 1 host $changed, $N hosts $changed_n); ping 1 host ${p1} s, $N hosts ${pn} s"
  line[$setting]="fleet: $N hosts, per-host task cost $x s, ping per host $y s, ratio $z"
done
echo "${line[plain]} (plain)"
echo "${line[recommended]}"
