#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --raw drops dnd's framing so netcat-style peers interoperate, both ways.
. "$(dirname "$0")/lib.sh"
command -v nc >/dev/null || skip "nc (netcat-openbsd) is not installed"

random_file "$T/src" $((2 * 1048576 + 3))

# dnd send --raw -> nc -l
for m in rw sendfile splice; do
	next_port
	timeout 20 nc -l 127.0.0.1 "$PORT" </dev/null >"$T/out" &
	np=$!
	wait_listen "$PORT"
	"$DND" send --raw -c 127.0.0.1 -p "$PORT" -m "$m" "$T/src" >"$T/s.log" 2>&1 ||
		fail "send --raw -m $m: $(cat "$T/s.log")"
	wait "$np" || fail "nc -l exited $?"
	cmp -s "$T/src" "$T/out" || fail "nc received different data (-m $m)"
	grep -q "verify: unchecked" "$T/s.log" || fail "raw verdict: $(cat "$T/s.log")"
done
ok "dnd send --raw -> nc"

# nc -> dnd recv --raw
for m in rw splice vmsplice mmap; do
	rm -f "$T/dst"
	next_port
	start_recv "$T/r.log" --raw -m "$m" "$T/dst"
	wait_listen "$PORT"
	timeout 20 nc -N 127.0.0.1 "$PORT" <"$T/src" >/dev/null || fail "nc -N exited $?"
	wait_recv
	[ "$RRC" = 0 ] || fail "recv --raw -m $m: $(cat "$T/r.log")"
	cmp -s "$T/src" "$T/dst" || fail "dnd recv --raw -m $m: data differs"
	grep -q "verify: unchecked ($((2 * 1048576 + 3)) bytes)" "$T/r.log" ||
		fail "raw verdict: $(cat "$T/r.log")"
done
ok "nc -> dnd recv --raw"

# Without --raw, a netcat peer is told what is wrong and how to fix it.
next_port
start_recv "$T/r.log" "$T/dst2"
wait_listen "$PORT"
timeout 20 nc -N 127.0.0.1 "$PORT" <"$T/src" >/dev/null
wait_recv
[ "$RRC" = 1 ] || fail "framed receiver accepted a raw peer"
grep -q "use --raw for netcat-style peers" "$T/r.log" || fail "$(cat "$T/r.log")"
[ ! -e "$T/dst2" ] || fail "target created"
ok "framed receiver refuses a raw peer with the fix"
