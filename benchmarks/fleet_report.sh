#!/usr/bin/env bash
# How playbooks/fleet_report.yml scales: its wall time on 1, 10 and 40 hosts (containers of the test image, each with
# a fake nvidia-smi that prints the recorded 8-GPU HGX H200), the ratio t(40)/t(1), and the per-host cost next to
# `ansible -m ping` on the same 40 hosts (the floor: connection and one module run per host).
# Ansible reaches the containers with the community.docker.docker connection, with the repository's ansible.cfg
# (forks 50, pipelining). Usage, from the repository root after `make venv image`, with dockerd running:
#   bash benchmarks/fleet_report.sh [COUNTS]      (COUNTS default "1 10 40")
# Numbers depend on the machine and its load; they are printed, never asserted.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
IMAGE="${GPUOPS_TEST_IMAGE:-local/debian12:latest}"
read -r -a COUNTS <<<"${1:-1 10 40}"
export PATH="$ROOT/.venv/bin:$PATH" ANSIBLE_COLLECTIONS_PATH="$ROOT/.cache/collections" ANSIBLE_CONFIG="$ROOT/ansible.cfg"
export ANSIBLE_CALLBACKS_ENABLED=ansible.posix.timer ANSIBLE_FORCE_COLOR=0
WORK="$(mktemp -d)"
max=0
for n in "${COUNTS[@]}"; do ((n > max)) && max=$n; done
cleanup() { docker ps -aq --filter name=gpuops-fleetbench- | xargs -r docker rm -f >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

mkdir -p "$WORK/fake"
cp tests/unit/fixtures/nvidia_smi/hgx_h200_8gpu_r570.xml "$WORK/fake/capture.xml"
cp tests/unit/fixtures/kernel_log/no_xid.txt "$WORK/fake/kernel.log"
printf '#!/bin/sh\ncat /opt/fake/capture.xml\n' >"$WORK/fake/nvidia-smi"
chmod 755 "$WORK/fake/nvidia-smi"

echo "starting $max containers of $IMAGE"
for i in $(seq 1 "$max"); do
  docker run -d --name "gpuops-fleetbench-$i" -v "$WORK/fake:/opt/fake:ro" "$IMAGE" sleep infinity >/dev/null
done

inventory() {  # inventory of the first N containers
  {
    echo "gpu_servers:"
    echo "  vars: {ansible_connection: community.docker.docker, ansible_python_interpreter: /usr/bin/python3,"
    echo "         gpuops_fleet_nvidia_smi_path: /opt/fake/nvidia-smi, gpuops_fleet_kernel_log_path: /opt/fake/kernel.log}"
    echo "  hosts:"
    for i in $(seq 1 "$1"); do echo "    gpuops-fleetbench-$i:"; done
    echo "ungrouped: {hosts: {localhost: {ansible_connection: local, ansible_python_interpreter: $ROOT/.venv/bin/python}}}"
  } >"$WORK/inventory-$1.yml"
  echo "$WORK/inventory-$1.yml"
}

timed() {  # wall seconds of a command, its output kept in $WORK/last.log
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$WORK/last.log" 2>&1 || { tail -30 "$WORK/last.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  python3 -c "print('%.1f' % ($t1 - $t0))"
}

declare -A took
for n in "${COUNTS[@]}"; do
  inv=$(inventory "$n")
  timed ansible-playbook playbooks/fleet_report.yml -i "$inv" -e "gpuops_fleet_report_dir=$WORK/report-$n" >/dev/null  # warm-up
  took[$n]=$(timed ansible-playbook playbooks/fleet_report.yml -i "$inv" -e "gpuops_fleet_report_dir=$WORK/report-$n")
  gpus=$(python3 -c "import json; print(json.load(open('$WORK/report-$n/fleet-report.json'))['counts']['gpus'])")
  printf 'fleet_report.yml on %3d hosts (%4d GPUs): %6.1f s\n' "$n" "$gpus" "${took[$n]}"
done
inv=$(inventory "$max")
ping=$(timed ansible gpu_servers -i "$inv" -m ansible.builtin.ping)
printf 'ansible -m ping on %3d hosts (the floor):     %6.1f s\n' "$max" "$ping"
first=${COUNTS[0]}
python3 - "${took[$first]}" "${took[$max]}" "$ping" "$first" "$max" <<'EOF'
import sys
t1, tn, ping, first, n = map(float, sys.argv[1:])
print('t(%d)/t(%d) = %.2f (aim: under 3)' % (n, first, tn / t1))
print('per host beyond the first: %.2f s; ping per host: %.2f s' % ((tn - t1) / max(n - first, 1), ping / n))
EOF
