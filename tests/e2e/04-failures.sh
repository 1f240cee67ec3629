#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Failures leave nothing under the target's name, exit 1 and name the cause:
# a killed sender, a stopped receiver, a corrupt header, a short peer, a
# hash or count that does not match, a malformed segment.
. "$(dirname "$0")/lib.sh"

D="$T/land"
mkdir "$D"
mkfifo "$T/fifo"

# A sender killed mid-transfer: the receiver sees the stream end early.
next_port
start_recv "$T/r.log" "$D/dst"
"$DND" send -c 127.0.0.1 -p "$PORT" -l 10Mi "$T/fifo" >"$T/s.log" 2>&1 &
sp=$!
_pids+=("$sp")
exec 3>"$T/fifo"
head -c 1M /dev/urandom >&3
wait_size "$D/.dst.dnd-*" 1048576
kill -9 "$sp"
wait_recv
exec 3>&-
[ "$RRC" = 1 ] || fail "receiver exit $RRC after its sender was killed"
grep -q "dnd: short transfer: the sender closed the connection after 1048576 of 10485760 bytes (it failed or was stopped)" "$T/r.log" ||
	fail "cause not named: $(cat "$T/r.log")"
no_leftovers "$D"
ok "killed sender: short transfer named, nothing landed"

# A sender stopped with SIGINT says so and exits 1.
next_port
start_recv "$T/r.log" "$D/dst"
"$DND" send -c 127.0.0.1 -p "$PORT" -l 10Mi "$T/fifo" >"$T/s.log" 2>&1 &
sp=$!
exec 3>"$T/fifo"
head -c 1M /dev/urandom >&3
wait_size "$D/.dst.dnd-*" 1048576
kill -INT "$sp"
wait "$sp"
src=$?
wait_recv
exec 3>&-
[ "$src" = 130 ] || fail "sender exit $src after SIGINT, wanted 130 as shells expect"
grep -q "dnd: interrupted by Interrupt after 1048576 bytes" "$T/s.log" ||
	fail "sender cause: $(cat "$T/s.log")"
[ "$RRC" = 1 ] || fail "receiver exit $RRC"
no_leftovers "$D"
ok "interrupted sender: exit 130"

# A receiver stopped with SIGTERM mid-transfer removes its temporary file;
# its sender then fails on the closed connection.
for sig in TERM INT; do
	next_port
	start_recv "$T/r.log" "$D/dst"
	"$DND" send -c 127.0.0.1 -p "$PORT" -l 100Mi "$T/fifo" >"$T/s.log" 2>&1 &
	sp=$!
	exec 3>"$T/fifo"
	head -c 1M /dev/urandom >&3
	wait_size "$D/.dst.dnd-*" 1048576
	kill -"$sig" "$RPID"
	wait_recv
	head -c 16M /dev/zero >&3 2>/dev/null
	exec 3>&-
	wait "$sp"
	src=$?
	want=$((128 + $(kill -l "$sig")))
	[ "$RRC" = "$want" ] || fail "receiver exit $RRC after SIG$sig, wanted $want"
	grep -q "dnd: interrupted by .* after 1048576 bytes" "$T/r.log" ||
		fail "receiver cause: $(cat "$T/r.log")"
	no_leftovers "$D"
	[ "$src" = 1 ] || fail "sender exit $src after its receiver stopped"
	grep -q "dnd: the connection was reset after [0-9]* bytes: by the receiver (see its message) or by something on the path" "$T/s.log" ||
		fail "sender cause: $(cat "$T/s.log")"
done
ok "stopped receiver: nothing landed, exit 143/130, both sides name the cause"

