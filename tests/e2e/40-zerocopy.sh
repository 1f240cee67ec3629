#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# zerocopy (MSG_ZEROCOPY send) against every receive method of the core:
# byte-exact, verified, and a report whose completion accounting adds up.
# Loopback copies (SO_EE_CODE_ZEROCOPY_COPIED), so zero copy is never asserted.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"

require_feature zerocopy

SIZES="0 1 4095 65537 $((3 * 1048576 + 13))"
for size in $SIZES; do
	random_file "$T/src.$size" "$size"
done

# pair SEND-ARGS RECV-METHOD SIZE: one file -> file transfer, checked.
pair() {
	local sargs=$1 rm=$2 size=$3
	rm -f "$T/dst"
	xfer "-c 127.0.0.1 --json $sargs $T/src.$size" "-m $rm $T/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "$sargs -> $rm, $size bytes: send $SRC recv $RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src.$size" "$T/dst" || fail "$sargs -> $rm, $size bytes: data differs"
	grep -q "verify: verified $(recv_kind "$rm") (xxh3 [0-9a-f]*, $size bytes; catches accidents, not attackers: use --key)" "$T/r.log" ||
		fail "$sargs -> $rm: receiver did not verify: $(cat "$T/r.log")"
	# Every send call completes exactly once; bytes are copied or not.
	jq -e --argjson n "$size" '.ok and .verdict == "verified" and
		.zerocopy.zc_bytes + .zerocopy.copied_bytes == $n and
		.zerocopy.completions == (.syscalls.send.calls // 0) -
			.zerocopy.enobufs and
		.zerocopy.copied_completions <= .zerocopy.completions and
		($n == 0 or .zerocopy.completions > 0)' "$T/s.log" >/dev/null ||
		fail "$sargs -> $rm, $size bytes: accounting: $(cat "$T/s.log")"
}

n=0
for rm in rw mmap splice vmsplice; do
	for size in $SIZES; do
		pair "-m zerocopy" "$rm" "$size"
		n=$((n + 1))
	done
done
ok "$n zerocopy transfers byte-exact, verified, completions accounted"

# Over IPv6 the completions come as SOL_IPV6/IPV6_RECVERR messages.
rm -f "$T/dst"
xfer "-c ::1 --json -m zerocopy $T/src.65537" "-m rw $T/dst"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] && cmp -s "$T/src.65537" "$T/dst" ||
	fail "IPv6: $(cat "$T/s.log" "$T/r.log")"
jq -e '.zerocopy.completions > 0 and .zerocopy.completions ==
	.syscalls.send.calls - .zerocopy.enobufs' "$T/s.log" >/dev/null ||
	fail "IPv6 accounting: $(cat "$T/s.log")"
ok "IPv6"

# A ring of one buffer must wait for each completion; 16 may all be out.
for qd in 1 16; do
	pair "-m zerocopy -b 16Ki --qd $qd" rw $((3 * 1048576 + 13))
done
ok "--qd 1 and --qd 16"
jq -r '"  loopback: \(.zerocopy.completions) completions, " +
	"\(.zerocopy.copied_completions) reported copied"' "$T/s.log"

# The text report names both counts.
xfer "-c 127.0.0.1 -m zerocopy $T/src.65537" "-m rw $T/dst2"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "text run: $(cat "$T/s.log" "$T/r.log")"
grep -Eq '^  zerocopy: [0-9]+ B without a copy, [0-9]+ B copied; [0-9]+ completions, [0-9]+ reported copied' "$T/s.log" ||
	fail "no zerocopy line: $(cat "$T/s.log")"
! grep -q 'zerocopy:' "$T/r.log" || fail "rw receiver claims zerocopy counts"
ok "text report shows completions and copies"

# A stream source is hashed as it is read: still verified.
next_port
start_recv "$T/r.log" -m splice "$T/dst3"
cat "$T/src.65537" | "$DND" send -p "$PORT" -c 127.0.0.1 -m zerocopy - >"$T/s.log" 2>&1 ||
	fail "stdin send: $(cat "$T/s.log")"
wait_recv
[ "$RRC" = 0 ] && cmp -s "$T/src.65537" "$T/dst3" || fail "stdin: $(cat "$T/r.log")"
grep -q 'verify: verified' "$T/s.log" || fail "stdin not verified: $(cat "$T/s.log")"
ok "stdin source through zerocopy, verified"

# /dev/zero to the null receiver (counted, not a file).
xfer "-c 127.0.0.1 -m zerocopy -l 1Mi /dev/zero" "-m null /dev/null"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "zero -> null: $(cat "$T/s.log" "$T/r.log")"
grep -q 'verify: counted (1048576 bytes)' "$T/r.log" || fail "null: $(cat "$T/r.log")"
ok "zerocopy -> null"

expect_exit 2 "$DND" recv -m zerocopy "$T/never"
expect_out "zerocopy cannot receive"
expect_exit 2 "$DND" send -c 127.0.0.1 --qd 0 -m zerocopy "$T/src.1"
expect_out "--qd '0'"
ok "usage errors"

# A zerocopy sender gets its buffers back only when ACKs free them: its
# plan asks the receiver for TCP_QUICKACK. An rw sender's does not, and
# that receiver leaves TCP's delayed ACKs alone (cheaper for streaming).
# LeakSanitizer cannot run under ptrace: off for the traced receiver.
if command -v strace >/dev/null; then
	for sm in zerocopy rw; do
		next_port
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			strace -f -e trace=setsockopt -o "$T/st.$sm" \
			"$DND" recv -p "$PORT" -m rw "$T/dst.$sm" >"$T/r.log" 2>&1 &
		_pids+=("$!")
		RPID=$!
		wait_listen "$PORT"
		"$DND" send -c 127.0.0.1 -p "$PORT" -m "$sm" "$T/src.65537" \
			>"$T/s.log" 2>&1 || fail "strace'd $sm: $(cat "$T/s.log")"
		wait_recv
		[ "$RRC" = 0 ] || fail "strace'd $sm: receiver exit $RRC: $(cat "$T/r.log")"
		cmp -s "$T/src.65537" "$T/dst.$sm" || fail "strace'd $sm: data differs"
	done
	grep -q "TCP_QUICKACK, \[1\]" "$T/st.zerocopy" ||
		fail "no TCP_QUICKACK for a zerocopy sender: $(cat "$T/st.zerocopy")"
	grep -q "TCP_QUICKACK" "$T/st.rw" &&
		fail "TCP_QUICKACK for an rw sender: $(cat "$T/st.rw")"
	ok "the receiver ACKs at once only for a sender that waits for ACKs"
fi
