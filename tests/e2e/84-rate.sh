#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --rate paces the sender (SO_MAX_PACING_RATE, TCP's own pacing: there is
# no fq qdisc here) on a veth pair between two namespaces: --rate 200M
# lands within 10% of 200 MB/s (the asked outcome: issue 25 allows this
# one rate check), and -P 2 --rate 100M splits the rate between the two
# streams (unsplit, each would go at 100 MB/s: 200 in all); a paced file
# lands byte-exact; dnd serve --rate paces a pull the same way.
# The report says the achieved rate against the asked one, text and JSON.
# The window defaults: autotuned for send/recv, 128 KiB for the 2006 form,
# and what -w asked, each reported with why.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || skip "needs jq (scripts/deps.sh)"
setup_ns

# run NAME SEND-ARGS...: recv in B (-m null into /dev/null, or FILE given
# as $RECV_TO), send in A; the sender's JSON report in $T/NAME.json.
run() {
	local name=$1; shift
	next_port
	bg "$T/$name.r" ip netns exec "$NS_B" "$DND" recv -p "$PORT" --json \
		"${RECV_TO:-/dev/null}"
	ns_listen "$NS_B" "$PORT"
	expect_exit 0 timeout 60 ip netns exec "$NS_A" "$DND" send \
		-c 10.231.0.2 -p "$PORT" --json "$@"
	grep '^{' <<<"$OUT" >"$T/$name.json"
	wait_for "$BPID" 20 || fail "$name: recv exited $?: $(cat "$T/$name.r")"
}
# within NAME ASKED: the achieved rate within 10% of ASKED bytes/s. Over
# the cap fails at once (pacing is a ceiling, not load-dependent); under it
# returns 1, so that paced_run can try again: on a loaded machine (CI,
# sanitizers) a run can fall short of the cap for reasons not the pacer's.
within() {
	local got asked
	asked=$(jq -r .rate_asked_bytes_per_s "$T/$1.json")
	got=$(jq -r .rate_achieved_bytes_per_s "$T/$1.json")
	[ "$asked" = "$2" ] || fail "$1: rate_asked_bytes_per_s $asked, wanted $2"
	awk -v g="$got" -v a="$2" 'BEGIN { exit !(g <= 1.1 * a) }' ||
		fail "$1: achieved $got B/s, over the asked $2 by more than 10%"
	if awk -v g="$got" -v a="$2" 'BEGIN { exit !(g >= 0.9 * a) }'; then
		ok "$1: achieved $got B/s of $2 asked"
		return 0
	fi
	SHORT+=" $got"
	return 1
}
# paced_run NAME ASKED SEND-ARGS...: run, then within; up to 3 runs while
# the achieved rate falls short of the -10% bound (never when over it).
paced_run() {
	local name=$1 asked=$2 i
	shift 2
	SHORT=
	for i in 1 2 3; do
		run "$name" "$@"
		within "$name" "$asked" && return 0
	done
	fail "$name: achieved under 90% of $asked B/s in 3 runs:$SHORT"
}

# Cubic paces at the cap; bbr (this machine's default) spends an eighth of
# its ProbeBW cycle at 0.75 gain, below the cap, and lands 2-4% lower on a
# loaded machine (measured: 191.7-194.4 MB/s against cubic's 196.3-198):
# within 10% still, but the check pins cubic to keep its margin. -P 2
# below runs the kernel's default.
paced_run paced 200000000 --rate 200M -C cubic -l 600M /dev/zero

paced_run split 100000000 -P 2 --rate 100M -l 200M /dev/zero
[ "$(jq -r .streams "$T/split.json")" = 2 ] || fail "split: not 2 streams"

random_file "$T/src" 20000000
RECV_TO=$T/dst run exact -P 2 --rate 100M "$T/src"
cmp -s "$T/src" "$T/dst" || fail "-P 2 --rate 100M: the landed file differs"
ok "-P 2 --rate 100M of a file: byte-exact"

