#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd relay moves every byte exactly, both ways at once, for 1 and 200
# flows, with splice, with the copy path and with the kernel's BPF sockmap
# redirect (where it can run), in one loop and in two threads
# (--threads 2); and a dnd send/recv transfer through it lands a file whose
# hash matches.
. "$(dirname "$0")/lib.sh"

relay_modes
runs=("splice 1 1" "splice 200 1" "rw 1 1" "rw 200 1" "splice 200 2" "rw 200 2")
case $RELAY_MODES in *sockmap*) runs+=("sockmap 1 1" "sockmap 200 1" "sockmap 200 2") ;; esac
# METHOD FLOWS THREADS
for run in "${runs[@]}"; do
	read -r m flows threads <<<"$run"
	next_port; sink=$PORT
	next_port; rl=$PORT
	bg "$T/sink.log" "$DND" bench relay --sink -l "127.0.0.1:$sink" --count "$flows"
	spid=$BPID
	bg "$T/relay.log" "$DND" relay -m "$m" -l "127.0.0.1:$rl" -t "127.0.0.1:$sink" --threads "$threads" --json
	rpid=$BPID
	wait_listen "$sink"
	wait_listen "$rl"
	expect_exit 0 "$DND" bench relay --client -t "127.0.0.1:$rl" --flows "$flows" --bytes 64Mi --reply 48Mi
	expect_out "peer client: $flows flows ok, 0 failed; sent 67108864 B, received 50331648 B"
	wait "$spid" || fail "$m $flows flows: sink failed: $(cat "$T/sink.log")"
	grep -q "peer sink: $flows flows ok, 0 failed; sent 50331648 B, received 67108864 B" "$T/sink.log" ||
		fail "sink: $(cat "$T/sink.log")"
	kill -TERM "$rpid"
	wait "$rpid" || fail "$m: relay exit $? after SIGTERM: $(cat "$T/relay.log")"
	[ "$(jnum "$T/relay.log" completed)" = "$flows" ] || fail "relay stats: $(cat "$T/relay.log")"
	[ "$(jnum "$T/relay.log" client_to_target_bytes)" = $((67108864 + 32 * flows)) ] ||
		fail "client->target bytes: $(cat "$T/relay.log")"
	[ "$(jnum "$T/relay.log" target_to_client_bytes)" = 50331648 ] ||
		fail "target->client bytes: $(cat "$T/relay.log")"
	calls=$(jnum "$T/relay.log" splice_in_calls)
	if [ "$m" = sockmap ]; then
		[ "$calls" = 0 ] && [ "$(jnum "$T/relay.log" read_calls)" = 0 ] ||
			fail "sockmap relay moved bytes itself: $(cat "$T/relay.log")"
	elif [ "$m" = splice ]; then
		[ "$calls" -gt 0 ] && [ "$(jnum "$T/relay.log" fallbacks)" = 0 ] ||
			fail "splice relay did not splice: $(cat "$T/relay.log")"
	else
		[ "$calls" = 0 ] || fail "rw relay spliced: $(cat "$T/relay.log")"
	fi
	[ "$(jnum "$T/relay.log" threads)" = "$threads" ] || fail "threads: $(cat "$T/relay.log")"
	if [ "$threads" = 2 ]; then
		# Both loops took flows, and their counts add up.
		per=$(tail -n1 "$T/relay.log" | grep -o '"accepted_per_thread":\[[0-9]*,[0-9]*\]' | grep -o '[0-9]*,[0-9]*')
		a=${per%,*} b=${per#*,}
		[ -n "$per" ] && [ "$a" -ge 1 ] && [ "$b" -ge 1 ] && [ $((a + b)) = "$flows" ] ||
			fail "flows per thread '$per': $(cat "$T/relay.log")"
		ok "$m relay, --threads 2, $flows flows both ways at once: every byte verified, the loops took $a and $b"
	else
		ok "$m relay, $flows flows, both directions at once: every byte verified"
	fi
done

# A file through the relay with dnd's own protocol: the receiver's hash
# check runs end to end, and the reply comes back through the relay.
random_file "$T/src" 12345678
next_port; rl=$PORT
next_port; sink=$PORT
start_recv "$T/r.log" -m splice "$T/dst"
bg "$T/relay.log" "$DND" relay -l "127.0.0.1:$rl" -t "127.0.0.1:$sink"
rpid=$BPID
wait_listen "$sink"
wait_listen "$rl"
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$rl" -m sendfile "$T/src"
wait_recv
[ "$RRC" = 0 ] || fail "recv through the relay: $(cat "$T/r.log")"
cmp "$T/src" "$T/dst" || fail "file differs after the relay"
kill -TERM "$rpid"
wait "$rpid" || fail "relay exit $?"
grep -q "completed 1, failed 0" "$T/relay.log" || fail "relay stats: $(cat "$T/relay.log")"
ok "dnd send -> relay -> dnd recv: verified file, relay stats printed at exit"
