# shellcheck shell=bash
# Sourced from the repository root by the benchmarks that need a local S3 server (backup_restore.sh,
# spot_final_sync.sh). bench_start NAME makes the work directory $work (/var/tmp/NAME.XXXXXX) and, on exit, stops
# every process in $pids and removes $work. moto_start starts moto (.cache/moto-py311: the S3 fixture of the Molecule
# scenarios, tests/fixtures/moto, built here when missing) on a random loopback port, $moto_port, and waits for its API.
moto=.cache/moto-py311
pids=()
work=

bench_cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  [[ -z $work ]] || rm -rf "$work"
}

bench_start() {
  PYTHON=${PYTHON:-.venv/bin/python} bash tests/fixtures/moto/build.sh "$moto"
  work=$(mktemp -d "/var/tmp/$1.XXXXXX")
  trap bench_cleanup EXIT
  unset AWS_CA_BUNDLE  # rclone's S3 client refuses a custom CA bundle with its own transport
}

moto_start() {
  moto_port=$((20000 + RANDOM % 10000))
  PYTHONPATH=$moto python3 -m moto.server -H 127.0.0.1 -p "$moto_port" >"$work/moto.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$moto_port/" && return 0
    sleep 0.2
  done
  echo "moto did not answer on 127.0.0.1:$moto_port (see $work/moto.log)" >&2
  exit 1
}
