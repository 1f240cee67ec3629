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

# Keyed, the reason travels in a TLS record: the server must not reset the
# connection under it (closing on the client's unread payload), at -P 1 and
# over several streams.
(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
next_port
bg "$T/kserve.log" "$DND" serve --dir "$T" -p "$PORT" --key "$T/key"
_cleanup_hooks=("kill $BPID 2>/dev/null && wait $BPID" "${_cleanup_hooks[@]}")
wait_listen "$PORT"
for p in 1 4; do
	expect_exit 1 timeout 20 "$DND" send -c 127.0.0.1 -p "$PORT" --key "$T/key" \
		-P "$p" --to full/dst "$T/src"
	grep -qxE "dnd: the receiver failed: disk full writing full/dst after [0-9]+ bytes \(No space left on device\)" <<<"$OUT" ||
		fail "keyed serve push -P $p on a full disk: $OUT"
	no_leftovers "$T/full"
done
kill "$BPID"
wait "$BPID"
ok "keyed serve push on a full disk, -P 1 and 4: the client prints the server's reason"
