#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --resume with a kept partial file or record that cannot be trusted: a
# damaged record, a partial shorter than its record, one that is a FIFO, a
# symlink, a directory, a hard link or another user's, a record that is a
# FIFO or a symlink: each starts over and says why, lands the exact file
# and leaves nothing beside it. The record is never written through a
# symlink, and the loser of two receivers on one target keeps nothing.
. "$(dirname "$0")/lib.sh"

D="$T/land"
mkdir "$D"
SIZE=$((160 << 20))
random_file "$T/src" "$SIZE"
P="$D/.dst.dnd-partial"

# A record planted where the next one is written: it must not be followed.
echo precious >"$T/victim"
ln -s "$T/victim" "$P.info.new"
cut_transfer "$T/src" "$D" --resume
[ -n "$KEPT" ] && [ "$KEPT" -gt 1 ] || fail "nothing kept: $(cat "$T/r.log")"
[ "$(cat "$T/victim")" = precious ] ||
	fail "the record was written through a symlink: $(head -c 200 "$T/victim")"
[ ! -e "$P.info.new" ] && [ ! -L "$P.info.new" ] || fail "$P.info.new left"
ok "the record is never written through a symlink planted at its name"

# The good pair, for the cases below to damage.
cp "$P" "$T/part"
cp "$P.info" "$T/rec"
rm "$P" "$P.info"

# over WHY: the next --resume transfer starts over saying WHY about the
# partial, lands the exact file and leaves nothing else in $D. The
# sender waits 10 s at most for a receiver that hangs.
over() {
	xfer "-c 127.0.0.1 --timeout 10 $T/src" "--resume $D/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "$1: $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
	grep -qxF "dnd: the kept partial file $P $1; starting over" "$T/r.log" ||
		fail "no reason '$1': $(cat "$T/r.log")"
	cmp -s "$T/src" "$D/dst" || fail "$1: the landed file differs"
	[ "$(ls -A "$D")" = dst ] || fail "$1: left beside the file: $(ls -A "$D")"
	rm "$D/dst"
}

cp "$T/part" "$P" && cp "$T/rec" "$P.info"
truncate -s $((KEPT - 1)) "$P"
over "is shorter than its record says ($((KEPT - 1)) of $KEPT bytes)"

cp "$T/part" "$P"
sed "s/^prefix .*/prefix $((KEPT + 1))/" "$T/rec" >"$P.info"
over "is shorter than its record says ($KEPT of $((KEPT + 1)) bytes)"

cp "$T/part" "$P"
sed 's/^prefix .*/prefix 0/' "$T/rec" >"$P.info"
over "holds no bytes by its record"
ok "a partial shorter than its record, or of none, starts over"

cp "$T/part" "$T/target"
ln -s "$T/target" "$P" && cp "$T/rec" "$P.info"
over "is not a regular file"
cmp -s "$T/part" "$T/target" || fail "written through a symlinked partial"
mkfifo "$P" && cp "$T/rec" "$P.info"
over "is not a regular file"
mkdir "$P" && cp "$T/rec" "$P.info"
over "is not a regular file"
ok "a partial that is a symlink, a FIFO or a directory starts over"

cp "$T/part" "$T/other"
ln "$T/other" "$P" && cp "$T/rec" "$P.info"
over "has 2 links, and writing it would change the other files"
cmp -s "$T/part" "$T/other" || fail "written through a hard-linked partial"
ok "a hard-linked partial starts over, the other file untouched"

if [ "$(id -u)" = 0 ] && nobody=$(id -u nobody 2>/dev/null); then
	cp "$T/part" "$P" && cp "$T/rec" "$P.info"
	chown nobody "$P"
	over "belongs to another user (uid $nobody)"
	ok "another user's partial starts over"
else
	echo "# not root: another user's partial is not tried"
fi

cp "$T/part" "$P" && mkfifo "$P.info"
over "has a record that is not a regular file"
cp "$T/part" "$P" && ln -s "$T/rec" "$P.info"
over "has a record that is not a regular file"
ok "a record that is a FIFO (not waited on) or a symlink starts over"

# Two --resume receivers on one target: A is frozen mid-way while B lands
# the file; A then fails at its rename and keeps no partial of it.
freeze_transfer "$T/src" "$D" --resume
apid=$RPID sa=$SPID
# B's transfer reuses the log names; A's go on under the new ones.
mv "$T/r.log" "$T/a.log"
mv "$T/s.log" "$T/sa.log"
xfer "-c 127.0.0.1 $T/src" "--resume $D/dst"
kill -CONT "$apid"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "B: $SRC/$RRC: $(cat "$T/r.log")"
wait_for "$apid" 30
arc=$?
wait_for "$sa" 30
src=$?
[ "$arc" = 1 ] && [ "$src" = 1 ] ||
	fail "A: $src/$arc: $(cat "$T/sa.log" "$T/a.log")"
grep -qxF "dnd: $D/dst appeared during the transfer (another one landed it?); use -t to replace it" \
	"$T/a.log" || fail "A's cause: $(cat "$T/a.log")"
grep -qxF "dnd: $D/dst was landed by another transfer; nothing kept for --resume" \
	"$T/a.log" || fail "A's partial: $(cat "$T/a.log")"
cmp -s "$T/src" "$D/dst" || fail "the landed file differs"
[ "$(ls -A "$D")" = dst ] || fail "left beside the file: $(ls -A "$D")"
ok "the loser of two receivers on one target keeps nothing"
