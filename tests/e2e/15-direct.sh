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
			grep -q "verify: verified $(recv_kind rw "$p") " "$T/r.log" ||
				fail "not verified: $(cat "$T/r.log")"
			# 16 in flight in all: -P 3 streams share them.
			q=$((p == 1 ? 16 : 5))
			grep -q "note: direct: O_DIRECT writes of 2048 KiB, $q in flight" \
				"$T/r.log" || fail "no O_DIRECT note: $(cat "$T/r.log")"
			grep -q "note: direct: O_DIRECT reads of 2048 KiB, $q ahead" \
				"$T/s.log" || fail "no O_DIRECT note: $(cat "$T/s.log")"
		done
	done
	[ "$(ls -A "$dir")" = dst ] || fail "left in $dir: $(ls -A "$dir")"
}

mkdir "$T/land"
land "$T/land"
ok "byte-exact with --direct on $(stat -f -c %T "$T/land"), 0 to 3 MiB + 5, -P 1 and 3"

# The sender's read-ahead wraps its ring: 2 buffers of 2 MiB (--qd 2) for
# 9 MiB + 4097 bytes, in one stream and in three unaligned ranges.
random_file "$T/src" $(((9 << 20) + 4097))
for p in 1 3; do
	rm -f "$T/land/dst"
	xfer "-c 127.0.0.1 --direct --qd 2 -P $p $T/src" "--direct $T/land/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "--qd 2, -P $p: $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src" "$T/land/dst" || fail "--qd 2, -P $p: the landed file differs"
	grep -q "note: direct: O_DIRECT reads of 2048 KiB, 2 ahead" "$T/s.log" ||
		fail "no read-ahead note: $(cat "$T/s.log")"
done
rm -f "$T/land/dst"
ok "the sender's read-ahead wraps its ring byte-exact, -P 1 and 3"

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

# Without privilege (no CAP_IPC_LOCK, RLIMIT_MEMLOCK 8 MiB as Debian
# gives users) a receiver's 32 MiB of --direct buffers still land: they are
# not registered with io_uring, which would pin them against that limit.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	command -v prlimit >/dev/null; then
	chmod 711 "$T"
	mkdir -m 777 "$T/nb"
	mkdir -m 755 "$T/bin"
	cp "$DND" "$T/bin/dnd"
	chmod 755 "$T/bin/dnd"
	random_file "$T/src" $(((5 << 20) + 7))
	chmod 644 "$T/src"
	next_port
	prlimit --memlock=8388608 setpriv --reuid=65534 --regid=65534 \
		--clear-groups --inh-caps=-all --bounding-set=-all \
		"$T/bin/dnd" recv -p "$PORT" --direct "$T/nb/dst" >"$T/r.log" 2>&1 &
	RPID=$!
	_pids+=("$RPID")
	wait_listen "$PORT"
	"$DND" send -c 127.0.0.1 -p "$PORT" "$T/src" >"$T/s.log" 2>&1
	SRC=$?
	wait_recv
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "as nobody: $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src" "$T/nb/dst" || fail "as nobody: the landed file differs"
	grep -q "note: direct: O_DIRECT writes of 2048 KiB, 16 in flight" \
		"$T/r.log" || fail "as nobody, no O_DIRECT note: $(cat "$T/r.log")"
	ok "--direct lands without privilege, under an 8 MiB RLIMIT_MEMLOCK"
else
	echo "# not root, or no setpriv/prlimit: the unprivileged case not tried"
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
