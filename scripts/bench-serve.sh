#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A served transfer against the one-shot pair, and iperf3, across a veth
# between two network namespaces, at MTU 1500 and 9000: /dev/zero -> null,
# the same methods, -w 0 (autotuning) on every socket, the same key: a
# peer in another namespace is not loopback, so the server wants a key and
# the one-shot pair gets it too (both TLS 1.3; without kernel TLS the
# records are sealed in user space, which is most of the CPU: a keyless
# one-shot pair beside a keyed server measured TLS, not serving). KEY=0
# compares keyless instead, both ends on the loopback of one namespace (a
# keyless server serves loopback only), where the methods that need
# kernel TLS to go keyed (splice, vmsplice...) run too. Alternating rounds
# (the one-shot pair and the served push swap places every round), medians
# of the receiver's MB/s. Throughput on this shared VM swings 2x between
# rounds, so the cost of serving is also given as the median of each
# round's own served/one-shot ratio, and as CPU per MB on both ends (the
# sender's includes the softirq work it is charged for). Last, what a
# session costs once, whatever its size: the sender's wall clock for 1 MiB,
# one-shot against served (fork, key proofs, the server's report), over
# 4 x ROUNDS alternating runs at MTU 1500.
# Usage: scripts/bench-serve.sh [SIZE=1Gi] [ROUNDS=5] [METHOD=rw]
# PIN=S,R pins every sender to CPU S and every receiver (the server and its
# sessions too) to CPU R, all three programs alike; PIN= lets the scheduler
# decide. RAW=1 prints every round's figures on stderr. Each row ends with
# the steal over its rounds (% of all CPUs).
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
B=(ip netns exec "$b")
port=$((21000 + RANDOM % 20000))
mkdir "$dir/srv"
if [ "${KEY:-1}" = 0 ]; then
	A=("${B[@]}") to=127.0.0.1 key=() mtus=lo
	served=("$DND" serve --dir "$dir/srv" -p "$port" -w 0)
else
	A=(ip netns exec "$a") to=10.233.0.2 key=(--key "$dir/key") mtus="1500 9000"
	"$DND" probe --require ktls >/dev/null 2>&1 || case $m in
	rw | mmap) ;;
	*) echo "-m $m with a key needs kernel TLS, which this kernel lacks;" \
		"KEY=0 compares keyless on loopback" >&2; exit 2 ;;
	esac
	(umask 077 && "$DND" serve --new-key "$dir/key" 2>/dev/null)
	served=("$DND" serve --dir "$dir/srv" -p "$port" "${key[@]}" -w 0
		--allow 10.233.0.0/24)
fi
A+=("${S[@]}") B+=("${R[@]}")
# listening PORT: waits up to 5 s for a listener in $b.
listening() { ip netns exec "$b" bash -c ". '$here/scripts/bench-lib.sh'; bench_listening $1"; }
"${B[@]}" "${served[@]}" >"$dir/serve.log" 2>&1 &
pids+=("$!")
listening "$port" || { echo "dnd serve did not listen: $(cat "$dir/serve.log")" >&2; exit 1; }

one() { # one KIND: "MB/s sender-us/MB receiver-us/MB" on stdout
	local p=$((port + 1 + RANDOM % 1000))
	case $1 in
	oneshot)
		"${B[@]}" timeout 120 "$DND" recv -p "$p" -m null -w 0 "${key[@]}" \
			--json /dev/null >"$dir/r.json" 2>/dev/null &
		listening "$p" || true
		"${A[@]}" timeout 120 "$DND" send -c "$to" -p "$p" --connect-timeout 10 -m "$m" -w 0 \
			"${key[@]}" -l "$bytes" --json /dev/zero >"$dir/s.json" 2>/dev/null || true
		wait $! || true
		jq -rs '"\(.[1].mb_per_s) \(.[0].cpu_us_per_mb) \(.[1].cpu_us_per_mb)"' \
			"$dir/s.json" "$dir/r.json" ;;
	served)
		"${A[@]}" timeout 120 "$DND" send -c "$to" -p "$port" --connect-timeout 10 -m "$m" -w 0 \
			"${key[@]}" --peer-end null --peer-method null \
			-l "$bytes" --json /dev/zero >"$dir/s.json" 2>/dev/null || true
		jq -r '"\(.peer_report.mb_per_s) \(.cpu_us_per_mb) \(.peer_report.cpu_us_per_mb)"' \
			"$dir/s.json" ;;
	iperf3)
		"${B[@]}" timeout 120 iperf3 -s -1 -p "$p" >/dev/null 2>&1 &
		listening "$p" || true
		"${A[@]}" timeout 120 iperf3 -c "$to" -p "$p" -n "$bytes" -J \
			2>/dev/null | jq -r '"\(.end.sum_received.bits_per_second / 8e6) 0 0"'
		wait $! || true ;;
	esac
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 }
	END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

