#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -m mmap receiving over several streams where the file system cannot
# fallocate (ramfs; exFAT, some FUSE and NFS alike): the file is sized
# with ftruncate, never shrunk under another stream's mapping.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "mounting a ramfs needs root"
mkdir "$T/ram"
mount -t ramfs dndtest "$T/ram" 2>/dev/null ||
	skip "cannot mount a ramfs here (mount -t ramfs failed)"
_cleanup_hooks+=("umount '$T/ram'")

# Ranges are whole MiB: 8 MiB and 13 bytes gives each of 4 streams two,
# the last one the odd bytes too.
random_file "$T/src" $((8 * 1048576 + 13))
for p in 4 3 2; do
	xfer "-c 127.0.0.1 -P $p $T/src" "-m mmap $T/ram/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "-m mmap -P $p on ramfs: exits $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
	grep -q "this file system cannot fallocate" "$T/r.log" ||
		skip "this kernel's ramfs can fallocate: the ftruncate path is not taken"
	cmp "$T/src" "$T/ram/dst" || fail "-m mmap -P $p on ramfs: data differs"
	rm -f "$T/ram/dst"
	no_leftovers "$T/ram"
done
ok "-m mmap -P 4, 3, 2 into ramfs (no fallocate): byte-exact"
