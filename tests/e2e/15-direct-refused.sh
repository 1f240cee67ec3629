#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --direct on a file system that refuses O_DIRECT (ramfs; tmpfs before
# Linux 6.6): refused before listening or connecting, exit 2 with the
# reason, on both ends (the receiver's target directory, the sender's
# source), and nothing is left in the directory.
. "$(dirname "$0")/lib.sh"

require_feature uring	# a receiver's --direct needs it before any check
[ "$(id -u)" = 0 ] || skip "mounting a ramfs needs root"

# refuses DIR: true when DIR's file system refuses an O_DIRECT open.
refuses() { ! dd if=/dev/zero of="$1/probe" bs=4096 count=1 oflag=direct 2>/dev/null; }

tried=
for fs in ramfs tmpfs; do
	m="$T/$fs"
	mkdir "$m"
	mount -t "$fs" -o size=16m "dnd-e2e-$fs" "$m" 2>/dev/null ||
		mount -t "$fs" "dnd-e2e-$fs" "$m" 2>/dev/null || continue
	_cleanup_hooks+=("umount '$m'")
	if ! refuses "$m"; then
		echo "# $fs takes O_DIRECT on this kernel: not tried"
		rm -f "$m/probe"
		continue
	fi
	rm -f "$m/probe"
	random_file "$m/src" 100000
	want="the file system of $m refuses O_DIRECT"

	# Nothing listens on PORT: a check after connecting would say so.
	next_port
	expect_exit 2 timeout 20 "$DND" send -c 127.0.0.1 -p "$PORT" --direct "$m/src"
	[ "$OUT" = "dnd: --direct: the file system of $m/src refuses O_DIRECT; send from a disk file system, or drop --direct" ] ||
		fail "$fs, send: $OUT"

	# A receiver that listened would wait for a sender until the timeout.
	next_port
	expect_exit 2 timeout 20 "$DND" recv -p "$PORT" --direct "$m/dst"
	[ "$OUT" = "dnd: --direct: $want; land on a disk file system, or drop --direct" ] ||
		fail "$fs, recv: $OUT"
	[ "$(ls -A "$m")" = src ] || fail "$fs: left in $m: $(ls -A "$m")"
	tried="$tried $fs"
done
[ -n "$tried" ] || skip "no ramfs or tmpfs mounted that refuses O_DIRECT"
ok "--direct refused up front on$tried, both ends, exit 2"