# dnd serve --rate paces what a pull sends: the server's report (the
# client's peer_report) has it; the pulling client asked nothing.
d="$T/d"; mkdir "$d"
next_port
bg "$T/serve.log" "$DND" serve --dir "$d" -p "$PORT" --rate 100M
wait_log "$T/serve.log" "listening on 127.0.0.1:$PORT" "no listening line"
SHORT=
for i in 1 2 3; do
	expect_exit 0 timeout 60 "$DND" recv -c 127.0.0.1 -p "$PORT" \
		--peer-end zero --peer-size 200M -m null --json /dev/null
	grep '^{' <<<"$OUT" | jq .peer_report >"$T/served.json"
	[ "$(grep '^{' <<<"$OUT" | jq -r .rate_asked_bytes_per_s)" = null ] ||
		fail "the pulling client reports a rate it did not ask: $OUT"
	within served 100000000 && break
	[ "$i" -lt 3 ] || fail "served: achieved under 90% of 100 MB/s in 3 pulls:$SHORT"
done
kill -TERM "$BPID"
wait_for "$BPID" 20 || true

# The text report: achieved against asked, a percentage beside.
next_port
bg "$T/text.r" ip netns exec "$NS_B" "$DND" recv -p "$PORT" -m null /dev/null
ns_listen "$NS_B" "$PORT"
expect_exit 0 timeout 60 ip netns exec "$NS_A" "$DND" send -c 10.231.0.2 \
	-p "$PORT" --rate 1gbit -l 100M /dev/zero
grep -qE '^  rate: [0-9.]+ MB/s of 125 MB/s asked \([0-9]+%\)$' <<<"$OUT" ||
	fail "no rate line in the text report: $OUT"
grep -qx '  window: autotuned (default), kernel gave sndbuf [0-9]* rcvbuf [0-9]*' \
	<<<"$OUT" || fail "default window not reported as autotuned: $OUT"
wait_for "$BPID" 20 || fail "text: recv exited $?"
ok "text report: $(grep '^  rate:' <<<"$OUT")"

# Without --rate, no rate line and null in JSON; the window as defaulted.
[ "$(jq -r .rate_asked_bytes_per_s "$T/paced.json")" != null ] || fail "paced: null rate"
next_port
start_recv "$T/w.log" -m null --json /dev/null
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$PORT" -l 1M --json /dev/zero
o=$(grep '^{' <<<"$OUT")
[ "$(jq -r '"\(.rate_asked_bytes_per_s) \(.window_asked_bytes) \(.window_from)"' <<<"$o")" = "null 0 default" ] ||
	fail "unpaced defaults: $o"
wait_recv
[ "$(json_of "$T/w.log" | jq -r '"\(.window_asked_bytes) \(.window_from)"')" = "0 default" ] ||
	fail "recv's default window: $(cat "$T/w.log")"
ok "defaults: no rate, window autotuned on both ends"

next_port
start_recv "$T/w.log" -m null -w 128Ki /dev/null
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$PORT" -l 1M -w 128Ki /dev/zero
grep -qx '  window: 128 KiB (-w), kernel gave sndbuf [0-9]* rcvbuf [0-9]*' \
	<<<"$OUT" || fail "-w 128Ki not reported as asked: $OUT"
wait_recv
grep -qx '  window: 128 KiB (-w), kernel gave sndbuf [0-9]* rcvbuf [0-9]*' \
	"$T/w.log" || fail "recv -w 128Ki not reported: $(cat "$T/w.log")"
ok "-w 128Ki reported as 128 KiB (-w) on both ends"

# The 2006 form keeps the 2006 program's 128 KiB window.
next_port
bg "$T/o.log" "$DND" -p "$PORT" -v /dev/null
wait_listen "$PORT"
expect_exit 0 "$DND" -c 127.0.0.1 -p "$PORT" -l 1M -v /dev/zero
grep -qx "  window: 128 KiB (the 2006 form's default), kernel gave sndbuf [0-9]* rcvbuf [0-9]*" \
	<<<"$OUT" || fail "2006 form's window: $OUT"
wait_for "$BPID" 20 || fail "2006 form recv exited $?"
ok "the 2006 form: 128 KiB by default"

# Bad rates: exit 2 with the forms to use; --rate is the sender's.
expect_exit 2 "$DND" send -c 127.0.0.1 --rate 10furlongs /dev/zero
grep -q "^dnd: --rate '10furlongs': not a rate; give bytes per second as a size (200M is 200 MB/s, 1Gi) or a tc rate (1gbit, 500mbit, 1gbps)$" <<<"$OUT" ||
	fail "bad rate message: $OUT"
expect_exit 2 "$DND" recv --rate 1M "$T/x"
grep -q "^dnd: --rate paces the sender's sockets" <<<"$OUT" || fail "recv --rate: $OUT"
ok "bad --rate values and recv --rate refused (exit 2)"
