#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Half-close through dnd relay: the client sends, shuts down its write side,
# and only then does the far end answer; the whole answer must come back.
. "$(dirname "$0")/lib.sh"

for m in splice rw; do
	for flows in 1 20; do
		next_port; sink=$PORT
		next_port; rl=$PORT
		bg "$T/sink.log" "$DND" bench relay --sink -l "127.0.0.1:$sink" --count "$flows"
		spid=$BPID
		bg "$T/relay.log" "$DND" relay -m "$m" -l "127.0.0.1:$rl" -t "127.0.0.1:$sink"
		rpid=$BPID
		wait_listen "$sink"
		wait_listen "$rl"
		expect_exit 0 "$DND" bench relay --client -t "127.0.0.1:$rl" --flows "$flows" --bytes 8Mi --reply 24Mi --half-close
		expect_out "peer client: $flows flows ok, 0 failed; sent 8388608 B, received 25165824 B"
		wait "$spid" || fail "sink: $(cat "$T/sink.log")"
		kill -TERM "$rpid"
		wait "$rpid" || fail "relay exit $?: $(cat "$T/relay.log")"
		grep -q "completed $flows, failed 0, resets 0" "$T/relay.log" ||
			fail "relay stats: $(cat "$T/relay.log")"
		ok "$m relay, $flows flows: request, FIN, then the whole reply"
	done
done

