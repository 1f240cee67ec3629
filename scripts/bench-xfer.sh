#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The transfer core's benchmark: every send x receive pair, zero -> null and
# file -> file, next to iperf3 (default and -l 1M) measured in the same run
# on the same loopback path. Prints a Markdown table; ratios are against
# iperf3 -l 1M from this run. Usage: scripts/bench-xfer.sh [SIZE] [DNDARGS]
#   SIZE     bytes per cell (default 4Gi)
#   DNDARGS  extra options for both sides (default "-b 64Ki", the 2006 program's)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
SIZE=${1:-4Gi}
ARGS=${2:-}
command -v iperf3 >/dev/null || { echo "bench-xfer: iperf3 missing (scripts/deps.sh)" >&2; exit 2; }
command -v jq >/dev/null || { echo "bench-xfer: jq missing (scripts/deps.sh)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/var/tmp}/dnd-bench.XXXXXX")
ipid=
trap '[ -z "$ipid" ] || kill "$ipid" 2>/dev/null; rm -rf "$W"' EXIT
bytes=$(numfmt --from=iec-i "$SIZE") || { echo "bench-xfer: SIZE like 4Gi or 300Mi" >&2; exit 2; }
port=$((20000 + RANDOM % 30000))

iperf() { # iperf LABEL ARGS...: Gbit/s and CPU us/MB (sender+receiver)
	local label=$1; shift
	port=$((port + 1))
	iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	ipid=$!
	sleep 0.3
	iperf3 -c 127.0.0.1 -p "$port" -n "$bytes" --json "$@" >"$W/ip.json"
	wait "$ipid" || true
	ipid=
	jq -r --arg l "$label" '.end as $e |
		($e.sum_received.bits_per_second / 1e9) as $g |
		($e.sum_received.seconds) as $s |
		($e.sum_received.bytes / 1e6) as $mb |
		"| \($l) | \($g * 100 | round / 100) | \(($e.cpu_utilization_percent.host_total / 100 * $s * 1e6 / $mb) | round) | \(($e.cpu_utilization_percent.remote_total / 100 * $s * 1e6 / $mb) | round) | |"' "$W/ip.json"
	jq -r '.end.sum_received.bits_per_second / 1e9' "$W/ip.json" >"$W/ip.$label"
}

cell() { # cell SRC DST SEND RECV: one dnd transfer, a table row
	local src=$1 dst=$2 sm=$3 rm=$4 lim=
	port=$((port + 1))
	[ "$src" = /dev/zero ] && lim="-l $bytes"
	[ "$dst" = /dev/null ] || rm -f "$dst"
	# shellcheck disable=SC2086
	"$DND" recv -p "$port" --json -m "$rm" $ARGS "$dst" >"$W/r.json" 2>"$W/r.err" &
	local rp=$!
	# shellcheck disable=SC2086
	"$DND" send -c 127.0.0.1 -p "$port" --connect-timeout 10 --json -m "$sm" $lim $ARGS "$src" >"$W/s.json" 2>"$W/s.err" || true
	wait "$rp" || true
	if ! jq -e .ok "$W/s.json" >/dev/null 2>&1 || ! jq -e .ok "$W/r.json" >/dev/null 2>&1; then
		echo "| $sm -> $rm | failed: $(cat "$W/s.err" "$W/r.err" | head -n 2 | tr '\n' ' ') | | | |"
		return
	fi
	jq -rn --slurpfile s "$W/s.json" --slurpfile r "$W/r.json" --arg l "$sm -> $rm" \
		--argjson ref "$(cat "$W/ip.l1M")" '
		"| \($l) | \($r[0].gbit_per_s * 100 | round / 100) (\($r[0].gbit_per_s / $ref * 100 | round / 100)x) | \($s[0] | (.cpu_us_per_mb // .cpu_usec_per_mb) | round) | \($r[0] | (.cpu_us_per_mb // .cpu_usec_per_mb) | round) | \($r[0].verdict) |"'
}

echo "# dnd transfer benchmark, $(uname -r), $(nproc) CPUs, $(date -u +%FT%TZ)"
echo "# $SIZE per cell; dnd options: ${ARGS:-(defaults: -b 64Ki, window autotuned)}; ratios vs iperf3 -l 1M below"
echo
echo "| what | Gbit/s | send CPU us/MB | recv CPU us/MB | verdict |"
echo "| --- | --- | --- | --- | --- |"
iperf default
iperf l1M -l 1M
for sm in rw mmap sendfile splice vmsplice; do
	for rm in rw splice vmsplice null; do
		cell /dev/zero /dev/null "$sm" "$rm"
	done
done
head -c "$bytes" /dev/urandom >"$W/src"
cat "$W/src" >/dev/null
for sm in rw mmap sendfile splice vmsplice; do
	for rm in rw mmap splice vmsplice; do
		cell "$W/src" "$W/dst" "$sm" "$rm" | sed 's/^| /| file: /'
	done
done
