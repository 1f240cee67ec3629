#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# file -> network -> file against what the disk alone takes, in one run:
# fio's buffered sequential write with end_fsync (seed 000's job) is the
# disk's figure; dnd send | dnd recv over loopback lands the same bytes
# into the same directory and syncs them. Rounds alternate the two.
# Usage: scripts/bench-disk.sh [SIZE=2Gi] [ROUNDS=3] [DIR=/var/tmp] ["S R" ...]
#   pairs of send/recv methods, default "uring rw" "mmap rw" "rw vmsplice"
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
SIZE=${1:-2Gi}
ROUNDS=${2:-3}
DIR=${3:-/var/tmp}
shift $(($# < 3 ? $# : 3))
[ $# -gt 0 ] || set -- "uring rw" "mmap rw" "rw vmsplice"
pairs=("$@")
command -v fio >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null
bytes=$(numfmt --from=iec-i "$SIZE")
W=$(mktemp -d "$DIR/dnd-disk.XXXXXX")
trap 'rm -rf "$W"' EXIT
head -c "$bytes" /dev/urandom >"$W/src"
cat "$W/src" >/dev/null
cat >"$W/disk.fio" <<JOB
[disk]
ioengine=sync
bs=64k
rw=write
size=$bytes
end_fsync=1
unlink=1
directory=$W
JOB
port=$((20000 + RANDOM % 30000))
echo "# file -> TCP loopback -> file vs fio buffered write (end_fsync), $SIZE, $(uname -r)"
printf '| round | fio disk MiB/s |'
for p in "${pairs[@]}"; do printf ' %s MiB/s (x disk) |' "${p/ / -> }"; done
echo
printf '| --- | --- |'
for p in "${pairs[@]}"; do printf ' --- |'; done
echo
for r in $(seq 1 "$ROUNDS"); do
	fio --output-format=json "$W/disk.fio" >"$W/fio.json"
	disk=$(jq '.jobs[0].write.bw / 1024' "$W/fio.json")
	printf '| %s | %.0f |' "$r" "$disk"
	for p in "${pairs[@]}"; do
		sm=${p% *} rm=${p#* }
		port=$((port + 1))
		rm -f "$W/dst"
		"$DND" recv -p "$port" -m "$rm" -b 1Mi -w 0 --json "$W/dst" >"$W/r.json" 2>/dev/null &
		"$DND" send -c 127.0.0.1 -p "$port" -m "$sm" -b 1Mi -w 0 "$W/src" >/dev/null 2>&1 || true
		wait $! || true
		# Free the pages now: the next run (fio's, or the next pair's)
		# then reuses them, as each run here reuses its predecessor's.
		# This VM hands freed memory back to the host after a moment,
		# and touching such memory again costs several times more.
		rm -f "$W/dst"
		jq -r --argjson d "$disk" 'if .ok then
			" \(.mb_per_s * 1e6 / 1048576 | round) (\(.mb_per_s * 1e6 / 1048576 / $d * 100 | round / 100)x, \(.verdict)) |"
			else " failed: \(.error) |" end' "$W/r.json" | tr -d '\n'
	done
	echo
done
