#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One-shot -P N for every N the man page allows (1-64): the receiver takes
# all N connections however many the sender opens before its first join
# (a listen backlog of 16 once timed out every N above 18).
. "$(dirname "$0")/lib.sh"

D="$T/land"
mkdir "$D"
# 64 KiB and 13 bytes: streams split in whole MiB, so all but the last
# carry an empty range here; the 64 MiB run below gives each one data.
random_file "$T/small" $((65536 + 13))
random_file "$T/big" $((64 * 1048576 + 13))

# run N SRC: one push over N streams, byte-exact, both ends verified.
run() {
	xfer "-c 127.0.0.1 --timeout 10 -P $1 $2" "--timeout 10 $D/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "-P $1: exits $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp "$2" "$D/dst" || fail "-P $1: the landed file differs"
	grep -q "verify: verified $(recv_kind rw "$1") (xxh3 [0-9a-f]*, $(stat -c %s "$2") bytes; catches accidents, not attackers: use --key)" \
		"$T/r.log" || fail "-P $1: receiver's verdict: $(cat "$T/r.log")"
	[ "$(grep -c '^  stream [0-9]*:' "$T/s.log")" = "$1" ] || [ "$1" = 1 ] ||
		fail "-P $1: not one report line per stream: $(cat "$T/s.log")"
	rm -f "$D/dst"
	no_leftovers "$D"
}

for n in $(seq 1 64); do
	run "$n" "$T/small"
done
ok "-P 1..64, one-shot push of 64 KiB + 13 bytes: every file byte-exact"
run 64 "$T/big"
ok "-P 64 with 1 MiB or more per stream: byte-exact"
