#!/usr/bin/env bash
# What one task costs against a test container, the unit every Molecule stage is made of: 20 `command: "true"` and 20
# `stat` loop items (one module run each) and 20 debug items (controller only), with the community.docker.docker
# connection and pipelining as the scenarios use them, then the same play under Mitogen's mitogen_linear strategy
# (mitogen from PyPI, installed with --target into .cache/mitogen-VERSION: this script's own copy, not part of the
# toolchain), once with the connection named as Molecule's docker driver names it (community.docker.docker, which
# Mitogen does not take over: no gain) and once as "docker" (Mitogen's own docker connection).
# Usage, from the repository root after `make venv image`, with dockerd running:
#   bash benchmarks/task_overhead.sh [MITOGEN_VERSION]     (default 0.3.54)
# Numbers depend on the machine and its load; they are printed, never asserted.
# In Molecule, with mitogen_linear for every playbook, the docker driver's own destroy playbook never sees
# its async deletion job end (async_status retried 60 times and more). So scripts/mitogen/ansible-playbook leaves the
# driver's create and destroy playbooks plain and runs the rest under Mitogen, with the instances' connection named
# "docker": scripts/molecule-all.sh does so for every run but the first converge of scripts/scenarios.py PLAIN_RUNS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
IMAGE="${GPUOPS_TEST_IMAGE:-local/debian12:latest}"
MITOGEN_VERSION="${1:-0.3.54}"
MITOGEN_DIR="$ROOT/.cache/mitogen-$MITOGEN_VERSION"
NAME=gpuops-taskbench
export PATH="$ROOT/.venv/bin:$PATH" ANSIBLE_COLLECTIONS_PATH="$ROOT/.cache/collections"
export ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks ANSIBLE_FORCE_COLOR=0 ANSIBLE_PIPELINING=true
WORK="$(mktemp -d)"
cleanup() { docker rm -f "$NAME" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

[[ -d "$MITOGEN_DIR/ansible_mitogen" ]] || python -m pip install --quiet --target "$MITOGEN_DIR" "mitogen==$MITOGEN_VERSION"
docker run -d --name "$NAME" --cap-add SYS_ADMIN --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
  --cgroupns=host -v /sys/fs/cgroup:/sys/fs/cgroup:rw --tmpfs /run --tmpfs /run/lock --tmpfs /tmp \
  "$IMAGE" /lib/systemd/systemd >/dev/null

cat >"$WORK/play.yml" <<'PLAY'
- name: Task overhead
  hosts: all
  gather_facts: false
  become: true
  tasks:
    - name: command
      ansible.builtin.command: "true"
      changed_when: false
      loop: "{{ range(20) | list }}"
    - name: stat
      ansible.builtin.stat:
        path: /etc/hostname
      loop: "{{ range(20) | list }}"
    - name: debug
      ansible.builtin.debug:
        msg: x
      loop: "{{ range(20) | list }}"
PLAY

run() {
  local label=$1 connection=$2 start end
  shift 2
  printf 'all:\n  hosts:\n    %s:\n      ansible_connection: %s\n      ansible_python_interpreter: /usr/bin/python3\n' \
    "$NAME" "$connection" >"$WORK/inventory.yml"
  start=$(date +%s.%N)
  env "$@" ansible-playbook -i "$WORK/inventory.yml" "$WORK/play.yml" >"$WORK/$label.log" 2>&1
  end=$(date +%s.%N)
  echo "== $label: $(echo "$end - $start" | bc) s in all"
  grep -E '^(command|stat|debug) -+ ' "$WORK/$label.log" | awk '{printf "   %-8s %s for 20 items\n", $1, $NF}'
}

run plain community.docker.docker
run mitogen-fqcn community.docker.docker PYTHONPATH="$MITOGEN_DIR" \
  ANSIBLE_STRATEGY_PLUGINS="$MITOGEN_DIR/ansible_mitogen/plugins/strategy" ANSIBLE_STRATEGY=mitogen_linear
# Mitogen takes over the builtin "docker" connection name (its mitogen_docker).
run mitogen docker PYTHONPATH="$MITOGEN_DIR" ANSIBLE_STRATEGY_PLUGINS="$MITOGEN_DIR/ansible_mitogen/plugins/strategy" \
  ANSIBLE_STRATEGY=mitogen_linear
