#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -w on a served transfer sets the same socket buffers as on the one-shot
# pair: SO_RCVBUF where the data arrives, SO_SNDBUF where it leaves, push
# and pull alike, whichever end listens. The buffers the kernel gave, from
# each end's JSON report, must equal the one-shot pair's at the same -w
# (send, recv and serve autotune by default, so a -w the served end lost
# shows), and both reports say the window came from -w.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || skip "needs jq (scripts/deps.sh)"
w=128Ki
d="$T/d"; mkdir "$d"

# The one-shot pair: what the kernel gives a receiver and a sender at -w.
next_port
start_recv "$T/r.log" -w "$w" -m null --json /dev/null
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$PORT" -w "$w" -l 32Mi --json /dev/zero
wait_recv
[ "$RRC" = 0 ] || fail "one-shot recv exited $RRC: $(cat "$T/r.log")"
o_rcv=$(json_of "$T/r.log" | jq -r .rcvbuf_bytes)
o_snd=$(echo "$OUT" | grep '^{' | jq -r .sndbuf_bytes)
[ "$o_rcv" -gt 0 ] && [ "$o_snd" -gt 0 ] ||
	fail "one-shot buffers: rcvbuf '$o_rcv' sndbuf '$o_snd'"

next_port
bg "$T/serve.log" "$DND" serve --dir "$d" -p "$PORT" -w "$w"
spid=$BPID
wait_log "$T/serve.log" "listening on 127.0.0.1:$PORT" "no listening line"

# same WAY RCV SND: the receiving end's rcvbuf and the sending end's
# sndbuf of a served WAY (push, pull), against the one-shot pair's.
same() {
	[ "$2" = "$o_rcv" ] && [ "$3" = "$o_snd" ] ||
		fail "served $1 at -w $w: rcvbuf $2, sndbuf $3 where the one-shot pair has rcvbuf $o_rcv, sndbuf $o_snd"
	ok "served $1 at -w $w: rcvbuf $2 and sndbuf $3, as one-shot"
}
# bufs: "client's sndbuf rcvbuf, server's sndbuf rcvbuf" from $OUT's JSON.
bufs() {
	grep '^{' <<<"$OUT" | jq -r '"\(.sndbuf_bytes) \(.rcvbuf_bytes) \(.peer_report.sndbuf_bytes) \(.peer_report.rcvbuf_bytes)"'
}

expect_exit 0 "$DND" send -c 127.0.0.1 -p "$PORT" -w "$w" --peer-end null \
	--peer-method null -l 32Mi --json /dev/zero
read -r c_snd _ _ s_rcv <<<"$(bufs)"
same push "$s_rcv" "$c_snd"

expect_exit 0 "$DND" recv -c 127.0.0.1 -p "$PORT" -w "$w" --peer-end zero \
	--peer-size 32Mi -m null --json /dev/null
read -r _ c_rcv s_snd _ <<<"$(bufs)"
same pull "$c_rcv" "$s_snd"
# Both ends say the window came from -w (the default is autotuning now, so
# the buffers above differ from what a forgotten -w would give).
[ "$(grep '^{' <<<"$OUT" | jq -r '"\(.window_asked_bytes) \(.window_from) \(.peer_report.window_asked_bytes) \(.peer_report.window_from)"')" = "131072 -w 131072 -w" ] ||
	fail "served -w $w not reported as -w on both ends: $OUT"
ok "served pull: both reports say 128 KiB from -w"

kill -TERM "$spid"
wait "$spid" || fail "serve exited $? after SIGTERM"