# SIGINT reaches a sender blocked in write() to a stalled receiver at once,
# even with no --timeout to end the wait.
next_port
start_recv "$T/r.log" "$D/dst"
"$DND" send -c 127.0.0.1 -p "$PORT" --timeout 0 -l 1G /dev/zero >"$T/s.log" 2>&1 &
sp=$!
_pids+=("$sp")
wait_size "$D/.dst.dnd-*" 1048576
kill -STOP "$RPID"
sleep 0.5
kill -INT "$sp"
for i in $(seq 1 50); do kill -0 "$sp" 2>/dev/null || break; sleep 0.1; done
kill -0 "$sp" 2>/dev/null && fail "sender still blocked 5 s after SIGINT"
wait "$sp"
src=$?
kill -CONT "$RPID"
wait_recv
[ "$src" = 130 ] || fail "sender exit $src, wanted 130"
grep -q "dnd: interrupted by Interrupt after" "$T/s.log" || fail "$(cat "$T/s.log")"
no_leftovers "$D"
ok "SIGINT ends a sender blocked on a stalled receiver"

# Hand-made peers over nc: each must be refused with its cause.
peer() { # peer NAME "expected receiver message" < bytes
	next_port
	start_recv "$T/r.log" "$D/dst"
	wait_listen "$PORT"
	timeout 10 nc -N 127.0.0.1 "$PORT" >/dev/null
	wait_recv
	[ "$RRC" = 1 ] || fail "$1: receiver exit $RRC: $(cat "$T/r.log")"
	grep -qF "$2" "$T/r.log" || fail "$1: expected '$2' in: $(cat "$T/r.log")"
	no_leftovers "$D"
	ok "$1 refused"
}
hdr() { msg_hdr "$1"; }
hdr_seg() { msg_hdr_seg; }
trl() { msg_trl "$1" "$2"; }

printf 'GARBAGE GARBAGE GARBAGE!' | peer "corrupt header" \
	"bad header from 127.0.0.1:"
grep -qF "no dnd magic (first bytes 47 41 52 42); is the peer dnd? use --raw for netcat-style peers" "$T/r.log" ||
	fail "magic message: $(cat "$T/r.log")"
printf 'DNDH\x00\x07' | peer "truncated header" \
	"dnd: the peer closed the connection before the header"
msg_open 7 0 1 | peer "future version" \
	"protocol version 7, this dnd speaks 6"
{ hdr 1000; printf '0123456789'; } | peer "short peer" \
	"dnd: short transfer: the sender closed the connection after 10 of 1000 bytes"
{ hdr 4; printf 'abcd'; trl 4 0; } | peer "hash mismatch" \
	"dnd: hash mismatch: sent xxh3 0000000000000000, landed"
{ hdr 4; printf 'abcd'; trl 5 0; } | peer "count mismatch" \
	"dnd: the sender says it sent 5 bytes, 4 arrived"
{ hdr_seg; be64 $((1 << 40)); } | peer "oversized segment" \
	"dnd: malformed stream from the peer: bad segment length from peer"
{ hdr 4; printf 'abcd'; } | peer "missing trailer" \
	"dnd: the peer closed the connection before the sender's trailer"

