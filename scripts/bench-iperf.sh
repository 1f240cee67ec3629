#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd's zero -> null paths against iperf3 -l 1M on loopback, in alternating
# rounds, as medians: the network path alone (dnd's receiver is -m null,
# recv(MSG_TRUNC), so neither side touches a file). Every dnd end gets
# ARGS; iperf3 gets -l 1M and nothing else. Both leave the socket buffers
# to autotuning unless ARGS gives dnd a -w (dnd send and recv autotune by
# default; only the 2006 form keeps that program's 128 KiB).
# iperf3 3.12 (Debian 12) has no --skip-rx-copy: its receiver copies every
# byte to user memory. The rw:rw row is dnd doing the same (recv -m rw into
# /dev/null), the like-for-like comparison.
# dnd's buffer is 512 KiB: with the 1 MiB L2 of this VM's CPUs a 1 MiB
# source no longer stays in cache while it is copied into the socket.
# Measured (rw -> null, 4 GiB, 9 alternating rounds, both ends at -b):
# median 3588 MB/s at 512Ki against 2807 at 1Mi, sender 252 us/MB against
# 291. iperf3 was not faster at -l 512K (5 rounds: 2177 against 2484).
# Usage: scripts/bench-iperf.sh [SIZE=4Gi] [ROUNDS=7] [METHODS]
#   METHODS  sender methods, each with :RECV for a receiver other than null
#            (default "rw splice vmsplice rw:rw")
# Env: ARGS (default "-b 512Ki --pipe-size 1Mi -w 0"); PIN=S,R pins every
# sender to CPU S and every receiver to CPU R (default: unpinned).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
SIZE=${1:-4Gi}
ROUNDS=${2:-7}
METHODS=${3:-rw splice vmsplice rw:rw}
ARGS=${ARGS--b 512Ki --pipe-size 1Mi -w 0}
command -v iperf3 >/dev/null && command -v jq >/dev/null ||
	{ echo "bench-iperf: needs iperf3 and jq (scripts/deps.sh)" >&2; exit 2; }
. "$here/scripts/bench-lib.sh"
bytes=$(bench_size "$SIZE") || exit 2
bench_pin
W=$(mktemp -d "${TMPDIR:-/tmp}/dnd-iperf.XXXXXX")
spid=
trap '[ -z "$spid" ] || kill "$spid" 2>/dev/null; rm -rf "$W"' EXIT
port=$((20000 + RANDOM % 30000))

iperf_round() { # MB/s received
	port=$((port + 1))
	"${R[@]}" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	spid=$!
	bench_listening "$port"
	"${S[@]}" iperf3 -c 127.0.0.1 -p "$port" -n "$bytes" -l 1M -J >"$W/ip.json" 2>/dev/null || true
	wait "$spid" || true
	spid=
	jq '.end.sum_received.bits_per_second / 8e6 | floor' "$W/ip.json"
}

dnd_round() { # dnd_round SEND[:RECV]: the receiver's MB/s, or "failed"
	local rm=null
	[ "$1" = "${1#*:}" ] || rm=${1#*:}
	port=$((port + 1))
	# shellcheck disable=SC2086
	"${R[@]}" "$DND" recv -p "$port" -m "$rm" --json $ARGS /dev/null >"$W/r.json" 2>"$W/r.err" &
	spid=$!
	bench_listening "$port"
	# shellcheck disable=SC2086
	"${S[@]}" "$DND" send -c 127.0.0.1 -p "$port" --connect-timeout 10 -m "${1%%:*}" -l "$bytes" --json $ARGS /dev/zero \
		>"$W/s.json" 2>"$W/s.err" || true
	wait "$spid" || true
	spid=
	jq -e .ok "$W/r.json" >/dev/null 2>&1 && jq '.mb_per_s | floor' "$W/r.json" ||
		{ echo "bench-iperf: $1 failed: $(head -n 2 "$W/s.err" "$W/r.err" | tr '\n' ' ')" >&2; echo failed; }
}

echo "# zero -> null on loopback, $SIZE, $ROUNDS alternating rounds, $(uname -r), $(nproc) CPUs"
echo "# dnd: send -m S $ARGS -> recv -m R (S:R; R null when not given) $ARGS; iperf3 -l 1M; CPUs: ${PIN:-unpinned}"
echo "# steal: the host's share of all CPUs during each run (/proc/stat); a run with more steal ran slower than its code"
declare -A v st
ip=() ips=()
for r in $(seq "$ROUNDS"); do
	k0=$(bench_ticks)
	ip+=("$(iperf_round)")
	ips+=("$(bench_steal_pct "$k0" "$(bench_ticks)")")
	line="round $r: iperf3 ${ip[-1]} (steal ${ips[-1]}%)"
	for m in $METHODS; do
		k0=$(bench_ticks)
		x=$(dnd_round "$m")
		s=$(bench_steal_pct "$k0" "$(bench_ticks)")
		v[$m]+=" $x"
		st[$m]+=" $s"
		line+=", $m $x ($s%)"
	done
	echo "# $line"
done
ref=$(bench_median "${ip[@]}")
echo
echo "| path | median MB/s | vs iperf3 -l 1M | median steal % |"
echo "| --- | --- | --- | --- |"
echo "| iperf3 -l 1M | $ref | 1.00x | $(bench_median "${ips[@]}") |"
for m in $METHODS; do
	# shellcheck disable=SC2086
	x=$(bench_median ${v[$m]})
	rm=null
	[ "$m" = "${m#*:}" ] || rm="${m#*:} (/dev/null)"
	[ "$x" = failed ] && { echo "| dnd ${m%%:*} -> $rm | failed | | |"; continue; }
	# shellcheck disable=SC2086
	echo "| dnd ${m%%:*} -> $rm | $x | $(echo "scale=2; $x / $ref" | bc)x | $(bench_median ${st[$m]}) |"
done
