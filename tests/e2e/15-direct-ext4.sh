#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --direct on a loop-mounted ext4 image (4 KiB blocks, a real block device
# path): awkward sizes land byte-exact. Skips without root, mkfs.ext4 or a
# loop device.
. "$(dirname "$0")/lib.sh"

require_feature uring
[ "$(id -u)" = 0 ] || skip "mounting an image needs root"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 is missing (e2fsprogs)"
truncate -s 64M "$T/img"
mkfs.ext4 -q -F -b 4096 "$T/img" >"$T/mkfs.log" 2>&1 ||
	skip "mkfs.ext4 failed: $(cat "$T/mkfs.log")"
mkdir "$T/mnt"
mount -o loop "$T/img" "$T/mnt" 2>"$T/mount.log" ||
	skip "cannot loop-mount an image here: $(cat "$T/mount.log")"
_cleanup_hooks+=("umount '$T/mnt'")

for sz in 0 1 4095 4096 $(((1 << 20) + 13)) $(((5 << 20) + 7)); do
	random_file "$T/src" "$sz"
	for p in 1 3; do
		rm -f "$T/mnt/dst"
		xfer "-c 127.0.0.1 --direct -P $p $T/src" "--direct $T/mnt/dst"
		[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "$sz bytes, -P $p: " \
			"$SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
		cmp -s "$T/src" "$T/mnt/dst" ||
			fail "$sz bytes, -P $p: the landed file differs"
		grep -q "note: direct: O_DIRECT writes" "$T/r.log" ||
			fail "no O_DIRECT note: $(cat "$T/r.log")"
	done
done
ok "byte-exact with --direct on loop-mounted ext4, 0 to 5 MiB + 7, -P 1 and 3"
