#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Addresses: names and both families through getaddrinfo, --bind, and the
# messages for a peer that is not there.
. "$(dirname "$0")/lib.sh"

random_file "$T/src" 100000
# (localhost is 127.0.0.1 only in this machine's /etc/hosts)
for pair in "127.0.0.1 127.0.0.1" "::1 ::1" "localhost 127.0.0.1" "::1 ::"; do
	set -- $pair
	rm -f "$T/dst"
	xfer "-c $1 $T/src" "--bind $2 $T/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "-c $1 --bind $2: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src" "$T/dst" || fail "-c $1 --bind $2: data differs"
done
ok "IPv4, IPv6 and names, with --bind"

next_port
start_recv "$T/r.log" --bind 127.0.0.1 "$T/dst2"
wait_listen "$PORT"
# Refused: at once by default (as iperf3), with how to wait instead.
expect_exit 1 "$DND" send -c ::1 -p "$PORT" "$T/src"
[ "$OUT" = "dnd: cannot connect to ::1 port $PORT: Connection refused; is 'dnd recv' listening there (same -p)? To wait for one that starts later, give --connect-timeout SEC" ] ||
	fail "refused connect: $OUT"
# With --connect-timeout: said at once, then retried that long.
expect_exit 1 "$DND" send -c ::1 -p "$PORT" --connect-timeout 0.2 "$T/src"
[ "$OUT" = "dnd: nothing listens on [::1]:$PORT yet; retrying for 0.2 s (--connect-timeout)
dnd: cannot connect to ::1 port $PORT: Connection refused for 0.2 s (--connect-timeout); is 'dnd recv' listening there (same -p)?" ] ||
	fail "refused connect with --connect-timeout: $OUT"
kill "$RPID"
wait_recv
[ "$RRC" = 143 ] || fail "receiver stopped (SIGTERM) while waiting exits $RRC, wanted 143"
grep -q "dnd: interrupted by Terminated while waiting for a sender" "$T/r.log" ||
	fail "$(cat "$T/r.log")"
[ ! -e "$T/dst2" ] || fail "target created by a receiver that got nothing"
ok "refused connection and a stopped idle receiver are named"

expect_exit 1 "$DND" send -c no-such-host.invalid "$T/src"
expect_out "dnd: cannot resolve 'no-such-host.invalid'"
next_port
expect_exit 1 "$DND" recv -p "$PORT" --bind 192.0.2.1 "$T/dst3"
expect_out "dnd: cannot listen on 192.0.2.1:$PORT: Cannot assign requested address"
ok "unknown host and foreign bind address"

# A sender started before its receiver: with --connect-timeout it says it
# waits, then sends once the receiver listens.
next_port
bg "$T/early.log" "$DND" send -c 127.0.0.1 -p "$PORT" --connect-timeout 20 "$T/src"
wait_text "$T/early.log" "nothing listens on 127.0.0.1:$PORT yet; retrying for 20 s (--connect-timeout)"
start_recv "$T/r.log" "$T/early.dst"
wait_for "$BPID" 20 || fail "the early sender exited $?: $(cat "$T/early.log")"
wait_recv
[ "$RRC" = 0 ] || fail "receiver: $(cat "$T/r.log")"
cmp -s "$T/src" "$T/early.dst" || fail "the early sender's data differs"
ok "refused at once by default; --connect-timeout waits and says so"
