#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd across a far link (issue 25 targets): the delay line
# (scripts/delayline.sh, tests/tools/delayline) at a round trip and a rate,
# zero -> null from one namespace to the other, medians of alternating
# rounds, iperf3 through the same line in the same run:
#   dnd at its default window (autotuning), dnd -w 128Ki (the 2006
#   program's window, fewer bytes: it is slow), iperf3 at its defaults,
#   dnd -C bbr beside iperf3 -C bbr (the other rows run the namespace's
#   net.ipv4.tcp_congestion_control, which the header names), and dnd -P 4
#   beside iperf3 -P 4.
# First it measures the line's own ceiling (iperf3 at --delay 0, no rate,
# 5 s); when the asked rate is above it, the line runs at the ceiling.
# Usage: scripts/bench-link.sh [--delay 50ms] [--rate 1gbit] [--size 1Gi]
#          [--rounds 3] [--loss PCT] [--mtu 9000]
# As root, after make and make tools. Env: DND, DELAYLINE.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
export DELAYLINE=${DELAYLINE:-$here/build/tests/tools/delayline}
delay=50ms rate=1gbit size=1Gi rounds=3 loss=0 mtu=9000
while [ $# -gt 0 ]; do
	case $1 in
	--delay | --rate | --size | --rounds | --loss | --mtu)
		[ $# -ge 2 ] || { echo "bench-link: $1 needs a value" >&2; exit 2; }
		declare "${1#--}=$2"
		shift 2 ;;
	*) echo "bench-link: unknown option $1; see the top of $0" >&2; exit 2 ;;
	esac
done
command -v iperf3 >/dev/null && command -v jq >/dev/null ||
	{ echo "bench-link: needs iperf3 and jq (scripts/deps.sh)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-link: needs root for the namespaces" >&2; exit 2; }
[ -x "$DND" ] || { echo "bench-link: no $DND; run make (or set DND)" >&2; exit 2; }
. "$here/scripts/bench-lib.sh"
. "$here/scripts/delayline.sh"
bytes=$(bench_size "$size") || exit 2
slow=$((bytes / 8))	# -w 128Ki: a few MB/s at tens of ms
dir=$(mktemp -d /tmp/dnd-link.XXXXXX)
trap 'delayline_down >/dev/null 2>&1; rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM
port=$((20000 + RANDOM % 10000))

# up ARGS...: the line, or exit saying why.
up() { delayline_up --mtu "$mtu" --seconds 3600 "$@" || exit 1; }

# iperf N [BYTES [ARGS...]]: iperf3 -P N ARGS from A to B (5 s without
# BYTES or when it is empty); the receiver's MB/s.
iperf() {
	local out pid n=$1 b=${2:-}
	shift $(($# < 2 ? $# : 2))
	port=$((port + 1))
	ip netns exec "$DL_NS_B" timeout 900 iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	pid=$!
	ip netns exec "$DL_NS_B" bash -c ". '$here/scripts/bench-lib.sh'; bench_listening $port" ||
		{ echo failed; return; }
	if [ -n "$b" ]; then
		set -- -n "$b" "$@"
	else
		set -- -t 5 "$@"
	fi
	out=$(ip netns exec "$DL_NS_A" timeout 900 iperf3 -c "$DL_B" -p "$port" \
		-P "$n" -J "$@" 2>/dev/null) || true
	wait "$pid" || true
	jq -r '.end.sum_received.bits_per_second / 8e6 // "failed"' <<<"$out" 2>/dev/null ||
		echo failed
}

# dnd WINDOW N BYTES [ARGS...]: dnd send -P N ARGS of BYTES zeros, recv
# -m null, both at -w WINDOW (default: no -w, autotuning); the receiver's MB/s.
dnd() {
	local pid w=() n=$2 b=$3
	[ "$1" = default ] || w=(-w "$1")
	shift 3
	port=$((port + 1))
	ip netns exec "$DL_NS_B" timeout 900 "$DND" recv -p "$port" -m null \
		"${w[@]}" --json /dev/null >"$dir/r.json" 2>"$dir/r.err" &
	pid=$!
	ip netns exec "$DL_NS_A" timeout 900 "$DND" send -c "$DL_B" -p "$port" \
		"${w[@]}" -P "$n" -l "$b" --connect-timeout 10 "$@" /dev/zero \
		>/dev/null 2>"$dir/s.err" || true
	if wait "$pid"; then
		jq -r '.mb_per_s' "$dir/r.json"
	else
		echo failed
	fi
}

t0=$(bench_ticks)
up --delay 0
ceiling=$(iperf 1 | awk '{ print $1 == "failed" ? $1 : sprintf("%.0f", $1) }')
delayline_down >/dev/null
line_mbs=$(awk -v r="${rate%bit}" 'BEGIN { m = 1; u = tolower(substr(r, length(r)))
	if (u == "k") m = 1e3; else if (u == "m") m = 1e6; else if (u == "g") m = 1e9
	print (r + 0) * m / 8e6 }')
use=$rate
if awk -v c="$ceiling" -v l="$line_mbs" 'BEGIN { exit !(c != "failed" && c < l) }'; then
	use=$(awk -v c="$ceiling" 'BEGIN { printf "%.0fmbit", c * 8 }')
	line_mbs=$ceiling
fi
up --delay "$delay" --rate "$use" --loss "$loss"
rmem=$(ip netns exec "$DL_NS_B" cat /proc/sys/net/ipv4/tcp_rmem)
wmem=$(ip netns exec "$DL_NS_A" cat /proc/sys/net/ipv4/tcp_wmem)
cc=$(ip netns exec "$DL_NS_A" cat /proc/sys/net/ipv4/tcp_congestion_control)
cells="auto fixed iperf bbr iperfbbr auto4 iperf4"
declare -A v
for r in $(seq 1 "$rounds"); do
	for c in $cells; do
		case $c in
		auto) x=$(dnd default 1 "$bytes") ;;
		fixed) x=$(dnd 128Ki 1 "$slow") ;;
		iperf) x=$(iperf 1 "$bytes") ;;
		bbr) x=$(dnd default 1 "$bytes" -C bbr) ;;
		iperfbbr) x=$(iperf 1 "$bytes" -C bbr) ;;
		auto4) x=$(dnd default 4 "$bytes") ;;
		iperf4) x=$(iperf 4 "$bytes") ;;
		esac
		v[$c]+=" $x"
	done
	echo "round $r of $rounds: ${cells// /, } done" >&2
