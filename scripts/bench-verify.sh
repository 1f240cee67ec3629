#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What verification costs: each pair runs verified (the default) and with
# --no-verify on both ends, in alternating rounds on loopback, zero -> null
# and file -> file (a hot source; the target lands in DIR and is synced).
# Prints medians of the receiver's MB/s (the 2006 program's clock) and of the
# sender's total seconds (until the receiver's verified reply: what a user
# timing the command sees), and verified / --no-verify for both.
# Usage: scripts/bench-verify.sh [SIZE=1Gi] [ROUNDS=5] [PAIRS] [DIR=/var/tmp]
#   PAIRS  e.g. "rw>rw splice>vmsplice" (default: the best zero -> null
#          and file -> file pairs of scripts/bench-xfer.sh, "vmsplice>rw
#          rw>rw splice>rw"); zero -> null runs every pair whose receiver
#          can write to /dev/null (not mmap)
# Env: ARGS, options for both ends (default "-b 1Mi -w 0 --pipe-size 1Mi");
# PIN=S,R pins senders to CPU S and receivers to CPU R.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
SIZE=${1:-1Gi}
ROUNDS=${2:-5}
PAIRS=${3:-vmsplice>rw rw>rw splice>rw}
DIR=${4:-/var/tmp}
ARGS=${ARGS--b 1Mi -w 0 --pipe-size 1Mi}
command -v jq >/dev/null || { echo "bench-verify: jq missing (scripts/deps.sh)" >&2; exit 2; }
. "$here/scripts/bench-lib.sh"
bytes=$(bench_size "$SIZE") || exit 2
bench_pin
W=$(mktemp -d "$DIR/dnd-verify.XXXXXX")
rpid=
trap '[ -z "$rpid" ] || kill "$rpid" 2>/dev/null; rm -rf "$W"' EXIT
head -c "$bytes" /dev/urandom >"$W/src"
cat "$W/src" >/dev/null
port=$((20000 + RANDOM % 30000))

# one KIND SEND RECV EXTRA: "receiver-MB/s sender-total-seconds" or "failed"
one() {
	local src=$W/src dst=$W/dst lim=()
	[ "$1" = zero ] && src=/dev/zero dst=/dev/null lim=(-l "$bytes")
	port=$((port + 1))
	rm -f "$W/dst"
	[ "$1" = zero ] || bench_warm "$bytes"
	# shellcheck disable=SC2086
	"${R[@]}" "$DND" recv -p "$port" -m "$3" --json $ARGS $4 "$dst" >"$W/r.json" 2>"$W/r.err" &
	rpid=$!
	bench_listening "$port" || true
	# shellcheck disable=SC2086
	"${S[@]}" "$DND" send -c 127.0.0.1 -p "$port" --connect-timeout 10 -m "$2" "${lim[@]}" --json $ARGS $4 "$src" \
		>"$W/s.json" 2>"$W/s.err" || true
	wait "$rpid" || true
	rpid=
	if jq -e .ok "$W/r.json" >/dev/null 2>&1 && jq -e .ok "$W/s.json" >/dev/null 2>&1; then
		echo "$(jq '.mb_per_s | floor' "$W/r.json") $(jq '.total_seconds' "$W/s.json")"
	else
		echo "bench-verify: $1 $2>$3 $4 failed: $(head -n 2 "$W/s.err" "$W/r.err" | tr '\n' ' ')" >&2
		echo failed
	fi
}

ratio() { [ "$1" = failed ] || [ "$2" = failed ] && { echo -; return; }
	echo "scale=3; $1 / $2" | bc; }

echo "# verification's cost, $SIZE, $ROUNDS alternating rounds, $(uname -r), $(nproc) CPUs"
echo "# both ends: ${ARGS:-(defaults)}; CPUs: ${PIN:-unpinned}; file -> file lands in $DIR, memory warmed before each (bench-lib.sh)"
echo
echo "| pair | verified MB/s | --no-verify MB/s | ratio | verified total s | --no-verify total s | ratio |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for kind in zero file; do
	for pair in $PAIRS; do
		sm=${pair%>*} rm=${pair#*>}
		[ "$kind" = zero ] && [ "$rm" = mmap ] && continue
		vm=() vt=() nm=() nt=()
		for r in $(seq "$ROUNDS"); do
			# Alternate which goes first.
			for v in $([ $((r % 2)) = 1 ] && echo "v n" || echo "n v"); do
				if [ "$v" = v ]; then
					read -r a b < <(one "$kind" "$sm" "$rm" "")
					vm+=("$a") vt+=("${b:-failed}")
				else
					read -r a b < <(one "$kind" "$sm" "$rm" --no-verify)
					nm+=("$a") nt+=("${b:-failed}")
				fi
			done
		done
		m1=$(bench_median "${vm[@]}") m2=$(bench_median "${nm[@]}")
		t1=$(bench_median "${vt[@]}") t2=$(bench_median "${nt[@]}")
		# Seconds: the ratio that reads like the MB/s one is no-verify / verified.
		echo "| $kind $sm>$rm | $m1 | $m2 | $(ratio "$m1" "$m2")x | $t1 | $t2 | $(ratio "$t2" "$t1")x |"
	done
done
