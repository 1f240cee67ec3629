#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -P N beside iperf3 -P N on the same path in the same run: zero -> null and
# file -> file with N = 1, 2, 4, on loopback and across a veth pair between
# two network namespaces with a tbf rate. Alternating rounds, medians.
# Usage: scripts/bench-streams.sh [SIZE=1Gi] [ROUNDS=3] [RATE=4gbit]
set -euo pipefail

size=${1:-1Gi}
rounds=${2:-3}
rate=${3:-4gbit}
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
command -v iperf3 >/dev/null || { echo "needs iperf3 (scripts/deps.sh)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root for the namespaces" >&2; exit 2; }

dir=$(mktemp -d /var/tmp/dnd-streams.XXXXXX)
pids=()
. "$here/scripts/netns.sh"
netns_pair 10.232.0
nsa=$NS_A nsb=$NS_B
ip netns exec "$nsa" tc qdisc add dev "$VETH_A" root tbf rate "$rate" \
	burst 1mb latency 50ms

head -c "$(numfmt --from=iec-i "$size")" /dev/urandom >"$dir/src"
bytes=$(stat -c %s "$dir/src")
port=$((20000 + RANDOM % 20000))

# run PATH WHAT N: one measurement in MB/s on stdout.
run() {
	local path=$1 what=$2 n=$3 s=() r=() host=127.0.0.1 out
	port=$((port + 1))
	if [ "$path" = veth ]; then
		s=(ip netns exec "$nsa")
		r=(ip netns exec "$nsb")
		host=10.232.0.2
	fi
	case $what in
	iperf3)
		"${r[@]}" timeout 120 iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
		pids+=("$!")
		sleep 0.3
		out=$("${s[@]}" timeout 120 iperf3 -c "$host" -p "$port" -P "$n" \
			-n "$bytes" -J 2>/dev/null)
		wait "${pids[-1]}" || true
		jq -r '.end.sum_received.bits_per_second / 8e6' <<<"$out" ;;
	zero | file)
		local src=/dev/zero dst=/dev/null rm=null
		[ "$what" = file ] && src=$dir/src dst=$dir/dst rm=rw
		rm -f "$dir/dst"
		"${r[@]}" timeout 120 "$DND" recv -p "$port" -m "$rm" -w 0 --json \
			"$dst" >"$dir/r.json" 2>/dev/null &
		pids+=("$!")
		"${s[@]}" timeout 120 "$DND" send -c "$host" -p "$port" -P "$n" \
			-w 0 -l "$bytes" --connect-timeout 5 --json "$src" \
			>/dev/null 2>&1
		wait "${pids[-1]}"
		jq -r '.mb_per_s' "$dir/r.json" ;;
	esac
}

declare -A v
for r in $(seq 1 "$rounds"); do
	for path in loopback veth; do
		for n in 1 2 4; do
			for what in iperf3 zero file; do
				v[$path/$what/$n]+=" $(run "$path" "$what" "$n")"
			done
		done
	done
	echo "round $r done" >&2
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 }
	END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
echo "size $size, $rounds rounds, veth tbf $rate; receiver's MB/s, medians"
printf '%-9s %3s %10s %10s %10s %8s %8s\n' path N iperf3 zero file zero/ip3 file/ip3
for path in loopback veth; do
	for n in 1 2 4; do
		i=$(median <<<"${v[$path/iperf3/$n]}")
		z=$(median <<<"${v[$path/zero/$n]}")
		f=$(median <<<"${v[$path/file/$n]}")
		awk -v p="$path" -v n="$n" -v i="$i" -v z="$z" -v f="$f" 'BEGIN {
			printf "%-9s %3s %10.0f %10.0f %10.0f %7.2fx %7.2fx\n",
				p, n, i, z, f, z / i, f / i }' 
	done
done
