#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Something on the path (a proxy here) resets the connection mid-payload:
# neither end can know who reset it, so neither blames the other.
. "$(dirname "$0")/lib.sh"

D="$T/land"
mkdir "$D"
next_port
start_recv "$T/r.log" --timeout 10 "$D/dst"
wait_listen "$PORT"
PORT0=$PORT
next_port
bg "$T/mitm.out" perl "$(dirname "$0")/mitm.pl" 127.0.0.1 "$PORT" 127.0.0.1 "$PORT0" reset 1048576
MPID=$BPID
wait_text "$T/mitm.out" ready
"$DND" send -c 127.0.0.1 -p "$PORT" --timeout 10 -l 1Gi /dev/zero >"$T/s.log" 2>&1
SRC=$?
wait_recv
wait_for "$MPID" 10
grep -q reset "$T/mitm.out" || fail "the proxy did not reset: $(cat "$T/mitm.out")"
[ "$SRC" = 1 ] || fail "sender exit $SRC: $(cat "$T/s.log")"
[ "$RRC" = 1 ] || fail "receiver exit $RRC: $(cat "$T/r.log")"
grep -qx "dnd: the connection was reset after [0-9]* bytes: by the receiver (see its message) or by something on the path" "$T/s.log" ||
	fail "sender's cause: $(cat "$T/s.log")"
grep -qx "dnd: the connection was reset after [0-9]* bytes: by the sender (see its message) or by something on the path" "$T/r.log" ||
	fail "receiver's cause: $(cat "$T/r.log")"
no_leftovers "$D"
ok "a reset on the path: both ends say the connection was reset, exit 1, nothing landed"
