#!/usr/bin/env bash
# Time from a spot interruption notice to the end of the final sync, for one checkpoint of SIZE (default 1G),
# next to a plain `rclone copy` of the same file (the floor), against a local S3 server (moto).
#
# Run from the repository root, as root, after `make venv` (moto, tests/fixtures/moto, is built into .cache/moto-py311
# when missing):   bash benchmarks/spot_final_sync.sh [SIZE]
# Needs rclone (apt-get install rclone). Everything runs on this machine: moto on loopback, the stand-in
# metadata service (tests/fixtures/spot/fake_metadata.py) on loopback, and the role's own tool
# (roles/spot/files/gpuops-spot.py) as its watcher runs on a host, with no training unit to wait for.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1G}
command -v rclone >/dev/null || { echo "rclone is missing: apt-get install rclone" >&2; exit 1; }
# shellcheck source=benchmarks/_moto.sh
. benchmarks/_moto.sh
bench_start gpuops-spot-bench
moto_start
s3_port=$moto_port
md_port=$((s3_port + 1))

mkdir -p "$work/md" "$work/ckpt" "$work/state"
echo none >"$work/md/state"
python3 tests/fixtures/spot/fake_metadata.py --port "$md_port" --state-file "$work/md/state" 2>"$work/md.log" &
pids+=($!)

cat >"$work/remote.env" <<EOF
RCLONE_CONFIG_GPUOPS_SPOT_TYPE="s3"
RCLONE_CONFIG_GPUOPS_SPOT_PROVIDER="Other"
RCLONE_CONFIG_GPUOPS_SPOT_ENDPOINT="http://127.0.0.1:$s3_port"
RCLONE_CONFIG_GPUOPS_SPOT_REGION="us-east-1"
RCLONE_CONFIG_GPUOPS_SPOT_ACCESS_KEY_ID="bench"
RCLONE_CONFIG_GPUOPS_SPOT_SECRET_ACCESS_KEY="bench-secret"
EOF
cat >"$work/config.json" <<EOF
{"checkpoint_dir": "$work/ckpt", "remote_path": "bench/job", "state_dir": "$work/state",
 "remote_env_file": "$work/remote.env", "textfile_dir": "", "interval_seconds": 900, "settle_seconds": 60,
 "exclude": ["*.tmp"], "provider": "aws", "metadata_url": "http://127.0.0.1:$md_port", "poll_seconds": 1,
 "training_units": [], "deadline_margin_seconds": 5}
EOF

head -c "$size" /dev/urandom >"$work/ckpt/ckpt-1.bin"
touch -d '-5 min' "$work/ckpt/ckpt-1.bin"
bytes=$(stat -c %s "$work/ckpt/ckpt-1.bin")

# The floor: rclone alone, same file, same server, a fresh prefix.
set -a
# shellcheck source=/dev/null
. "$work/remote.env"
set +a
export RCLONE_CONFIG=/dev/null
rclone mkdir gpuops_spot:bench
t0=$(date +%s.%N)
rclone copy "$work/ckpt/ckpt-1.bin" gpuops_spot:bench/floor
floor=$(echo "$(date +%s.%N) - $t0" | bc)

tool=(python3 roles/spot/files/gpuops-spot.py --config "$work/config.json")
PYTHONPATH=.cache/collections "${tool[@]}" watch >"$work/watch.log" 2>&1 &
pids+=($!)
sleep 2
t0=$(date +%s.%N)
echo notice >"$work/md/state"
until grep -qE 'final sync (done|FAILED)' "$work/watch.log"; do sleep 0.1; done
total=$(echo "$(date +%s.%N) - $t0" | bc)

remote=$(rclone lsjson gpuops_spot:bench/job | python3 -c 'import json,sys; print(sum(e["Size"] for e in json.load(sys.stdin) if e["Name"] == "ckpt-1.bin"))')

grep -E 'notice:|sync' "$work/watch.log" | sed 's/^/  watcher: /'
printf 'checkpoint: %s bytes (%s); in the bucket after the final sync: %s bytes\n' "$bytes" "$size" "$remote"
printf 'plain rclone copy (floor):            %6.1f s  (%.0f MB/s)\n' "$floor" "$(echo "$bytes / $floor / 1000000" | bc -l)"
printf 'notice -> final sync done (watcher):  %6.1f s  (%.0f MB/s; includes up to 1 s of polling)\n' \
  "$total" "$(echo "$bytes / $total / 1000000" | bc -l)"
printf 'overhead over the floor:              %6.1f s\n' "$(echo "$total - $floor" | bc)"
