#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# uring and uring-splice against every method of the core on the other side,
# both directions: byte-exact, verified on both ends, SEND_ZC notifications
# and copies accounted. Never asserts that loopback avoided a copy.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"

# io_uring first: without liburing the probe says "not built" (77).
require_feature io_uring
require_feature uring
require_feature uring-splice

SIZES="0 1 4095 65537 $((3 * 1048576 + 13))"
for size in $SIZES; do
	random_file "$T/src.$size" "$size"
done

# pair SEND-ARGS RECV-ARGS SIZE: one file -> file transfer, checked; both
# reports are JSON in $T/s.log and $T/r.log.
pair() {
	local sargs=$1 rargs=$2 size=$3 side
	rm -f "$T/dst"
	xfer "-c 127.0.0.1 --json $sargs $T/src.$size" "--json $rargs $T/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "$sargs -> $rargs, $size bytes: send $SRC recv $RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src.$size" "$T/dst" || fail "$sargs -> $rargs, $size bytes: data differs"
	for side in s r; do
		jq -e --argjson n "$size" '.ok and .verdict == "verified" and
			.bytes == $n and (.zerocopy == null or
			.zerocopy.zc_bytes + .zerocopy.copied_bytes == $n)' \
			<(json_of "$T/$side.log") >/dev/null ||
			fail "$sargs -> $rargs, $size bytes ($side): $(cat "$T/$side.log")"
	done
}

# uring's sender: SEND_ZC notifications counted, or plain SEND named.
check_uring_send() {
	jq -e --argjson n "$1" '.zerocopy.copied_completions <=
		.zerocopy.completions and
		if (.note | test("SEND_ZC")) then
			($n == 0 or .zerocopy.completions > 0)
		else (.note | test("plain SEND")) and
			.zerocopy.completions == 0 end' <(json_of "$T/s.log") >/dev/null ||
		fail "uring send accounting, $1 bytes: $(cat "$T/s.log")"
}

n=0
for um in uring uring-splice; do
	for rm in rw mmap splice vmsplice "$um"; do
		for size in $SIZES; do
			pair "-m $um" "-m $rm" "$size"
			[ "$um" = uring ] && check_uring_send "$size"
			n=$((n + 1))
		done
	done
	for sm in rw mmap sendfile splice vmsplice; do
		for size in $SIZES; do
			pair "-m $sm" "-m $um" "$size"
			n=$((n + 1))
		done
	done
done
ok "$n transfers with uring and uring-splice byte-exact and verified"

big=$((3 * 1048576 + 13))
for qd in 1 32; do
	pair "-m uring -b 16Ki --qd $qd" "-m uring -b 16Ki --qd $qd" "$big"
	check_uring_send "$big"
done
jq -r '"  uring SEND_ZC on loopback: \(.zerocopy.completions) notifications, " +
	"\(.zerocopy.copied_completions) reported copied"' <(json_of "$T/s.log")
jq -r '"  uring recv: \(.zerocopy.copied_bytes) B copied (RECV copies)"' <(json_of "$T/r.log")
pair "-m uring-splice -b 1Mi --pipe-size 1Mi" "-m uring-splice -b 16Ki --pipe-size 16Ki" "$big"
jq -e '.pipe_bytes == 16384' <(json_of "$T/r.log") >/dev/null || fail "pipe size: $(cat "$T/r.log")"
ok "--qd 1 and 32, buffer and pipe sizes"

# Streams: stdin is sent as segments, and the receiver must stop at each
# segment's end. uring reads into user memory and hashes it there (so the
# run is verified); uring-splice never sees the bytes, so it is refused
# unless both ends give up verification (counted).
OUT=$(echo hi | "$DND" send -p 1 -c 127.0.0.1 -m uring-splice - 2>&1)
[ $? = 2 ] || fail "uring-splice from a pipe, verifying: $OUT"
expect_out "uring-splice cannot hash a stream source it never sees"
for um in uring uring-splice; do
	nv=
	[ "$um" = uring-splice ] && nv=--no-verify
	next_port
	start_recv "$T/r.log" -m rw $nv "$T/dst.$um"
	cat "$T/src.$big" | "$DND" send -p "$PORT" -c 127.0.0.1 -m "$um" $nv - \
		>"$T/s.log" 2>&1 || fail "$um from stdin: $(cat "$T/s.log")"
	wait_recv
	[ "$RRC" = 0 ] && cmp -s "$T/src.$big" "$T/dst.$um" ||
		fail "$um from stdin: $(cat "$T/r.log")"
	want="verified (xxh3 [0-9a-f]*, $big bytes; catches accidents, not attackers: use --key)"
	[ "$um" = uring-splice ] && want="counted ($big bytes)"
	grep -q "verify: $want" "$T/s.log" ||
		fail "$um from stdin: not $want: $(cat "$T/s.log")"

	# stdout is a pipe, as splice wants it.
	next_port
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	cat "$T/fifo" >"$T/out" &
	CPID=$!
	_pids+=("$CPID")
	"$DND" recv -p "$PORT" -m "$um" - >"$T/fifo" 2>"$T/r.log" &
	RPID=$!
	_pids+=("$RPID")
	wait_listen "$PORT"
	cat "$T/src.$big" | "$DND" send -p "$PORT" -c 127.0.0.1 - \
		>"$T/s.log" 2>&1 || fail "stdin to $um: $(cat "$T/s.log" "$T/r.log")"
	wait_recv
	wait "$CPID"
	[ "$RRC" = 0 ] || fail "$um to stdout: $(cat "$T/r.log")"
	cmp -s "$T/src.$big" "$T/out" || fail "$um to stdout: data differs"
done
ok "stdin -> uring, uring-splice -> stdout"

# The note says which send the kernel gave.
xfer "-c 127.0.0.1 -m uring $T/src.65537" "-m rw $T/dst2"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "text run: $(cat "$T/s.log" "$T/r.log")"
grep -Eq '^  note: (READ_FIXED, then SEND_ZC|plain SEND)' "$T/s.log" ||
	fail "note does not name the send: $(cat "$T/s.log")"
grep -Eq '^  zerocopy: [0-9]+ B without a copy, [0-9]+ B copied' "$T/s.log" ||
	fail "no zerocopy line: $(cat "$T/s.log")"
ok "the report names SEND_ZC or plain SEND"
