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
expect_exit 1 "$DND" send -c ::1 -p "$PORT" --connect-timeout 0.2 "$T/src"
expect_out "dnd: cannot connect to ::1 port $PORT: Connection refused; is 'dnd recv' listening there (same -p)?"
kill "$RPID"
wait_recv
[ "$RRC" = 1 ] || fail "receiver stopped while waiting exits $RRC"
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
