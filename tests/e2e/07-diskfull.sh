#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A full disk: every receive method fails with "disk full", exit 1, and
# leaves nothing behind; its sender, one-shot or a dnd serve client,
# prints the receiver's reason.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "mounting a small tmpfs needs root"
mkdir "$T/full"
mount -t tmpfs -o size=2m dndtest "$T/full" 2>/dev/null || skip "cannot mount a tmpfs here"
_cleanup_hooks+=("umount '$T/full'")

random_file "$T/src" $((8 * 1048576))
for m in rw mmap splice vmsplice; do
	xfer "-c 127.0.0.1 $T/src" "-m $m $T/full/dst"
	[ "$RRC" = 1 ] || fail "-m $m on a full disk: receiver exit $RRC: $(cat "$T/r.log")"
	grep -q "dnd: disk full writing $T/full/dst after [0-9]* bytes (No space left on device)" "$T/r.log" ||
		fail "-m $m: cause not named: $(cat "$T/r.log")"
	[ "$SRC" = 1 ] || fail "-m $m: sender exit $SRC"
	grep -qx "dnd: the receiver failed: disk full writing $T/full/dst after [0-9]* bytes (No space left on device)" "$T/s.log" ||
		fail "-m $m: sender cause: $(cat "$T/s.log")"
	no_leftovers "$T/full"
done
ok "disk full: named, nothing left, for rw, mmap, splice, vmsplice"

# Over 3 streams the receiver stops every stream but still has stream 0 to
# send its reason on.
xfer "-c 127.0.0.1 -P 3 $T/src" "$T/full/dst"
[ "$RRC" = 1 ] && [ "$SRC" = 1 ] || fail "-P 3 on a full disk: exits $SRC $RRC"
grep -qx "dnd: the receiver failed: disk full writing $T/full/dst after [0-9]* bytes (No space left on device)" "$T/s.log" ||
	fail "-P 3: sender cause: $(cat "$T/s.log")"
no_leftovers "$T/full"
ok "disk full over 3 streams: the sender prints the receiver's reason"

# Keyed, the reason travels in a TLS record that arrives as the receiver
# resets the connection (it closes on the sender's unread payload): the
# sender must still read it, one-shot and from dnd serve below.
(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
for p in 1 3; do
	xfer "-c 127.0.0.1 --key $T/key -P $p $T/src" "--key $T/key $T/full/dst"
	[ "$RRC" = 1 ] && [ "$SRC" = 1 ] || fail "keyed -P $p on a full disk: exits $SRC $RRC"
	grep -qx "dnd: the receiver failed: disk full writing $T/full/dst after [0-9]* bytes (No space left on device)" "$T/s.log" ||
		fail "keyed -P $p: sender cause: $(cat "$T/s.log")"
	no_leftovers "$T/full"
done
ok "keyed disk full, -P 1 and 3: the sender prints the receiver's reason"

# dnd serve: a push that fills the server's disk (its length unknown, so
# no check up front stops it) tells the client the server's own reason.
next_port
bg "$T/serve.log" "$DND" serve --dir "$T/full" -p "$PORT"
# Stopped before the unmount, even when a check below fails.
_cleanup_hooks=("kill $BPID 2>/dev/null && wait $BPID" "${_cleanup_hooks[@]}")
wait_listen "$PORT"
expect_exit 1 sh -c 'cat "$1" | timeout 20 "$2" send -c 127.0.0.1 -p "$3" --to dst -' \
	sh "$T/src" "$DND" "$PORT"
# The file by the client's name, not the server's inner path to it.
grep -qxE "dnd: the receiver failed: disk full writing dst after [0-9]+ bytes \(No space left on device\)" <<<"$OUT" ||
	fail "serve push on a full disk: $OUT"
kill "$BPID"
wait "$BPID"
no_leftovers "$T/full"
ok "serve push on a full disk: the client prints the server's reason"

# Keyed dnd serve: the client reads the server's reason, at -P 1 and over
# several streams.
next_port
bg "$T/kserve.log" "$DND" serve --dir "$T" -p "$PORT" --key "$T/key"
KPID=$BPID
_cleanup_hooks=("kill $KPID 2>/dev/null && wait $KPID" "${_cleanup_hooks[@]}")
wait_listen "$PORT"
# Of unknown length, so no check up front stops it.
expect_exit 1 sh -c 'cat "$1" | timeout 20 "$2" send -c 127.0.0.1 -p "$3" --key "$4" --to full/dst -' \
	sh "$T/src" "$DND" "$PORT" "$T/key"
grep -qxE "dnd: the receiver failed: disk full writing full/dst after [0-9]+ bytes \(No space left on device\)" <<<"$OUT" ||
	fail "keyed serve push on a full disk: $OUT"
no_leftovers "$T/full"
# Over 4 streams a file's length is declared, checked and reserved up
# front (fallocate): a file that fills the disk while the server's session
# is frozen (once its temporary file is there) gets ENOSPC itself, and the
# push lands whole.
mkdir "$T/big"
mount -t tmpfs -o size=600m dndtest "$T/big" || fail "cannot mount a second tmpfs"
_cleanup_hooks+=("umount '$T/big'")
head -c $((512 << 20)) /dev/urandom >"$T/big.src"
timeout 60 "$DND" send -c 127.0.0.1 -p "$PORT" --key "$T/key" -P 4 --to big/dst \
	"$T/big.src" >"$T/k4.log" 2>&1 &
SPID=$!
# The temporary file exists before its space is reserved: wait for the
# blocks.
reserved() {
	local f
	for f in "$T"/big/.dst.dnd-*; do
		[ -f "$f" ] && echo $(($(stat -c '%b*%B' "$f"))) && return
	done
	echo 0
}
for _ in $(seq 1 400); do
	[ "$(reserved)" -ge $((512 << 20)) ] && break
	sleep 0.05
done
[ "$(reserved)" -ge $((512 << 20)) ] ||
	fail "the push's 512 MiB were not reserved in 20 s: $(ls -ls "$T/big")"
KIDS=$(pgrep -P "$KPID") || fail "no session child of the server"
kill -STOP $KIDS
head -c $((600 << 20)) /dev/zero >"$T/big/filler" 2>/dev/null &&
	fail "600 MiB of filler fit beside a reserved 512 MiB push on a 600 MiB tmpfs"
[ "$(stat -c %s "$T/big/filler")" -le $((88 << 20)) ] ||
	fail "the filler took $(stat -c %s "$T/big/filler") bytes of the push's reserved space"
kill -CONT $KIDS
wait "$SPID" || fail "keyed -P 4 beside a full disk: exit $?: $(cat "$T/k4.log")"
cmp -s "$T/big.src" "$T/big/dst" || fail "keyed -P 4 beside a full disk landed other bytes"
rm "$T/big/filler" "$T/big/dst" "$T/big.src"
no_leftovers "$T/big"
# A declared length is checked against the filesystem it lands in, not
# DIR's: refused up front, before a byte moves.
expect_exit 1 timeout 20 "$DND" send -c 127.0.0.1 -p "$PORT" --key "$T/key" --to full/dst "$T/src"
grep -qxF "dnd: server refused: the declared length of 8388608 bytes (8.0 MiB) does not fit: the filesystem of 'full' in the served directory has 2097152 bytes (2.0 MiB) free" <<<"$OUT" ||
	fail "a push larger than the filesystem under DIR: $OUT"
no_leftovers "$T/full"
kill "$KPID"
wait "$KPID"
ok "keyed serve push on a full disk: the client prints the server's reason; -P 4's reserved space holds against a filler"
ok "a push larger than a filesystem mounted under DIR is refused up front"
