#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sources and sinks that are not regular files: /dev/zero with -l into
# /dev/null for every pair that can do it, and stdin -> stdout through pipes
# (unknown length, sent as segments), with the verdict each case can claim.
. "$(dirname "$0")/lib.sh"

# zero -> null: every send method x every receive method that takes /dev/null.
for sm in rw mmap sendfile splice vmsplice; do
	for rm in rw splice vmsplice null; do
		xfer "-c 127.0.0.1 -m $sm -l 3Mi /dev/zero" "-m $rm /dev/null"
		[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
			fail "zero -> null $sm -> $rm: $(cat "$T/s.log" "$T/r.log")"
		grep -q "verify: counted (3145728 bytes)" "$T/s.log" ||
			fail "zero -> null $sm -> $rm: $(cat "$T/s.log")"
		grep -q "^receiver: 3145728 bytes in " "$T/r.log" || fail "receiver count: $(cat "$T/r.log")"
	done
done
ok "zero -> null for 20 pairs, counted on both sides"

# The headline: labelled as iperf3 labels its ends, the sender's the whole
# transfer to the receiver's confirmation (with -P, the last stream's), the
# 2006 program's timing beside it; no "total:" line repeating it. The receiver's
# headline is its data path, its total: line what it waited (here, with
# nothing landed, to its verdict).
num='[0-9]+\.[0-9]{3}'
xfer "-c 127.0.0.1 -P 2 -l 3Mi /dev/zero" "-m null /dev/null"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "-P 2: $(cat "$T/s.log" "$T/r.log")"
grep -Eqx "sender: 3145728 bytes in $num s: $num MB/s \($num Gbit/s\) to the receiver's confirmation; sent \(the 2006 program's timing\) in $num s: $num MB/s" \
	"$T/s.log" || fail "sender headline: $(cat "$T/s.log")"
grep -Eqx "receiver: 3145728 bytes in $num s: $num MB/s \($num Gbit/s\), first byte to the last landed" \
	"$T/r.log" || fail "receiver headline: $(cat "$T/r.log")"
grep -Eqx "  total: $num s from the first byte to the verdict: $num MB/s" \
	"$T/r.log" || fail "receiver total: $(cat "$T/r.log")"
grep -q "total:\|KiB\|Gb/s" "$T/s.log" && fail "old units or total line: $(cat "$T/s.log")"
grep -q "KiB\|Gb/s" "$T/r.log" && fail "old units: $(cat "$T/r.log")"
# --raw has no confirmation: the line says so.
xfer "-c 127.0.0.1 --raw -l 3Mi /dev/zero" "--raw -m null /dev/null"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "--raw: $(cat "$T/s.log" "$T/r.log")"
grep -Eqx "sender: 3145728 bytes in $num s: $num MB/s \($num Gbit/s\) to the last byte sent; no confirmation came" \
	"$T/s.log" || fail "--raw sender headline: $(cat "$T/s.log")"
# The 2006 form keeps its line exactly.
next_port
"$DND" -p "$PORT" -o /dev/null >"$T/r.log" 2>&1 &
RPID=$!
_pids+=("$RPID")
wait_listen "$PORT"
"$DND" -c 127.0.0.1 -p "$PORT" -l 3Mi /dev/zero >"$T/s.log" 2>&1 || fail "2006 form send: $(cat "$T/s.log")"
wait_recv
[ "$RRC" = 0 ] || fail "2006 form recv: $(cat "$T/r.log")"
grep -Eqx "Sent 3072 KiB in $num sec: $num MB/s \($num Gb/s\)" "$T/s.log" ||
	fail "2006 form sender line: $(cat "$T/s.log")"
grep -Eqx "Received 3072 KiB in $num sec: $num MB/s \($num Gb/s\)" "$T/r.log" ||
	fail "2006 form receiver line: $(cat "$T/r.log")"
ok "headlines: sender to the confirmation beside the 2006 program's timing, receiver; the 2006 form's lines as they were"

# zero -> file lands verified zeros for every sender (rw writes and vmsplice
# re-splices the same zeroed buffer: the receiver's hash proves they stayed
# zero).
for sm in rw mmap sendfile splice vmsplice; do
	rm -f "$T/z"
	xfer "-c 127.0.0.1 -m $sm -b 256Ki --pipe-size 1Mi -l $((5 * 1048576 + 7)) /dev/zero" "-m rw $T/z"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "zero -> file $sm: $(cat "$T/s.log" "$T/r.log")"
	grep -q "verify: verified as received " "$T/r.log" || fail "zero -> file $sm: $(cat "$T/r.log")"
	cmp -s -n $((5 * 1048576 + 7)) /dev/zero "$T/z" || fail "zero -> file $sm: not zeros"
	[ "$(stat -c %s "$T/z")" = $((5 * 1048576 + 7)) ] || fail "zero -> file $sm: size"
	# rw reads /dev/zero into its buffer once, then writes it 21 times.
	[ "$sm" != rw ] || grep -q "syscalls: read 1 x 262144 B, write" "$T/s.log" ||
		fail "rw from /dev/zero reads once: $(cat "$T/s.log")"
	[ "$sm" != rw ] || grep -q "note: rw: /dev/zero read once" "$T/s.log" ||
		fail "rw note: $(cat "$T/s.log")"
done
grep -q "note: vmsplice: /dev/zero read once" "$T/s.log" || fail "vmsplice note: $(cat "$T/s.log")"
ok "zero -> file verified for every sender"

# mmap needs a file to map: refused before any byte moves.
next_port
expect_exit 2 "$DND" recv -p "$PORT" -m mmap /dev/null
expect_out "dnd: mmap cannot receive into /dev/null (it needs a regular file to map); use -m rw, splice or vmsplice, or -m null"
ok "mmap into /dev/null refused"

random_file "$T/src" $((3 * 1048576 + 77))
# stdin (a pipe, length unknown) -> stdout (a pipe): segments on the wire.
for sm in rw splice vmsplice; do
	for rm in rw splice vmsplice; do
		next_port
		"$DND" recv -p "$PORT" -m "$rm" - 2>"$T/r.log" | cat >"$T/out" &
		rp=$!
		_pids+=("$rp")
		wait_listen "$PORT"
		cat "$T/src" | "$DND" send -c 127.0.0.1 -p "$PORT" -m "$sm" - >"$T/s.log" 2>&1
		src=$?
		wait "$rp"
		[ "$src" = 0 ] || fail "stdin -> stdout $sm -> $rm: $(cat "$T/s.log" "$T/r.log")"
		cmp -s "$T/src" "$T/out" || fail "stdin -> stdout $sm -> $rm: data differs"
		grep -q "verify: counted ($((3 * 1048576 + 77)) bytes)" "$T/r.log" ||
			fail "stdout sink must say counted: $(cat "$T/r.log")"
	done
done
ok "stdin pipe -> stdout pipe for 9 pairs"

# stdin pipe -> file: rw and vmsplice hash what passes through their buffer,
# splice what it copies aside with tee(2): every one is verified.
for sm in rw vmsplice splice; do
	rm -f "$T/dst"
	next_port
	start_recv "$T/r.log" "$T/dst"
	cat "$T/src" | "$DND" send -c 127.0.0.1 -p "$PORT" -m "$sm" - >"$T/s.log" 2>&1
	SRC=$?
	wait_recv
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "stdin -> file $sm: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src" "$T/dst" || fail "stdin -> file $sm: data differs"
	grep -q "verify: verified" "$T/s.log" || fail "stdin -> file $sm: not verified: $(cat "$T/s.log")"
	grep -q "verify: verified as received " "$T/r.log" || fail "stdin -> file $sm: receiver not verified"
	[ "$sm" = splice ] && ! grep -q "syscalls:.*tee" "$T/s.log" &&
		fail "splice from a pipe hashed without tee: $(cat "$T/s.log")"
done
ok "stdin pipe -> file: verified through user buffers and through tee"

# uring-splice never sees a pipe's bytes and cannot tee: refused up front
# unless verification is off.
if "$DND" probe --require uring-splice >/dev/null 2>&1; then
	OUT=$(echo hi | "$DND" send -c 127.0.0.1 -p 1 -m uring-splice - 2>&1)
	[ $? = 2 ] || fail "uring-splice from a pipe with verification: $OUT"
	expect_out "uring-splice cannot hash a stream source it never sees"
fi

# A pipe with -l has a known length: exactly that much is sent.
rm -f "$T/dst"
next_port
start_recv "$T/r.log" "$T/dst"
cat "$T/src" | "$DND" send -c 127.0.0.1 -p "$PORT" -l 1000 - >"$T/s.log" 2>&1
SRC=$?
wait_recv
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "pipe with -l: $(cat "$T/s.log" "$T/r.log")"
head -c 1000 "$T/src" | cmp -s - "$T/dst" || fail "pipe with -l: wrong data"
ok "pipe source with -l sends exactly -l bytes"

# sendfile cannot read a pipe: said before connecting.
next_port
expect_exit 2 sh -c "cat '$T/src' | '$DND' send -c 127.0.0.1 -p $PORT -m sendfile -"
expect_out "dnd: sendfile cannot read from a pipe or stream (its input must be a file); use -m splice or -m rw"
ok "sendfile from a pipe refused"

# A slow reader behind stdout: vmsplice hands the pipe its buffer's pages
# by reference, so they must never be reused under the reader (-b 4Ki makes
# the receiver cycle its two buffers many times per pipeful).
random_file "$T/src8" $((8 * 1048576))
for rm in vmsplice splice rw; do
	next_port
	"$DND" recv -p "$PORT" -m "$rm" -b 4Ki - 2>"$T/r.log" | (sleep 0.5; cat >"$T/out") &
	rp=$!
	_pids+=("$rp")
	wait_listen "$PORT"
	"$DND" send -c 127.0.0.1 -p "$PORT" "$T/src8" >"$T/s.log" 2>&1 || fail "send to slow stdout ($rm)"
	wait "$rp"
	cmp -s "$T/src8" "$T/out" || fail "-m $rm into a slow stdout reader: data differs"
done
ok "a slow stdout reader gets intact data"

# The reader of stdout goes away: the cause is the reader, not the sender.
next_port
"$DND" recv -p "$PORT" - 2>"$T/r.log" | head -c 1000 >/dev/null &
rp=$!
wait_listen "$PORT"
"$DND" send -c 127.0.0.1 -p "$PORT" "$T/src8" >"$T/s.log" 2>&1
wait "$rp"
grep -q "dnd: the reader of - went away after [0-9]* bytes (broken pipe)" "$T/r.log" ||
	fail "reader gone: $(cat "$T/r.log")"
ok "a vanished stdout reader is named"
