#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd serve reserves a push's declared length before its payload
# (fallocate): the free space a session was admitted with stays its own,
# and a push that no longer fits is refused up front with both figures,
# not cut by a full disk halfway.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "mounting a small tmpfs needs root"
d="$T/small"; mkdir "$d"
mount -t tmpfs -o size=4m dndtest "$d" 2>/dev/null || skip "cannot mount a tmpfs here"
_cleanup_hooks+=("umount '$d'")

next_port
bg "$T/serve.log" "$DND" serve --dir "$d" -p "$PORT" --grace 1
SPID=$BPID
# Stopped before the unmount, even when a check below fails.
_cleanup_hooks=("kill $SPID 2>/dev/null && wait $SPID" "${_cleanup_hooks[@]}")
wait_listen "$PORT"
cli() { timeout 20 "$DND" send -c 127.0.0.1 -p "$PORT" "$@"; }

# A push of 3000000 declared bytes held before its payload, from a FIFO.
mkfifo "$T/hold"
(timeout 60 "$DND" send -c 127.0.0.1 -p "$PORT" -l 3000000 --to first - \
	<"$T/hold" >"$T/first.log" 2>&1) &
hpid=$!
_pids+=("$hpid")
exec 9>"$T/hold"
# reserved: the bytes of blocks the held push's temporary file holds.
reserved() { stat -c '%b %B' "$d"/.first.dnd-* 2>/dev/null | awk '{ print $1 * $2 }'; }
end=$((SECONDS + 10))
until [ "$(reserved)" -ge 3000000 ] 2>/dev/null || [ $SECONDS -ge $end ]; do
	sleep 0.05
done
ls "$d"/.first.dnd-* >/dev/null 2>&1 || fail "the held push has no temporary file: $(cat "$T/first.log")"
f=$(ls "$d"/.first.dnd-*)
blocks=$(reserved)
[ "$blocks" -ge 3000000 ] || fail "the held push's 3000000 bytes are not reserved: its file holds $blocks bytes of blocks"
[ "$(stat -c %s "$f")" = 0 ] || fail "the reservation changed the file's size: $(stat -c %s "$f")"

# A second one of the same length no longer fits: refused before a byte.
expect_exit 1 cli -l 3000000 --to second /dev/zero
expect_out "server refused: the declared length of 3000000 bytes (2.9 MiB) does not fit"
ls "$d"/.second.* "$d/second" >/dev/null 2>&1 && fail "the refused push left a file: $(ls -A "$d")"

head -c 3000000 /dev/urandom >"$T/data"
cat "$T/data" >&9
exec 9>&-
wait "$hpid" || fail "the held push failed: $(cat "$T/first.log")"
cmp -s "$T/data" "$d/first" || fail "the held push landed other bytes"
ok "a push's declared length is reserved up front: the next one that does not fit is refused, the first lands"
