#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A served transfer against the one-shot pair, and iperf3, across a veth
# between two network namespaces, at MTU 1500 and 9000: /dev/zero -> null,
# the same methods, -w 0 (autotuning) on every socket, alternating rounds,
# medians (receiver's MB/s).
# Usage: scripts/bench-serve.sh [SIZE=1Gi] [ROUNDS=5] [METHOD=rw]
# PIN=S,R pins every sender to CPU S and every receiver (the server and its
# sessions too) to CPU R, all three programs alike; PIN= lets the scheduler
# decide. RAW=1 prints every round's figure on stderr.
set -euo pipefail

size=${1:-1Gi}
rounds=${2:-5}
m=${3:-rw}
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
. "$here/scripts/bench-lib.sh"
bytes=$(bench_size "$size") || exit 2
PIN=${PIN-0,1}	# unlike the loopback scripts, pinned unless PIN= says not
bench_pin
[ "$(id -u)" = 0 ] || { echo "needs root for the namespaces" >&2; exit 2; }
command -v iperf3 >/dev/null && command -v jq >/dev/null ||
	{ echo "needs iperf3 and jq (scripts/deps.sh)" >&2; exit 2; }

dir=$(mktemp -d /var/tmp/dnd-serve-bench.XXXXXX)
pids=()
. "$here/scripts/netns.sh"
netns_pair 10.233.0
a=$NS_A b=$NS_B
A=(ip netns exec "$a") B=(ip netns exec "$b")
A+=("${S[@]}") B+=("${R[@]}")
port=$((21000 + RANDOM % 20000))

mkdir "$dir/srv"
# A peer in another namespace is not loopback: the server wants a key.
(umask 077 && "$DND" serve --new-key "$dir/key" 2>/dev/null)
"${B[@]}" "$DND" serve --dir "$dir/srv" -p "$port" --key "$dir/key" \
	-w 0 --allow 10.233.0.0/24 >"$dir/serve.log" 2>&1 &
pids+=("$!")
sleep 0.5

one() { # one KIND: a measurement, MB/s on stdout
	local p=$((port + 1 + RANDOM % 1000))
	case $1 in
	oneshot)
		"${B[@]}" timeout 120 "$DND" recv -p "$p" -m null -w 0 --json \
			/dev/null >"$dir/r.json" 2>/dev/null &
		sleep 0.3
		"${A[@]}" timeout 120 "$DND" send -c 10.233.0.2 -p "$p" -m "$m" -w 0 \
			-l "$bytes" /dev/zero >/dev/null 2>&1
		wait $! || true
		jq -r .mb_per_s "$dir/r.json" ;;
	served)
		"${A[@]}" timeout 120 "$DND" send -c 10.233.0.2 -p "$port" -m "$m" -w 0 \
			--key "$dir/key" --peer-end null --peer-method null \
			-l "$bytes" --json /dev/zero >"$dir/s.json" 2>/dev/null
		jq -r '.peer_report.mb_per_s // empty' "$dir/s.json" ;;
	iperf3)
		"${B[@]}" timeout 120 iperf3 -s -1 -p "$p" >/dev/null 2>&1 &
		sleep 0.3
		"${A[@]}" timeout 120 iperf3 -c 10.233.0.2 -p "$p" -n "$bytes" -J \
			2>/dev/null | jq -r '.end.sum_received.bits_per_second / 8e6'
		wait $! || true ;;
	esac
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 }
	END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

echo "size $size, $rounds rounds, send -m $m -> null; receiver's MB/s, medians;" \
	"CPUs (sender,receiver): ${PIN:-unpinned}"
printf '%-5s %10s %10s %10s %13s\n' MTU iperf3 one-shot served served/one-shot
for mtu in 1500 9000; do
	ip -n "$a" link set "$VETH_A" mtu "$mtu"
	ip -n "$b" link set "$VETH_B" mtu "$mtu"
	declare -A v=()
	for r in $(seq 1 "$rounds"); do
		for k in oneshot served iperf3; do
			v[$k]+=" $(one "$k")"
		done
	done
	[ -z "${RAW:-}" ] || for k in oneshot served iperf3; do echo "  $mtu $k:${v[$k]}" >&2; done
	i=$(median <<<"${v[iperf3]}")
	o=$(median <<<"${v[oneshot]}")
	s=$(median <<<"${v[served]}")
	awk -v t="$mtu" -v i="$i" -v o="$o" -v s="$s" 'BEGIN {
		printf "%-5s %10.0f %10.0f %10.0f %12.3fx\n", t, i, o, s, s / o }'
	unset v
done
