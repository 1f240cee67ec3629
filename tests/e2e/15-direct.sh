#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --direct (-m rw): files of awkward sizes land byte-exact through O_DIRECT
# on both ends, in one stream and split over three (unaligned ranges), on
# the scratch file system and on tmpfs; the report says O_DIRECT was used;
# the combinations it cannot serve are refused with the reason.
. "$(dirname "$0")/lib.sh"

require_feature uring

# land DIR: every size, one stream and three, into DIR.
land() {
	local dir=$1 sz p
	for sz in 0 1 4095 4096 $(((1 << 20) + 13)) $(((3 << 20) + 5)); do
		random_file "$T/src" "$sz"
		for p in 1 3; do
			rm -f "$dir/dst"
			xfer "-c 127.0.0.1 --direct -P $p $T/src" \
			     "--direct $dir/dst"
			[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "$dir, $sz " \
				"bytes, -P $p: $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
			cmp -s "$T/src" "$dir/dst" ||
				fail "$dir, $sz bytes, -P $p: the landed file differs"
			grep -q "verify: verified" "$T/r.log" ||
				fail "not verified: $(cat "$T/r.log")"
			grep -q "note: direct: O_DIRECT writes of 1024 KiB, 8 in flight" \
				"$T/r.log" || fail "no O_DIRECT note: $(cat "$T/r.log")"
			grep -q "note: direct: O_DIRECT reads of 1024 KiB" \
				"$T/s.log" || fail "no O_DIRECT note: $(cat "$T/s.log")"
		done
	done
	[ "$(ls -A "$dir")" = dst ] || fail "left in $dir: $(ls -A "$dir")"
}

mkdir "$T/land"
land "$T/land"
ok "byte-exact with --direct on $(stat -f -c %T "$T/land"), 0 to 3 MiB + 5, -P 1 and 3"

# The landed bytes went to the device: io_uring writes, not write().
grep -q "io_uring_enter" "$T/r.log" || fail "no io_uring writes: $(cat "$T/r.log")"
ok "the receiver's writes went through io_uring"

shm=
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ]; then
	shm=$(mktemp -d /dev/shm/dnd-e2e.XXXXXX)
	_cleanup_hooks+=("rm -rf '$shm'")
fi
if [ -n "$shm" ]; then
	land "$shm"
	ok "byte-exact with --direct on tmpfs"
else
	echo "# /dev/shm is not a writable tmpfs: tmpfs not tried"
fi

# Refusals: exit 2 and the reason.
expect_exit 2 "$DND" recv -m splice --direct "$T/x"
expect_out "--direct is for -m rw (read/write through aligned buffers); -m splice does not support it"
expect_exit 2 "$DND" recv --direct --sync stream "$T/x"
expect_out "--direct cannot go with --sync stream: O_DIRECT leaves no page cache to write back"
expect_exit 2 "$DND" send -c 127.0.0.1 --direct -l 1M /dev/zero
expect_out "--direct needs a regular file to read: O_DIRECT bypasses the page cache of a file, and this is /dev/zero"
next_port
expect_exit 2 "$DND" recv -p "$PORT" --direct /dev/null
expect_out "--direct needs a regular file to land in"
ok "other methods, --sync stream and non-file ends are refused"
