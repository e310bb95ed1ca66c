# shellcheck shell=bash
# Sourced by benchmarks/bench_hardening.sh (container) and benchmarks/bench_hardening_vm.sh (QEMU guest): what a
# Lynis run (`lynis audit system --quick`) left in its log and report, fetched from the host under test.
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

# "N of M" points, for a table.
lynis_points() {
  grep -o 'Currently having [0-9]* points (out of [0-9]*)' "$1" | tail -1 \
    | sed -E 's/Currently having ([0-9]+) points \(out of ([0-9]+)\)/\1 of \2/'
}
