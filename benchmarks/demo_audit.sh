#!/usr/bin/env bash
# What the demo host offers after site.yml (`make demo`, container gpuops-demo): the Lynis hardening index with the
# tests below their maximum and the suggestions left, ssh-audit against its sshd, and every listening TCP socket
# (`ss -ltnp`) beside the firewall's table, so that who can reach each one can be read off.
# Lynis is installed into the demo host for the measurement (apt, through the test image's package cache).
# ssh-audit runs on this machine from .venv, at the version requirements-dev.txt pins: `make demo` alone makes a .venv
# without the test tools (requirements-demo.txt), so the script installs that one pinned package into it first when it
# is missing or at another version (pip, from PyPI or pip's configured index).
# Usage: make demo && benchmarks/demo_audit.sh        (DEMO_NAME: the container, default gpuops-demo)
# Numbers depend on the image and the platform; they are printed, never asserted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NAME="${DEMO_NAME:-gpuops-demo}"
VENV="${GPUOPS_VENV:-$ROOT/.venv}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export PATH="$VENV/bin:$PATH"

# The ssh-audit requirement as requirements-dev.txt pins it (one place for the version), installed into $VENV unless
# that exact version is there already.
ensure_ssh_audit() {
  local pin have
  pin="$(grep -E '^ssh-audit==[0-9][0-9.]*$' "$ROOT/requirements-dev.txt")" \
    || { echo "requirements-dev.txt pins no ssh-audit==VERSION" >&2; return 1; }
  [[ -x "$VENV/bin/python" ]] \
    || { echo "no Python in $VENV: run make demo (or make venv-demo) first" >&2; return 1; }
  have="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("ssh-audit"))' 2>/dev/null || true)"
  if [[ "ssh-audit==$have" != "$pin" ]]; then
    echo "installing $pin into $VENV (${have:-not installed there})"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "$pin" \
      || { echo "could not install $pin into $VENV (pip above says why)" >&2; return 1; }
  fi
}
# shellcheck source=benchmarks/_lynis.sh
. "$ROOT/benchmarks/_lynis.sh"

docker inspect -f '{{.State.Running}}' "$NAME" 2>/dev/null | grep -q true \
  || { echo "container $NAME is not running: run make demo first" >&2; exit 1; }
in_box() { docker exec "$NAME" bash -c "$1"; }
ensure_ssh_audit

# shellcheck disable=SC2016  # expanded in the container
echo "== $NAME: $(in_box '. /etc/os-release && echo "$PRETTY_NAME"')"
in_box 'command -v lynis >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
          apt-get install -y -qq --no-install-recommends lynis >/dev/null; }'
in_box 'lynis audit system --quick --no-colors >/tmp/lynis.out 2>&1 || true'
docker exec "$NAME" cat /var/log/lynis.log > "$WORK/lynis.log"
docker exec "$NAME" cat /var/log/lynis-report.dat > "$WORK/lynis-report.dat"
index="$(sed -n 's/^hardening_index=//p' "$WORK/lynis-report.dat")"
echo "Lynis hardening index: $index ($(lynis_points "$WORK/lynis.log") points)"
lynis_summary "$WORK/lynis.log" "$WORK/lynis-report.dat"

address="$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$NAME")"
read -r fails warns <<<"$(ssh_audit_counts "$WORK/ssh-audit.out" "$address")"
echo "ssh-audit $(ssh_audit_version) against $address:22: $fails [fail], $warns [warn]"
grep -E "\[(fail|warn)\]" "$WORK/ssh-audit.out" || true

echo
echo "== listening TCP sockets (ss -ltnp)"
in_box 'ss -ltnp'
echo
echo "== the firewall's table (who may reach which port)"
in_box 'nft list table inet gpuops_filter 2>/dev/null || ufw status verbose 2>/dev/null || echo "no firewall table"'
