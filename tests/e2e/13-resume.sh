#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --resume: an interrupted transfer keeps its landed prefix; the next one of
# the same source sends only the rest, after both ends agree on the
# prefix's hash; a changed source or an altered partial starts over.
# Without --resume nothing changes: a failure leaves nothing.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || skip "jq is not installed"
D="$T/land"
mkdir "$D"
SIZE=$((160 << 20))
random_file "$T/src" "$SIZE"

# resume: the same source again, both ends --json; checks the outcome.
resume() {
	xfer "-c 127.0.0.1 --json $T/src" "--resume --json $D/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "resumed transfer: $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src" "$D/dst" || fail "resumed file differs"
	[ "$(ls -A "$D")" = dst ] || fail "left beside the file: $(ls -A "$D")"
}

# Without --resume a failure keeps nothing.
cut_transfer "$T/src" "$D"
[ -z "$KEPT" ] || fail "a partial was kept without --resume"
no_leftovers "$D"
ok "without --resume an interrupted transfer leaves nothing"

# With it: the prefix is kept, and only the rest is sent next time.
cut_transfer "$T/src" "$D" --resume
[ -n "$KEPT" ] && [ "$KEPT" -gt 0 ] && [ "$KEPT" -lt "$SIZE" ] ||
	fail "kept '$KEPT' of $SIZE: $(cat "$T/r.log"; ls -la "$D")"
grep -q "dnd: kept $KEPT bytes for --resume" "$T/r.log" || fail "$(cat "$T/r.log")"
[ "$(stat -c %s "$D/.dst.dnd-partial")" = "$KEPT" ] || fail "partial size"
[ ! -e "$D/dst" ] || fail "a partial file stands under the target's name"
resume
for side in s r; do
	jq -e --argjson k "$KEPT" --argjson n "$SIZE" '.resumed_from == $k and
		.bytes == $n - $k and .verdict == "verified"' \
		<(json_of "$T/$side.log") >/dev/null ||
		fail "resume report ($side): $(cat "$T/$side.log")"
done
want=$(xxhsum -H3 "$T/src" 2>/dev/null | grep -oE '[0-9a-f]{16}' | head -n1)
jq -e --arg h "$want" '.xxh3 == $h' <(json_of "$T/r.log") >/dev/null ||
	fail "the verdict does not cover the whole file"
ok "resumed from $KEPT bytes: $((SIZE - KEPT)) sent, whole file verified"
rm "$D/dst"

# The source changed (its time, so its identity): start over, and say so.
cut_transfer "$T/src" "$D" --resume
[ -n "$KEPT" ] || fail "nothing kept"
touch -d '2001-01-01' "$T/src"
resume
grep -q "is of another source (size, time or inode differ); starting over" "$T/r.log" ||
	fail "no reason given: $(cat "$T/r.log")"
jq -e --argjson n "$SIZE" '.resumed_from == 0 and .bytes == $n' \
	<(json_of "$T/s.log") >/dev/null || fail "$(cat "$T/s.log")"
ok "a changed source starts over and says why"
rm "$D/dst"

# The partial file was altered: the prefix hashes differ, start over.
cut_transfer "$T/src" "$D" --resume
[ -n "$KEPT" ] || fail "nothing kept"
printf 'X' | dd of="$D/.dst.dnd-partial" bs=1 seek=100 conv=notrunc 2>/dev/null
resume
grep -q "the kept $KEPT bytes differ from the sender's" "$T/r.log" ||
	fail "no reason given: $(cat "$T/r.log")"
jq -e --argjson n "$SIZE" '.resumed_from == 0 and .bytes == $n and
	.verdict == "verified"' <(json_of "$T/r.log") >/dev/null ||
	fail "$(cat "$T/r.log")"
ok "an altered partial file starts over and says why"
