#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A full disk: every receive method fails with "disk full", exit 1, and
# leaves nothing behind; its sender learns of the reset and where to look.
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
	grep -q "dnd: the connection was reset after [0-9]* bytes: by the receiver (see its message) or by something on the path" "$T/s.log" ||
		fail "-m $m: sender cause: $(cat "$T/s.log")"
	no_leftovers "$T/full"
done
ok "disk full: named, nothing left, for rw, mmap, splice, vmsplice"
