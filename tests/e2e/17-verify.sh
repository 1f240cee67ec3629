#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How a receiver verifies (issue 23, --verify): the report names the kind
# for every receive method, at -P 1 and 4 (text and JSON; -P 4 as received
# compares each stream's range with the sender's hash of it); a receiver
# that verifies as received never reads the landed file back (strace, -P 1
# and 4), while --verify readback does; a byte changed on the way is still
# caught as received, at -P 4 in the range it hit; --verify's usage errors.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"

usable() { "$DND" probe --require "$1" >/dev/null 2>&1; }

SIZE=$(((3 << 20) + 5))
random_file "$T/src" "$SIZE"
D="$T/land"
mkdir "$D"

# kind P RECV-ARGS WANT-TEXT WANT-JSON: one push, checked.
kind() {
	local p=$1 rargs=$2 text=$3 json=$4
	rm -f "$D/dst"
	xfer "-c 127.0.0.1 -P $p $T/src" "--json $rargs $D/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "-P $p $rargs: $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src" "$D/dst" || fail "-P $p $rargs: the landed file differs"
	# -P N as received: the N ranges, each against the sender's.
	local ranges=null
	[ "$json" = as-received ] && [ "$p" -gt 1 ] && ranges=$p
	json_of "$T/r.log" | jq -e --arg k "$json" --argjson n "$ranges" \
		'.verdict == "verified" and .verify == $k and .verify_ranges == $n' >/dev/null ||
		fail "-P $p $rargs: not verified $json ($ranges ranges): $(cat "$T/r.log")"
	# The text report, the same receiver without --json.
	rm -f "$D/dst"
	xfer "-c 127.0.0.1 -P $p $T/src" "$rargs $D/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "-P $p $rargs: $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
	grep -qxE "  verify: verified $text \(xxh3 [0-9a-f]{16}, $SIZE bytes; catches accidents, not attackers: use --key\)" \
		"$T/r.log" || fail "-P $p $rargs: not 'verified $text': $(cat "$T/r.log")"
	# The sender cannot tell which: its line is as it was.
	grep -qE "^  verify: verified \(xxh3 " "$T/s.log" ||
		fail "-P $p $rargs: the sender's line: $(cat "$T/s.log")"
}

methods="rw vmsplice mmap splice"
usable uring && methods="$methods uring"
usable uring-splice && methods="$methods uring-splice"
usable tcpmmap && methods="$methods tcpmmap"
n=0
for m in $methods; do
	for p in 1 4; do
		json=as-received
		case $(recv_kind "$m" "$p") in "as received"*) ;; *) json=readback ;; esac
		kind "$p" "-m $m" "$(recv_kind "$m" "$p")" "$json"
		n=$((n + 1))
	done
done
ok "$n receivers ($methods; -P 1 and 4) name how they verified"

if usable uring; then
	kind 1 --direct "as received" as-received
	kind 4 --direct "$(recv_kind rw 4)" as-received
	kind 4 "--direct --verify readback" "by reading back the landed file" readback
	kind 1 "--direct --verify readback" "by reading back the landed file" readback
	ok "--direct verifies its buffers as received; --verify readback reads the device"
fi
kind 1 "--verify readback" "by reading back the landed file" readback
kind 1 "-m mmap --verify received" "as received" as-received
kind 1 "-m splice --verify readback" "by reading back the landed file" readback
grep -q "note: splice: the bytes received are hashed through tee(2) into a side pipe, read back" "$T/r.log" &&
	fail "splice --verify readback tees all the same: $(cat "$T/r.log")"
kind 1 "-m splice" "as received" as-received
grep -q "note: splice: the bytes received are hashed through tee(2) into a side pipe, read back" "$T/r.log" ||
	fail "splice: no tee note: $(cat "$T/r.log")"
ok "--verify readback reads the landed file back; --verify received is the default"

# The landed file is read back (mapped or pread) only when asked: strace
# shows the file's descriptor, beneath $D, in no mmap or pread64 of a
# receiver that verified as received. The readback runs prove the check
# would see it.
if command -v strace >/dev/null; then
	# traced NAME RECV-ARGS [SEND-ARGS]: the receiver's calls on files
	# beneath $D.
	traced() {
		rm -f "$D/dst"
		next_port
		# shellcheck disable=SC2086
		start_recv_traced "$T/st.$1" mmap,pread64,read "$T/r.log" $2 "$D/dst"
		# shellcheck disable=SC2086
		"$DND" send -c 127.0.0.1 -p "$PORT" ${3:-} "$T/src" >"$T/s.log" 2>&1 ||
			fail "strace'd $1: $(cat "$T/s.log")"
		wait_recv
		[ "$RRC" = 0 ] || fail "strace'd $1: exit $RRC: $(cat "$T/r.log")"
		cmp -s "$T/src" "$D/dst" || fail "strace'd $1: the landed file differs"
		R=$(grep -cE "^[0-9]+ +(mmap|pread64|read)\(.*<$D/" "$T/st.$1")
	}
	traced rw "-m rw"; r=$R
	[ "$r" = 0 ] || fail "rw as received read the landed file: $(grep "<$D/" "$T/st.rw")"
	traced rw-back "-m rw --verify readback"; r=$R
	[ "$r" -gt 0 ] || fail "rw --verify readback: no read of the landed file: $(cat "$T/st.rw-back")"
	# -P 4 over a file whose ranges are 2 MiB or more (4 real ranges).
	cp "$T/src" "$T/src1"
	random_file "$T/src" $(((9 << 20) + 5))
	traced rw4 "-m rw" "-P 4"; r=$R
	[ "$r" = 0 ] || fail "rw -P 4 as received read the landed file: $(grep "<$D/" "$T/st.rw4")"
	grep -qF "each of 4 ranges against the sender's" "$T/r.log" ||
		fail "rw -P 4: not verified range by range: $(cat "$T/r.log")"
	traced rw4-back "-m rw --verify readback" "-P 4"; r=$R
	[ "$r" -gt 0 ] || fail "rw -P 4 --verify readback: no read of the landed file"
	if usable uring; then
		traced direct --direct; r=$R
		[ "$r" = 0 ] || fail "--direct as received read the landed file: $(grep "<$D/" "$T/st.direct")"
		traced direct-back "--direct --verify readback"; r=$R
		[ "$r" -gt 0 ] || fail "--direct --verify readback: no read of the landed file"
		traced direct4 --direct "-P 4"; r=$R
		[ "$r" = 0 ] || fail "--direct -P 4 as received read the landed file: $(grep "<$D/" "$T/st.direct4")"
	fi
	mv "$T/src1" "$T/src"
	ok "as received, rw and --direct (-P 1 and 4) never read the landed file; --verify readback does"
