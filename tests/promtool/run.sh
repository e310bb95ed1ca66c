#!/usr/bin/env bash
# Unit tests of the gpu_monitoring alert rules: render the role's rules template with its defaults,
# `promtool check rules` it, then `promtool test rules` every tests/promtool/*.test.yml against it.
# promtool comes from Debian's `prometheus` package (2.42); on a Debian/Ubuntu host where it is missing
# and we are root, it is installed (CI is root on Debian). PROMTOOL=/path/to/promtool overrides.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="${ANSIBLE_COLLECTIONS_PATH:-$root/.cache/collections}"
export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_FORCE_COLOR=0

promtool="${PROMTOOL:-$(command -v promtool || true)}"
if [[ -z "$promtool" ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "promtool missing: installing Debian's prometheus package" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus >/dev/null \
      || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus >/dev/null; }
    promtool="$(command -v promtool)"
  else
    echo "promtool not found: install Debian's prometheus package or set PROMTOOL" >&2
    exit 2
  fi
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The tests reference the rules as gpuops-gpu.rules.yml next to them: render there, copy the tests along.
ansible-playbook -i localhost, "$here/render.yml" -e "rules_out=$work/gpuops-gpu.rules.yml" >"$work/render.log" \
  || { cat "$work/render.log" >&2; exit 1; }
cp "$here"/*.test.yml "$work/"
"$promtool" check rules "$work/gpuops-gpu.rules.yml"
cd "$work"
"$promtool" test rules ./*.test.yml
cd "$root"
python3 "$here/check_dashboards.py"