echo "size $size, $rounds rounds, send -m $m -> null; receiver's MB/s, medians;" \
	"CPUs (sender,receiver): ${PIN:-unpinned};" \
	"$([ ${#key[@]} = 0 ] && echo "keyless on loopback" || echo "keyed (TLS 1.3) both")"
printf '%-5s %8s %9s %8s %9s %9s %17s %17s %6s\n' MTU iperf3 one-shot served \
	served/one "per-round" "one-shot us/MB" "served us/MB" steal
printf '%-5s %8s %9s %8s %9s %9s %17s %17s %6s\n' '' '' '' '' medians ratio \
	"send recv" "send recv" "%"
for mtu in $mtus; do
	[ "$mtu" = lo ] || ip -n "$a" link set "$VETH_A" mtu "$mtu"
	[ "$mtu" = lo ] || ip -n "$b" link set "$VETH_B" mtu "$mtu"
	t0=$(bench_ticks)
	declare -A v=() cs=() cr=()
	ratios=
	for r in $(seq 1 "$rounds"); do
		order="oneshot served iperf3"
		[ $((r % 2)) = 1 ] || order="served oneshot iperf3"
		for k in $order; do
			read -r x s_us r_us <<<"$(one "$k")"
			v[$k]+=" $x" cs[$k]+=" $s_us" cr[$k]+=" $r_us"
		done
		ratios+=" $(awk -v s="${v[served]##* }" -v o="${v[oneshot]##* }" \
			'BEGIN { if (s + 0 > 0 && o + 0 > 0) print s / o }')"
	done
	[ -z "${RAW:-}" ] || for k in oneshot served iperf3; do
		echo "  $mtu $k MB/s:${v[$k]}; send us/MB:${cs[$k]}; recv us/MB:${cr[$k]}" >&2
	done
	[ -z "${RAW:-}" ] || echo "  $mtu served/one-shot per round:$ratios" >&2
	awk -v t="$mtu" -v i="$(median <<<"${v[iperf3]}")" \
		-v o="$(median <<<"${v[oneshot]}")" -v s="$(median <<<"${v[served]}")" \
		-v q="$(median <<<"$ratios")" \
		-v os="$(median <<<"${cs[oneshot]}")" -v or="$(median <<<"${cr[oneshot]}")" \
		-v ss="$(median <<<"${cs[served]}")" -v sr="$(median <<<"${cr[served]}")" \
		-v st="$(bench_steal_pct "$t0" "$(bench_ticks)")" 'BEGIN {
		printf "%-5s %8.0f %9.0f %8.0f %8.3fx %8.3fx %8.0f %8.0f %8.0f %8.0f %6.1f\n",
			t, i, o, s, s / o, q, os, or, ss, sr, st }'
	unset v cs cr
done

# The fixed cost: the whole `dnd send` of 1 MiB, as its user times it.
[ "$mtus" = lo ] || ip -n "$a" link set "$VETH_A" mtu 1500
[ "$mtus" = lo ] || ip -n "$b" link set "$VETH_B" mtu 1500
fo= fs=
for r in $(seq 1 $((4 * rounds))); do
	p=$((port + 1 + RANDOM % 1000))
	"${B[@]}" timeout 20 "$DND" recv -p "$p" -m null "${key[@]}" /dev/null >/dev/null 2>&1 &
	rp=$!
	listening "$p" || true
	t0=$(date +%s%N)
	"${A[@]}" timeout 20 "$DND" send -c "$to" -p "$p" --connect-timeout 10 -m "$m" -l 1Mi \
		"${key[@]}" /dev/zero >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	wait "$rp" || true
	"${A[@]}" timeout 20 "$DND" send -c "$to" -p "$port" --connect-timeout 10 -m "$m" \
		"${key[@]}" --peer-end null --peer-method null -l 1Mi \
		/dev/zero >/dev/null 2>&1 || true
	t2=$(date +%s%N)
	fo+=" $(((t1 - t0) / 1000))" fs+=" $(((t2 - t1) / 1000))"
done
[ -z "${RAW:-}" ] || echo "  1 MiB one-shot us:$fo; served us:$fs" >&2
awk -v o="$(median <<<"$fo")" -v s="$(median <<<"$fs")" -v n=$((4 * rounds)) 'BEGIN {
	printf "fixed cost: send 1 MiB, median of %d: one-shot %.2f ms, served %.2f ms" \
		" (+%.2f ms per transfer)\n", n, o / 1000, s / 1000, (s - o) / 1000 }'
