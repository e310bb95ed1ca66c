#!/usr/bin/env bash
# Run Molecule scenarios, MOLECULE_JOBS at a time (default 2), each `molecule test` logging to
# build/molecule/<scenario>[@<platform>].log; print one line per run with its time, the tail of each failing
# log, and a closing "N passed, N failed" line. Exit 1 when any run failed.
# A run is `scenario` (Debian 12) or `scenario@platform` (debian12, debian13, ubuntu2204, ubuntu2404, ubuntu2604): the
# platform's image (tests/images/build.sh) is given to the scenario as GPUOPS_TEST_IMAGE, and the cgroup namespace its
# systemd needs (the image's label gpuops.cgroupns: private on Ubuntu 26.04, whose systemd 259 has no cgroup v1
# support) as GPUOPS_CGROUPNS, and the docker client's path as GPUOPS_DOCKER_CLI (slurm's controller starts
# containers with it). Different scenarios never share
# a container, network or volume name (gpuops-<scenario>...), and the package cache (apt-cacher-ng) serves them
# concurrently, so they run side by side, each with its own Molecule state (MOLECULE_EPHEMERAL_DIRECTORY).
# A scenario whose instance names carry ${GPUOPS_PLATFORM} (site) also runs on several platforms at once;
# any other takes turns with itself (a lock per scenario).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
jobs="${MOLECULE_JOBS:-2}"
logs="$root/build/molecule"
mkdir -p "$logs"
scenarios=("$@")
((${#scenarios[@]})) || read -r -a scenarios <<<"$(python3 scripts/scenarios.py)"

run_one() {
  local run=$1 s platform start rc lock limit attempt
  s=${run%@*}
  platform=debian12
  [[ $run == *@* ]] && platform=${run#*@}
  lock="$logs/.$s.lock"
  grep -qE '^ *- name: .*[$][{]GPUOPS_PLATFORM' "molecule/$s/molecule.yml" && lock="$logs/.$run.lock"
  start=$(date +%s)
  # A run that hangs (an apt index refresh has hung twice in fleet_upgrade, every process asleep in poll) is killed
  # after its limit (scripts/scenarios.py --timeout; GPUOPS_RUN_TIMEOUT overrides) and tried once more; `molecule
  # test` begins with destroy, so the retry starts clean. The killed run's log is kept as <run>.timeout.log.
  limit=${GPUOPS_RUN_TIMEOUT:-$(python3 scripts/scenarios.py --timeout "$run")}
  cgroupns=$(docker image inspect -f '{{ index .Config.Labels "gpuops.cgroupns" }}' "local/$platform:latest" 2>/dev/null)
  [[ $cgroupns == private ]] || cgroupns=host
  # Mitogen for every run: the ansible-playbook of scripts/mitogen first on PATH, and the instances' connection named
  # "docker" (.config/molecule/config.yml); the first converge of scripts/scenarios.py PLAIN_RUNS runs plain
  # (GPUOPS_PLAIN_CONVERGE, scripts/mitogen/ansible-playbook).
  local plain=""
  [[ -n "$(python3 scripts/scenarios.py --mitogen "$run")" ]] || plain=1
  for attempt in 1 2; do
    PATH="$root/scripts/mitogen:$PATH" GPUOPS_MITOGEN_STRATEGY=$mitogen_strategy GPUOPS_ANSIBLE_CONNECTION=docker \
      GPUOPS_PLAIN_CONVERGE=$plain \
      GPUOPS_PLATFORM=$platform GPUOPS_TEST_IMAGE="local/$platform:latest" GPUOPS_CGROUPNS=$cgroupns \
      GPUOPS_DOCKER_CLI="$(command -v docker)" MOLECULE_EPHEMERAL_DIRECTORY="$HOME/.cache/molecule/gpuops/$run" \
      timeout --kill-after=30 "$limit" flock "$lock" molecule test -s "$s" >"$logs/$run.log" 2>&1
    rc=$?
    ((attempt == 1 && (rc == 124 || rc == 137))) || break
    mv "$logs/$run.log" "$logs/$run.timeout.log"
    echo "=== scenario $run ran past its $limit s and was killed: trying once more (log: build/molecule/$run.timeout.log)"
  done
  echo "$run $rc $(( $(date +%s) - start ))" >>"$logs/results"
  if ((rc == 0)); then echo "=== scenario $run passed in $(( $(date +%s) - start )) s"
  else echo "=== scenario $run FAILED (exit $rc) in $(( $(date +%s) - start )) s: build/molecule/$run.log"; fi
}
export -f run_one
# Mitogen's strategy plugins, from the toolchain (requirements-dev.txt).
mitogen_strategy="$(python3 "$root/scripts/mitogen/strategy_path.py")" || exit 1
export logs root mitogen_strategy

: >"$logs/results"
start=$(date +%s)
printf '%s\n' "${scenarios[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}
passed=$(awk '$2 == 0' "$logs/results" | wc -l)
failed=$(awk '$2 != 0' "$logs/results" | wc -l)
awk '$2 != 0 {print $1}' "$logs/results" | while read -r run; do
  echo "----- last 60 lines of build/molecule/$run.log"
  tail -n 60 "$logs/$run.log"
done
# What failed, last, where a CI report that keeps only the end of the output still shows it: pytest's failed tests and
# their assertion lines, then Ansible's last failed tasks (a scenario's own negative controls fail tasks on purpose,
# the one that stopped the run comes last). ANSI colours and Molecule's box margin are taken off.
awk '$2 != 0 {print $1}' "$logs/results" | while read -r run; do
  echo "----- what failed in build/molecule/$run.log"
  plain=$(sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^ *│ \{0,1\}//' "$logs/$run.log")
  grep -E '^(FAILED|ERROR) [^-]|^E   ' <<<"$plain" | cut -c1-400 | head -n 30
  awk '/^TASK \[/ { task = $0; next }
       /^fatal: |FAILED! =>/ { if (task != "") print task; task = ""; print }' <<<"$plain" | cut -c1-400 | tail -n 6
done
echo "molecule: ${#scenarios[@]} runs, $jobs at a time, in $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
((failed == 0 && passed == ${#scenarios[@]}))
