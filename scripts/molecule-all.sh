#!/usr/bin/env bash
# Run Molecule scenarios, MOLECULE_JOBS at a time (default 2), each `molecule test` logging to
# build/molecule/<scenario>.log; print one line per scenario with its time, the tail of each failing
# log, and a closing "N passed, N failed" line. Exit 1 when any scenario failed.
# Scenarios never share a container, network or volume name (gpuops-<scenario>...), and the package cache
# (apt-cacher-ng) serves them concurrently, so they can run side by side.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
jobs="${MOLECULE_JOBS:-2}"
logs="$root/build/molecule"
mkdir -p "$logs"
scenarios=("$@")
((${#scenarios[@]})) || read -r -a scenarios <<<"$(python3 scripts/scenarios.py)"

run_one() {
  local s=$1 start rc
  start=$(date +%s)
  molecule test -s "$s" >"$logs/$s.log" 2>&1
  rc=$?
  echo "$s $rc $(( $(date +%s) - start ))" >>"$logs/results"
  if ((rc == 0)); then echo "=== scenario $s passed in $(( $(date +%s) - start )) s"
  else echo "=== scenario $s FAILED (exit $rc) in $(( $(date +%s) - start )) s: build/molecule/$s.log"; fi
}
export -f run_one
export logs

: >"$logs/results"
start=$(date +%s)
printf '%s\n' "${scenarios[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}
passed=$(awk '$2 == 0' "$logs/results" | wc -l)
failed=$(awk '$2 != 0' "$logs/results" | wc -l)
awk '$2 != 0 {print $1}' "$logs/results" | while read -r s; do
  echo "----- last 60 lines of build/molecule/$s.log"
  tail -n 60 "$logs/$s.log"
done
echo "molecule: ${#scenarios[@]} scenarios, $jobs at a time, in $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
((failed == 0 && passed == ${#scenarios[@]}))
