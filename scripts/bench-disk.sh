#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# file -> network -> file against what the disk alone takes, in one run:
# fio's buffered sequential write, 64k, synced (the 2006 thread's job with
# end_fsync, and the same with writeback started every 8 MiB as it goes,
# fio's sync_file_range=write:128), the better of the two being the disk's
# figure; dnd send | dnd recv over loopback lands the same bytes into the
# same directory and syncs them (--sync stream: the same writeback policy).
# Rounds alternate the tools.
# Usage: scripts/bench-disk.sh [SIZE=2Gi] [ROUNDS=3] [DIR=/var/tmp] ["S R" ...]
#   pairs of send/recv methods, default "splice rw" "sendfile rw" "mmap rw"
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
SIZE=${1:-2Gi}
ROUNDS=${2:-3}
DIR=${3:-/var/tmp}
shift $(($# < 3 ? $# : 3))
[ $# -gt 0 ] || set -- "splice rw" "sendfile rw" "mmap rw"
pairs=("$@")
command -v fio >/dev/null || "$here/scripts/deps.sh" refs
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
sed 's/^\[disk\]$/[stream]\nsync_file_range=write:128/' "$W/disk.fio" >"$W/stream.fio"
port=$((20000 + RANDOM % 30000))
echo "# file -> TCP loopback -> file vs fio buffered write (end_fsync), $SIZE, $(uname -r)"
printf '| round | fio end_fsync | fio streaming |'
for p in "${pairs[@]}"; do printf ' %s MiB/s (x better fio) |' "${p/ / -> }"; done
echo
printf '| --- | --- | --- |'
for p in "${pairs[@]}"; do printf ' --- |'; done
echo
for r in $(seq 1 "$ROUNDS"); do
	fio --output-format=json "$W/disk.fio" >"$W/fio.json"
	fio --output-format=json "$W/stream.fio" >"$W/fio2.json"
	a=$(jq '.jobs[0].write.bw / 1024' "$W/fio.json")
	b=$(jq '.jobs[0].write.bw / 1024' "$W/fio2.json")
	disk=$(echo "$a $b" | awk '{ print ($1 > $2) ? $1 : $2 }')
	printf '| %s | %.0f | %.0f |' "$r" "$a" "$b"
	for p in "${pairs[@]}"; do
		sm=${p% *} rm=${p#* }
		port=$((port + 1))
		rm -f "$W/dst"
		"$DND" recv -p "$port" -m "$rm" -b 1Mi -w 0 --sync stream --json "$W/dst" >"$W/r.json" 2>/dev/null &
		"$DND" send -c 127.0.0.1 -p "$port" --connect-timeout 10 -m "$sm" -b 1Mi --pipe-size 1Mi -w 0 "$W/src" >/dev/null 2>&1 || true
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
