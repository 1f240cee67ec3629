#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# File -> TCP loopback -> file against the device's own O_DIRECT write rate,
# in one run: fio --direct=1 --ioengine=libaio --bs=1M --iodepth=16 (with
# end_fsync) writes SIZE into DIR; dnd rw -> rw lands the same bytes from a
# hot source there: buffered; with --direct on the receiver (the hot source
# read from the page cache, as it should be); and with --direct on both ends
# (what a cold source gets: the sender's O_DIRECT reads, --qd ahead).
# Rounds alternate; the device's rate swings from run to run on a VM, so
# only the ratios within one run mean anything. dnd's rate is the
# receiver's: from the first byte to the end of its fdatasync (the 2006 thread's
# clock); "total" is the sender's wall clock up to the receiver's verified
# confirmation.
# Usage: scripts/bench-direct.sh [SIZE=1Gi] [ROUNDS=3] [DIR=/var/tmp]
# Env: ARGS, more options for both dnd ends (e.g. "-w 0 -b 1Mi").
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
. "$here/scripts/bench-lib.sh"
SIZE=${1:-1Gi}
ROUNDS=${2:-3}
DIR=${3:-/var/tmp}
command -v fio >/dev/null || "$here/scripts/deps.sh" refs
command -v jq >/dev/null || { echo "bench-direct: jq missing" >&2; exit 2; }
bytes=$(numfmt --from=iec-i "$SIZE")
W=$(mktemp -d "$DIR/dnd-direct.XXXXXX")
trap 'rm -rf "$W"' EXIT
head -c "$bytes" /dev/urandom >"$W/src"
cat "$W/src" >/dev/null
port=$((20000 + RANDOM % 30000))

fio_round() {
	fio --name=dev --filename="$W/fio" --rw=write --direct=1 \
		--ioengine=libaio --bs=1M --iodepth=16 --size="$bytes" \
		--end_fsync=1 --output-format=json >"$W/fio.json"
	rm -f "$W/fio"
	jq '.jobs[0].write.bw_bytes / 1e6 | floor' "$W/fio.json"
}

# dnd_round "RECV-ARGS" "SEND-ARGS": one transfer (both also get ARGS);
# prints "receiver-MB/s total-seconds".
dnd_round() {
	port=$((port + 1))
	rm -f "$W/dst"
	# shellcheck disable=SC2086
	timeout 300 "$DND" recv -p "$port" --json ${ARGS:-} $1 "$W/dst" >"$W/r.json" \
		2>/dev/null &
	local rp=$! i
	for i in $(seq 100); do
		ss -Htln "sport = :$port" | grep -q . && break
		sleep 0.05
	done
	# shellcheck disable=SC2086
	timeout 300 "$DND" send -c 127.0.0.1 -p "$port" --connect-timeout 10 --json ${ARGS:-} $2 \
		"$W/src" >"$W/s.json"
	wait "$rp"
	printf '%s %s\n' "$(jq '.mb_per_s | floor' "$W/r.json")" \
		"$(jq '.total_seconds * 1000 | floor / 1000' "$W/s.json")"
}

echo "# dnd ${ARGS:-(defaults)}: $SIZE hot source -> loopback -> $DIR ($(df --output=source "$DIR" | tail -1)), $(uname -r)"
echo "| round | fio O_DIRECT MB/s | dnd rw MB/s (total s) | recv --direct MB/s (total s) | both --direct MB/s (total s) |"
echo "| --- | --- | --- | --- | --- |"
f=() b=() d=() e=() q=()
for r in $(seq "$ROUNDS"); do
	f+=("$(fio_round)")
	# The buffered round fills the page cache with fresh pages; the others
	# write around it (bench_warm says why this matters on this VM).
	bench_warm "$bytes"
	read -r bm bt < <(dnd_round "-m rw" "-m rw")
	read -r dm dt < <(dnd_round "-m rw --direct" "-m rw")
	read -r em et < <(dnd_round "-m rw --direct" "-m rw --direct")
	b+=("$bm") d+=("$dm") e+=("$em")
	q+=("$(echo "scale=3; $dm / ${f[-1]}" | bc)")
	echo "| $r | ${f[-1]} | $bm ($bt) | $dm ($dt) | $em ($et) |"
done
med() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mf=$(med "${f[@]}") mb=$(med "${b[@]}") md=$(med "${d[@]}") me=$(med "${e[@]}")
r() { echo "scale=2; $1 / $mf" | bc; }
echo "medians: fio $mf, dnd rw $mb ($(r "$mb")x), recv --direct $md ($(r "$md")x), both --direct $me ($(r "$me")x); recv --direct / fio per round, median $(med "${q[@]}")x"