done
delayline_down >"$dir/line.out"
t1=$(bench_ticks)
own=$(times | tail -n1 | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/)
	print u[1] * 60 + u[2] + s[1] * 60 + s[2] }')

# shellcheck disable=SC2086
med() { bench_median ${v[$1]}; }
ip=$(med iperf) ipb=$(med iperfbbr) ip4=$(med iperf4)
echo "delay line: round trip $delay, rate $use ($line_mbs MB/s), loss $loss%, MTU $mtu;" \
	"its ceiling (iperf3 at 0 ms, no rate, 5 s): $ceiling MB/s"
echo "zero -> null, $size (-w 128Ki: $(numfmt --to=iec-i "$slow")B), $rounds alternating rounds," \
	"receiver's MB/s, medians; tcp_rmem $rmem, tcp_wmem $wmem, congestion control $cc"
printf '%-22s %9s %9s %9s  %s\n' cell MB/s x-line x-iperf3 rounds
row() {
	awk -v n="$1" -v m="$2" -v l="$line_mbs" -v i="$3" -v all="$4" 'BEGIN {
		if (m == "failed") { printf "%-22s %9s %9s %9s  %s\n", n, m, "-", "-", all; exit }
		printf "%-22s %9.1f %8.2fx %8.2fx  %s\n", n, m, m / l,
			(i == "failed" ? 0 : m / i), all }'
}
row "dnd (default window)" "$(med auto)" "$ip" "${v[auto]}"
row "dnd -w 128Ki" "$(med fixed)" "$ip" "${v[fixed]}"
row "iperf3 (defaults)" "$ip" "$ip" "${v[iperf]}"
row "dnd -C bbr" "$(med bbr)" "$ipb" "${v[bbr]}"
row "iperf3 -C bbr" "$ipb" "$ipb" "${v[iperfbbr]}"
row "dnd -P 4 (default window)" "$(med auto4)" "$ip4" "${v[auto4]}"
row "iperf3 -P 4" "$ip4" "$ip4" "${v[iperf4]}"
echo "(-C bbr and -P 4 rows: x-iperf3 is against iperf3 with the same option)"
grep -v '^delayline: stopped' "$dir/line.out"
awk -v w="${wmem##*[[:space:]]}" -v l="$line_mbs" -v d="${delay%ms}" 'BEGIN {
	bdp = l * 1e6 * d / 1000
	if (w + 0 < bdp) printf "note: tcp_wmem max %d B is below the line'"'"'s BDP %d B: one stream" \
		" (dnd or iperf3) sends at most about that much per round trip; -P N, or a" \
		" larger tcp_wmem max for both programs, lifts it\n", w, bdp }'
echo "machine: $(nproc) CPUs; others used $(bench_other_pct "$t0" "$t1" "$own")% of them," \
	"steal $(bench_steal_pct "$t0" "$t1")%, during the run (this run's processes, the" \
	"forwarder's included, left out; softirq work charged to no process stays in);" \
	"load average now $(cut -d' ' -f1-3 /proc/loadavg)"
