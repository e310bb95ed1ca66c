# shellcheck shell=bash
# Sourced by benchmarks/bench_hardening.sh (container), benchmarks/bench_hardening_vm.sh (QEMU guest) and
# benchmarks/demo_audit.sh (the demo host): the play the first two run and one timed run of it, what a Lynis run
# (`lynis audit system --quick`) left in its log and report, fetched from the host under test, and ssh-audit's counts.
# Usage: lynis_summary LYNIS_LOG LYNIS_REPORT   (copies of /var/log/lynis.log and /var/log/lynis-report.dat)
# Prints the points reached of the maximum, every test that was given fewer than its maximum points (what holds
# the index down) with a count, and the suggestions left.

lynis_summary() {
  local log="$1" report="$2"
  echo "Lynis $(sed -n 's/^lynis_version=//p' "$report"):" \
    "$(grep -o 'Currently having [0-9]* points (out of [0-9]*)' "$log" | tail -1 | sed 's/Currently having //')"
  echo "Tests given fewer than their maximum points (count, test, points of maximum):"
  awk '/Performing test ID/ {test = $0; sub(/.*Performing test ID /, "", test); sub(/ .*/, "", test)}
       match($0, /assigned partial number of hardening points \([0-9]+ of [0-9]+\)/) {
         points = substr($0, RSTART + 45, RLENGTH - 46); print "  " test " " points}' \
    "$log" | sort | uniq -c
  echo "Lynis suggestions:"
  sed -n 's/^suggestion\[\]=//p' "$report" | cut -d'|' -f1,2 | sed 's/^/  /'
}

# ssh-audit (3.9.0 from .venv) against a server, its whole output in OUT; prints "<[fail] lines> <[warn] lines>".
# ssh-audit exits non-zero when it finds anything: the lines are counted instead. ssh_audit_counts OUT ARGS...
ssh_audit_counts() {
  local out="$1"
  shift
  ssh-audit -n "$@" > "$out" 2>&1 || true
  echo "$(grep -c "\[fail\]" "$out" || true) $(grep -c "\[warn\]" "$out" || true)"
}

# The installed ssh-audit's version.
ssh_audit_version() {
  python3 -c 'import importlib.metadata as m; print(m.version("ssh-audit"))'
}

# "N of M" points, for a table.
lynis_points() {
  grep -o 'Currently having [0-9]* points (out of [0-9]*)' "$1" | tail -1 \
    | sed -E 's/Currently having ([0-9]+) points \(out of ([0-9]+)\)/\1 of \2/'
}

# The play both benchmarks run: the hardening role alone. hardening_play FILE
hardening_play() {
  cat > "$1" <<'PLAY'
- name: Harden
  hosts: all
  become: true
  roles:
    - role: gpuops.gpu_server.hardening
PLAY
}

# One run of $WORK/play.yml against $WORK/inventory with $EXTRA_VARS, its output in $WORK/run-N.log; prints its
# seconds, or the log's tail and exits on a failure. run_role N
run_role() {
  local start end
  start=$(date +%s.%N)
  ansible-playbook -i "$WORK/inventory" "$WORK/play.yml" -e "$EXTRA_VARS" > "$WORK/run-$1.log" 2>&1 ||
    { tail -40 "$WORK/run-$1.log"; exit 1; }
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f\n", b - a}'
}