fi

# A byte flipped on the way (keyless) is still caught as received: the
# receiver's hash of what arrived differs from the sender's.
need_py3
MITM=$(dirname "$0")/mitm_tls.py
# flipped RECV-ARGS SRC CONNS OFFSET SEND-ARGS WANT: a push through a proxy
# of CONNS connections that flips the byte at OFFSET of each one reaching
# it (one does); the sender exits 1, the receiver 1 with the line WANT (an
# ERE), and nothing lands.
flipped() {
	local rargs=$1 src=$2 conns=$3 off=$4 sargs=$5 want=$6
	rm -f "$D/dst"
	next_port
	# shellcheck disable=SC2086
	start_recv "$T/r.log" $rargs "$D/dst"
	TPORT=$PORT
	next_port
	bg "$T/m.log" timeout 60 "$PY3" "$MITM" --conns "$conns" --timeout 40 "$PORT" 127.0.0.1 "$TPORT" flip "$off"
	MPID=$BPID
	wait_log "$T/m.log" '^ready' "the proxy did not start"
	# shellcheck disable=SC2086
	expect_exit 1 timeout 120 "$DND" send -c 127.0.0.1 -p "$PORT" $sargs "$src"
	wait_recv
	wait_for "$MPID" 20 || fail "the proxy exited $?"
	[ "$(grep -c '^flipped' "$T/m.log")" = 1 ] || fail "$rargs $sargs: flipped: $(cat "$T/m.log")"
	[ "$RRC" = 1 ] || fail "$rargs $sargs: a flipped byte: receiver exit $RRC: $(cat "$T/r.log")"
	grep -qxE "$want" "$T/r.log" || fail "$rargs $sargs: not '$want': $(cat "$T/r.log")"
	no_leftovers "$D"
}
for rargs in "-m rw" "-m vmsplice" "-m mmap" "-m splice" "--verify readback"; do
	flipped "$rargs" "$T/src" 1 $((1 << 20)) "" \
		"dnd: hash mismatch: sent xxh3 [0-9a-f]{16}, landed [0-9a-f]{16}; $D/dst was not written"
done
ok "a byte flipped on the way fails the transfer as received and read back, nothing lands"

# -P 4 over 9 MiB: ranges of 2, 2, 2 and 3 MiB. Only the last stream's
# connection carries 2.5 MiB (stream 0's the first range and the talk),
# so the byte flipped there is in range 4, and the receiver names it; so
# does the sender, from the receiver's reply.
random_file "$T/src4" $(((9 << 20) + 5))
range4="hash mismatch in range 4 of 4 (stream 3: bytes 6291456-9437188)"
for rargs in "-m rw" "--direct"; do
	[ "$rargs" = --direct ] && ! usable uring && continue
	flipped "$rargs" "$T/src4" 4 $((5 << 19)) "-P 4" \
		"dnd: ${range4//[()]/\\&}: sent xxh3 [0-9a-f]{16}, landed [0-9a-f]{16}; $D/dst was not written"
	expect_out "dnd: the receiver failed: $range4"
done
ok "-P 4: a byte flipped in one stream fails the transfer as received, naming its range; nothing lands"

# Usage: exit 2, the fix named.
expect_exit 2 "$DND" recv --verify readback --no-verify "$D/x"
expect_out "dnd: --verify says how to verify; it cannot go with --no-verify: choose one"
expect_exit 2 "$DND" recv --verify readback --raw "$D/x"
expect_out "dnd: --verify says how to verify; it cannot go with --raw, which verifies nothing"
expect_exit 2 "$DND" recv --verify disk "$D/x"
expect_out "dnd: --verify 'disk': use received or readback"
expect_exit 2 "$DND" send -c 127.0.0.1 --verify readback "$T/src"
expect_out "dnd: --verify is the receiver's choice; the sender hashes what it sends"
no_leftovers "$D"
ok "--verify: with --no-verify or --raw, an unknown word, on the sender: usage errors"
