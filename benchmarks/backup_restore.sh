#!/usr/bin/env bash
# Restore throughput of the backup role's restic from an S3 server, for a file tree of SIZE_MIB (default 1024 MiB in
# FILES files, default 256, in 16 directories), next to a plain `rclone copy` of the same tree from the same server
# (the floor). Both restore into an empty directory on this machine from a local S3 server (moto on loopback); restic
# starts with an empty cache, as on a replacement host.
#
# Run from the repository root after `make venv` (moto, tests/fixtures/moto, is built into .cache/moto-py311 when
# missing):   bash benchmarks/backup_restore.sh [SIZE_MIB] [FILES]
# Needs restic and rclone (apt-get install -y restic rclone).
set -euo pipefail
cd "$(dirname "$0")/.."
size_mib=${1:-1024}
files=${2:-256}
for tool in restic rclone; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install -y restic rclone" >&2; exit 1; }
done
# shellcheck source=benchmarks/_moto.sh
. benchmarks/_moto.sh
bench_start gpuops-backup-bench
moto_start
port=$moto_port

# The tree: FILES files of random data, SIZE_MIB in all, in 16 directories.
per_file_kib=$((size_mib * 1024 / files))
for i in $(seq 1 "$files"); do
  d="$work/src/dir-$((i % 16))"
  mkdir -p "$d"
  head -c "$((per_file_kib * 1024))" /dev/urandom >"$d/file-$i.bin"
done
bytes=$(find "$work/src" -type f -printf '%s\n' | awk '{s += $1} END {print s}')

export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_DEFAULT_REGION=us-east-1
export RESTIC_REPOSITORY="s3:http://127.0.0.1:$port/bench/restic" RESTIC_PASSWORD_FILE="$work/password"
echo "benchmark password" >"$work/password"
export RCLONE_CONFIG=/dev/null RCLONE_CONFIG_BENCH_TYPE=s3 RCLONE_CONFIG_BENCH_PROVIDER=Other \
  RCLONE_CONFIG_BENCH_ENDPOINT="http://127.0.0.1:$port" RCLONE_CONFIG_BENCH_ACCESS_KEY_ID=bench \
  RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY=bench-secret RCLONE_CONFIG_BENCH_REGION=us-east-1

now() { date +%s.%N; }
rate() { echo "$bytes / $1 / 1048576" | bc -l; }

restic --cache-dir "$work/cache" init -q
t0=$(now)
restic --cache-dir "$work/cache" backup -q --host bench "$work/src"
backup_s=$(echo "$(now) - $t0" | bc)

# Upload the tree for rclone too (not timed: the floor is the download).
rclone copy "$work/src" bench:bench/plain

sync
t0=$(now)
restic --cache-dir "$work/restore-cache" restore latest --target "$work/restic" -q
restic_s=$(echo "$(now) - $t0" | bc)

sync
t0=$(now)
restic --cache-dir "$work/restore-cache-2" restore latest --target "$work/restic-verify" --verify -q
verify_s=$(echo "$(now) - $t0" | bc)

sync
t0=$(now)
rclone copy bench:bench/plain "$work/rclone"
rclone_s=$(echo "$(now) - $t0" | bc)

sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
same=no
if cmp -s <(sums "$work/src") <(sums "$work/restic$work/src") && cmp -s <(sums "$work/src") <(sums "$work/rclone"); then
  same=yes
fi

printf 'tree: %s files, %s bytes (%s MiB); restic %s, rclone %s\n' "$files" "$bytes" "$size_mib" \
  "$(restic version | cut -d' ' -f2)" "$(rclone version | head -1 | cut -d' ' -f2)"
printf 'restic backup (for reference):        %6.1f s  (%5.0f MiB/s)\n' "$backup_s" "$(rate "$backup_s")"
printf 'restic restore latest:                %6.1f s  (%5.0f MiB/s)\n' "$restic_s" "$(rate "$restic_s")"
printf 'restic restore latest --verify:       %6.1f s  (%5.0f MiB/s; what playbooks/restore.yml runs)\n' \
  "$verify_s" "$(rate "$verify_s")"
printf 'plain rclone copy (floor):            %6.1f s  (%5.0f MiB/s)\n' "$rclone_s" "$(rate "$rclone_s")"
printf 'restic restore / floor:               %6.2f x the time\n' "$(echo "$restic_s / $rclone_s" | bc -l)"
printf 'restored trees byte-identical (sha256): %s\n' "$same"
[[ $same == yes ]]
