#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd relay over a veth pair between two network namespaces: flows to a sink
# in the other namespace arrive byte-exact (real segments, not loopback's
# 64 KiB ones), and a target that never answers times out: its clients are
# reset, never closed as if their bytes had arrived. With splice and, where
# it runs, sockmap.
. "$(dirname "$0")/lib.sh"

setup_ns
relay_modes

dead=100
for m in $RELAY_MODES; do
	next_port; sink=$PORT
	next_port; rl=$PORT
	bg "$T/sink.log" ip netns exec "$NS_B" "$DND" bench relay --sink -l "10.231.0.2:$sink" --count 20
	spid=$BPID
	bg "$T/relay.log" ip netns exec "$NS_A" "$DND" relay -m "$m" -l "127.0.0.1:$rl" -t "10.231.0.2:$sink" --json
	rpid=$BPID
	ns_listen "$NS_B" "$sink"
	ns_listen "$NS_A" "$rl"
	expect_exit 0 ip netns exec "$NS_A" "$DND" bench relay --client -t "127.0.0.1:$rl" --flows 20 --bytes 60Mi --reply 20Mi
	expect_out "20 flows ok, 0 failed"
	wait "$spid" || fail "sink: $(cat "$T/sink.log")"
	kill -TERM "$rpid"
	wait "$rpid" || fail "relay exit $?"
	[ "$(jnum "$T/relay.log" completed)" = 20 ] || fail "relay stats: $(tail -n1 "$T/relay.log")"
	ok "$m: 20 flows through the relay into another namespace, both ways, verified"

	# 10.231.0.$dead is on the link but nobody has it: ARP never resolves,
	# the SYN never leaves, and only the relay's connect timeout ends the
	# wait: the clients are reset, since their bytes never reached a
	# target. Each mode asks for its own address: a SYN that joined the
	# previous mode's failing ARP lookup would fail with EHOSTUNREACH.
	dead=$((dead - 1))
	next_port; rl=$PORT
	bg "$T/relay.log" ip netns exec "$NS_A" "$DND" relay -m "$m" -l "127.0.0.1:$rl" -t "10.231.0.$dead:80" --connect-timeout 0.3 --json
	rpid=$BPID
	ns_listen "$NS_A" "$rl"
	expect_exit 1 ip netns exec "$NS_A" "$DND" bench relay --client -t "127.0.0.1:$rl" --flows 3 --bytes 0 --reply 1Mi
	echo "$OUT" | grep -qE "Connection reset by peer|Broken pipe" || fail "no reset after the connect timeout: $OUT"
	kill -TERM "$rpid"
	wait "$rpid" || fail "relay exit $?"
	grep -q "relay: cannot connect to 10.231.0.$dead:80: Connection timed out" "$T/relay.log" ||
		fail "cause not logged: $(cat "$T/relay.log")"
	[ "$(jnum "$T/relay.log" failed)" = 3 ] || fail "relay stats: $(tail -n1 "$T/relay.log")"
	ok "$m: unanswered target: connect timeout, clients reset, 3 failures counted"
done
