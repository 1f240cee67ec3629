#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every send method x every receive method, file -> TCP -> file, for sizes
# around the page and buffer edges: byte-exact, and "verified" on both
# sides. All sizes over IPv4; over IPv6 the sizes that cross the edges.
. "$(dirname "$0")/lib.sh"

SEND="rw mmap sendfile splice vmsplice"
RECV="rw mmap splice vmsplice"
n=0
for size in 0 1 4095 4096 65537 $((64 * 1048576 + 13)); do
	random_file "$T/src.$size" "$size"
done

pair() {
	local host=$1 sm=$2 rm=$3 size=$4 dst="$T/dst"
	rm -f "$dst"
	xfer "-c $host -m $sm $T/src.$size" "-m $rm $dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "$sm -> $rm, $size bytes over $host: send $SRC recv $RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src.$size" "$dst" || fail "$sm -> $rm, $size bytes: data differs"
	grep -q "verify: verified (xxh3 [0-9a-f]*, $size bytes; catches accidents, not attackers: use --key)" "$T/s.log" ||
		fail "$sm -> $rm: sender did not report verified: $(cat "$T/s.log")"
	grep -q "verify: verified $(recv_kind "$rm") (xxh3 [0-9a-f]*, $size bytes; catches accidents, not attackers: use --key)" "$T/r.log" ||
		fail "$sm -> $rm: receiver did not report verified: $(cat "$T/r.log")"
	n=$((n + 1))
}

for sm in $SEND; do
	for rm in $RECV; do
		for size in 0 1 4095 4096 65537 $((64 * 1048576 + 13)); do
			pair 127.0.0.1 "$sm" "$rm" "$size"
		done
		for size in 4095 65537; do
			pair ::1 "$sm" "$rm" "$size"
		done
	done
done

# The hash dnd prints is XXH3-64 as xxhsum computes it: an independent check.
if command -v xxhsum >/dev/null; then
	want=$(xxhsum -H3 "$T/src.65537" | sed 's/.*= //')
	grep -q "xxh3 $want" "$T/r.log" || fail "printed hash is not xxhsum -H3's $want"
fi
# The cost line of the last transfer, on both sides: steal apart from busy.
for side in s r; do
	grep -Eq '^  cpu: user [0-9.]+ s, sys [0-9.]+ s \([0-9.]+% of one CPU\), [0-9.]+ us/MB; machine busy [0-9.]+% of [0-9]+ CPUs, steal [0-9.]+%$' "$T/$side.log" ||
		fail "no cpu line with busy and steal: $(cat "$T/$side.log")"
done
ok "$n transfers byte-exact and verified on both sides"