# One-shot and dnd serve mixed up, keyless and keyed: each end names what
# the other is and what to use, and never suggests --raw to a dnd peer.
(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
random_file "$T/src" 65536
mkdir "$T/srv"
serve_client_msg="dnd: the peer is a dnd serve client ('dnd send --to NAME' or 'dnd recv --from NAME'); this one-shot 'dnd recv' takes 'dnd send -c HOST FILE' without --to"
oneshot_recv_msg="dnd: the peer is a one-shot 'dnd recv', not a 'dnd serve'; send to it without --to NAME (a pull with --from needs a dnd serve)"
for keyed in "" "--key $T/key"; do
	for client in "send --to x $T/src" "recv --from x $T/pulled"; do
		next_port
		# shellcheck disable=SC2086
		start_recv "$T/r.log" $keyed "$D/dst"
		# shellcheck disable=SC2086
		expect_exit 1 "$DND" $client -c 127.0.0.1 -p "$PORT" $keyed
		[ "$OUT" = "$oneshot_recv_msg" ] || fail "${keyed:-keyless} $client at a dnd recv: $OUT"
		wait_recv
		[ "$RRC" = 1 ] || fail "receiver exit $RRC"
		[ "$(grep -v '^dnd: listening on' "$T/r.log")" = "$serve_client_msg" ] ||
			fail "${keyed:-keyless} receiver: $(cat "$T/r.log")"
		no_leftovers "$D"
		[ -e "$T/pulled" ] && fail "a failed pull left $T/pulled"
	done
	next_port
	# shellcheck disable=SC2086
	bg "$T/serve.log" "$DND" serve -p "$PORT" --dir "$T/srv" $keyed
	wait_listen "$PORT"
	# shellcheck disable=SC2086
	expect_exit 1 "$DND" send -c 127.0.0.1 -p "$PORT" $keyed "$T/src"
	[ "$OUT" = "dnd: the peer is a 'dnd serve'; use --to NAME (send) or --from NAME (recv)" ] ||
		fail "${keyed:-keyless} one-shot send at a dnd serve: $OUT"
	wait_log "$T/serve.log" "the client is a one-shot 'dnd send' without --to NAME; a dnd serve takes 'dnd send --to NAME' or 'dnd recv --from NAME'" \
		"${keyed:-keyless} serve did not name the one-shot sender"
	grep -q -- "--raw" "$T/serve.log" "$T/r.log" && fail "--raw suggested to a dnd peer"
	# A missing name is named relative to the served directory, whose
	# path on the server stays there.
	# shellcheck disable=SC2086
	expect_exit 1 "$DND" recv -c 127.0.0.1 -p "$PORT" $keyed --from nofile "$T/pulled"
	[ "$OUT" = "dnd: server refused: name 'nofile': no such file in the served directory" ] ||
		fail "a pull of a missing file: $OUT"
	# shellcheck disable=SC2086
	expect_exit 1 "$DND" recv -c 127.0.0.1 -p "$PORT" $keyed --from nodir/f "$T/pulled"
	[ "$OUT" = "dnd: server refused: name 'nodir/f': no such directory beneath the served directory (dnd serve creates none: create 'nodir' beneath it on the server first)" ] ||
		fail "a pull from a missing directory: $OUT"
	[ -e "$T/pulled" ] && fail "a refused pull left $T/pulled"
	kill -TERM "$BPID"
	wait_for "$BPID" 10 || fail "serve exited $? after SIGTERM"
	no_leftovers "$T/srv"
done
ok "one-shot against dnd serve: both ends name the other's mode, keyless and keyed"

# A server that dies mid-push sends no reason: the client says so, and
# does not send the user to a message it cannot see.
next_port
bg "$T/serve.log" "$DND" serve -p "$PORT" --dir "$T/srv"
wait_listen "$PORT"
"$DND" send -c 127.0.0.1 -p "$PORT" --to big -l 100Mi "$T/fifo" >"$T/s.log" 2>&1 &
sp=$!
_pids+=("$sp")
exec 3>"$T/fifo"
head -c 2M /dev/urandom >&3
wait_size "$T/srv/.big.dnd-*" 1048576
child=$(pgrep -P "$BPID")
[ -n "$child" ] || fail "no session process under dnd serve"
kill -9 $child
head -c 16M /dev/zero >&3 2>/dev/null
exec 3>&-
wait "$sp"
src=$?
[ "$src" = 1 ] || fail "client exit $src after its server died"
grep -qxE "dnd: the connection was reset after [0-9]+ bytes: by the server, which sent no reason, or by something on the path" "$T/s.log" ||
	fail "client's cause: $(cat "$T/s.log")"
kill -TERM "$BPID"
wait_for "$BPID" 10 || fail "serve exited $? after SIGTERM"
ok "a server that dies mid-push: the client promises no message it cannot see"
