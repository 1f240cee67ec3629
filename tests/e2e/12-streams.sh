#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -P N: one file over N connections, each landing at its offset; one
# verdict for the whole file, equal to xxhsum -H3 of it. Every send and
# every receive method at least once, on awkward sizes. A stream that dies
# fails the transfer and leaves nothing behind.
. "$(dirname "$0")/lib.sh"

D="$T/land"
mkdir "$D"
SIZES="0 1 3 15 $((64 * 1048576 + 13))"
for n in $SIZES; do random_file "$T/src.$n" "$n"; done

usable() { "$DND" probe --require "$1" >/dev/null 2>&1; }

# run P SEND RECV SIZE
run() {
	local p=$1 sm=$2 rm=$3 n=$4 want
	rm -f "$D/dst"
	xfer "-c 127.0.0.1 -P $p -m $sm $T/src.$n" "-m $rm $D/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "-P $p $sm -> $rm, $n bytes: $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src.$n" "$D/dst" || fail "-P $p $sm -> $rm, $n bytes: data differs"
	want=$(xxhsum -H3 "$D/dst" 2>/dev/null | grep -oE '[0-9a-f]{16}' | head -n1)
	grep -q "verify: verified (xxh3 $want, $n bytes; catches accidents, not attackers: use --key)" "$T/s.log" ||
		fail "-P $p $sm -> $rm: sender's verdict: $(cat "$T/s.log")"
	grep -q "verify: verified $(recv_kind "$rm" "$p") (xxh3 $want, $n bytes; catches accidents, not attackers: use --key)" "$T/r.log" ||
		fail "-P $p $sm -> $rm: receiver's verdict: $(cat "$T/r.log")"
	if [ "$p" -gt 1 ]; then
		[ "$(grep -c '^  stream [0-9]*:' "$T/s.log")" = "$p" ] ||
			fail "-P $p: the report lacks a line per stream: $(cat "$T/s.log")"
	fi
	rm -f "$D/dst"
	no_leftovers "$D"
}

# Every send method and every file receive method, at -P 1, 2, 4 and 16.
pairs="rw:rw sendfile:splice mmap:vmsplice splice:mmap vmsplice:rw"
usable uring && pairs="$pairs uring:uring"
usable uring-splice && pairs="$pairs uring-splice:uring-splice"
usable zerocopy && pairs="$pairs zerocopy:rw"
usable tcpmmap && pairs="$pairs rw:tcpmmap"
i=0
for pair in $pairs; do
	for p in 1 2 4 16; do
		for n in $SIZES; do
			# The big file through every pair; the small ones
			# through a rotation, to keep the run short.
			if [ "$n" -lt 1048576 ] && [ $((i++ % 3)) != 0 ]; then
				continue
			fi
			run "$p" "${pair%:*}" "${pair#*:}" "$n"
		done
	done
done
ok "-P 1/2/4/16 x ($pairs): byte-exact, one verdict = xxhsum -H3"

# /dev/zero with -l splits too, into the null receiver.
xfer "-c 127.0.0.1 -P 4 -l 100Mi /dev/zero" "-m null /dev/null"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "zero -P 4: $(cat "$T/s.log" "$T/r.log")"
grep -q "verify: counted (104857600 bytes)" "$T/r.log" || fail "$(cat "$T/r.log")"
xfer "-c 127.0.0.1 -P 3 -l 10Mi /dev/zero" "-m rw /dev/null"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "zero -P 3 -> rw /dev/null: $(cat "$T/r.log")"
ok "/dev/zero -l 100Mi over 4 streams into -m null, and into -m rw /dev/null"

# A pipe cannot be split, even with its length given (-l): the streams
# would each take whatever bytes came next. A pipe sink cannot take several
# streams.
OUT=$(echo hi | "$DND" send -c 127.0.0.1 -p 1 -P 2 - 2>&1)
[ $? = 2 ] || fail "pipe source with -P 2: $OUT"
expect_out "dnd: - is read once, as it comes (a pipe, FIFO, socket or device), so it cannot be split over 2 streams; use -P 1"
OUT=$(cat "$T/src.15" | "$DND" send -c 127.0.0.1 -p 1 --connect-timeout 1 -P 3 -l 15 - 2>&1)
[ $? = 2 ] || fail "pipe source with -l and -P 3: $OUT"
expect_out "dnd: - is read once, as it comes (a pipe, FIFO, socket or device), so it cannot be split over 3 streams; use -P 1"
next_port
"$DND" recv -p "$PORT" - >"$T/out" 2>"$T/r.log" &
RPID=$!
_pids+=("$RPID")
wait_listen "$PORT"
"$DND" send -c 127.0.0.1 -p "$PORT" -P 2 "$T/src.15" >"$T/s.log" 2>&1
SRC=$?
wait_recv
[ "$SRC" = 1 ] && [ "$RRC" = 1 ] || fail "-P 2 into stdout: $SRC/$RRC"
grep -q "which a pipe or terminal sink cannot take in order; send with -P 1" "$T/r.log" ||
	fail "$(cat "$T/r.log")"
grep -q "the receiver refused the transfer" "$T/s.log" || fail "$(cat "$T/s.log")"
ok "a pipe source or sink with -P 2 is refused with the reason"

# One stream dies mid-transfer (its sender killed): the receiver fails,
# nothing is left under the target or beside it.
random_file "$T/big" $((128 << 20))
next_port
start_recv "$T/r.log" -b 4Ki "$D/dst"
wait_listen "$PORT"
"$DND" send -c 127.0.0.1 -p "$PORT" -P 4 "$T/big" >"$T/s.log" 2>&1 &
sp=$!
_pids+=("$sp")
wait_size "$D/.dst.dnd-*" 1048576
kill -9 "$sp"
wait_recv
[ "$RRC" = 1 ] || fail "a dead sender's receiver exited $RRC: $(cat "$T/r.log")"
grep -q "dnd: short transfer: the sender closed the connection after" "$T/r.log" ||
	fail "cause: $(cat "$T/r.log")"
no_leftovers "$D"
ok "a stream that dies fails the transfer; nothing left"

# Or only one connection is cut (ss -K, where the kernel can destroy
# sockets): the others are stopped too.
next_port
start_recv "$T/r.log" -b 4Ki "$D/dst"
wait_listen "$PORT"
"$DND" send -c 127.0.0.1 -p "$PORT" -P 4 "$T/big" >"$T/s.log" 2>&1 &
sp=$!
_pids+=("$sp")
wait_size "$D/.dst.dnd-*" 1048576
if ss -K dst 127.0.0.1 dport = ":$PORT" 2>/dev/null | head -n 3 | grep -q .; then
	wait "$sp"
	src=$?
	wait_recv
	[ "$src" = 1 ] && [ "$RRC" = 1 ] || fail "ss -K: exits $src/$RRC"
	no_leftovers "$D"
	ok "one connection destroyed with ss -K: both ends fail, nothing left"
else
	kill -9 "$sp"
	wait_recv
	rm -f "$D"/.dst.dnd-*
	echo "# ss -K cannot destroy sockets here (CONFIG_INET_DIAG_DESTROY)"
fi
