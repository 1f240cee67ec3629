#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGTERM stops dnd relay gracefully: no new connections, open flows finish
# within the grace period, exit 0. Flows still open when it ends are reset,
# so no flow ever looks complete when it is not. The same with --threads 2,
# where one loop reads the signal and tells the other.
. "$(dirname "$0")/lib.sh"


# wait_gone PORT: waits (up to 10 s) until nothing listens on PORT.
wait_gone() {
	for _ in $(seq 1 200); do
		ss -Htln "sport = :$1" 2>/dev/null | grep -q . || return 0
		sleep 0.05
	done
	fail "port $1 still listens 10 s after SIGTERM"
}

# start FLOWS GRACE THREADS: sink, relay (-m $m) and a client paused halfway
# through.
start() {
	next_port; sink=$PORT
	next_port; rl=$PORT
	bg "$T/sink.log" "$DND" bench relay --sink -l "127.0.0.1:$sink" --count "$1"
	spid=$BPID
	bg "$T/relay.log" "$DND" relay -m "$m" -l "127.0.0.1:$rl" -t "127.0.0.1:$sink" --grace "$2" --threads "$3" --json
	rpid=$BPID
	wait_listen "$sink"
	wait_listen "$rl"
	bg "$T/client.log" "$DND" bench relay --client -t "127.0.0.1:$rl" --flows "$1" --bytes 40Mi --reply 10Mi --half-close --pause
	cpid=$BPID
	wait_text "$T/client.log" "peer client: paused"
	# Connected is not accepted: wait until the relay holds every flow,
	# or a SIGTERM may find them still in its listen backlog.
	local i
	for i in $(seq 1 250); do
		[ "$(ss -Htnp state established "( sport = :$rl )" |
			grep -c "pid=$rpid,")" -ge "$1" ] && return
		sleep 0.02
	done
	fail "the relay did not accept $1 flows in 5 s"
}

# both_loops THREADS: with 2, both loops held flows, so the drain reached
# the one that does not read the signals.
both_loops() {
	local per
	[ "$1" = 2 ] || return 0
	per=$(tail -n1 "$T/relay.log" | grep -o '"accepted_per_thread":\[[0-9]*,[0-9]*\]' | grep -o '[0-9]*,[0-9]*')
	[ "$(jnum "$T/relay.log" threads)" = 2 ] && [ "${per%,*}" -ge 1 ] && [ "${per#*,}" -ge 1 ] ||
		fail "not both loops held flows: $(tail -n1 "$T/relay.log")"
}

relay_modes
for m in $RELAY_MODES; do
for th in 1 2; do
	# Flows in the middle of their data when SIGTERM arrives: they finish.
	start 10 30 "$th"
	kill -TERM "$rpid"
	wait_gone "$rl"
	kill -0 "$rpid" 2>/dev/null || fail "relay exited with flows open: $(cat "$T/relay.log")"
	nc -z 127.0.0.1 "$rl" 2>/dev/null && fail "relay still accepts after SIGTERM"
	kill -USR1 "$cpid"
	wait "$cpid" || fail "client: $(cat "$T/client.log")"
	grep -q "10 flows ok, 0 failed; sent 41943040 B, received 10485760 B" "$T/client.log" ||
		fail "client: $(cat "$T/client.log")"
	wait "$spid" || fail "sink: $(cat "$T/sink.log")"
	wait "$rpid" || fail "relay exit $? after SIGTERM"
	[ "$(jnum "$T/relay.log" completed)" = 10 ] && [ "$(jnum "$T/relay.log" grace_closed)" = 0 ] ||
		fail "relay stats: $(tail -n1 "$T/relay.log")"
	both_loops "$th"
	ok "$m, --threads $th, SIGTERM: listener closed, 10 open flows finished every byte, exit 0"

	# The grace period ends first: the relay resets what is left and exits 0;
	# both ends see a reset, never a clean end of a cut flow.
	start 4 0.2 "$th"
	kill -TERM "$rpid"
	wait "$rpid" || fail "relay exit $? after the grace period"
	[ "$(jnum "$T/relay.log" grace_closed)" = 4 ] || fail "relay stats: $(tail -n1 "$T/relay.log")"
	kill -USR1 "$cpid" 2>/dev/null # it may have seen the resets already
	wait "$cpid" && fail "client took cut flows for complete: $(cat "$T/client.log")"
	grep -q "0 flows ok, 4 failed" "$T/client.log" || fail "client: $(cat "$T/client.log")"
	wait "$spid" && fail "sink took cut flows for complete: $(cat "$T/sink.log")"
	grep -q "Connection reset by peer" "$T/sink.log" || fail "sink: $(cat "$T/sink.log")"
	both_loops "$th"
	ok "$m, --threads $th, grace period over: 4 flows reset on both sides and counted, exit 0"
done
done
