#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -t replaces (also a target that appears mid-transfer), -o overwrites in
# place (and cuts to size); a failed transfer under -o removes the target
# rather than leave torn data, under -t leaves the old file exactly as it
# was (it is replaced only at the rename), and the sender hears the
# receiver's reason.
. "$(dirname "$0")/lib.sh"

random_file "$T/big" 300000
random_file "$T/small" 70000

for m in rw mmap splice vmsplice; do
	for flag in -t -o; do
		cp "$T/big" "$T/dst"
		ino=$(stat -c %i "$T/dst")
		xfer "-c 127.0.0.1 $T/small" "$flag -m $m $T/dst"
		[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "$flag -m $m: $(cat "$T/r.log")"
		cmp -s "$T/small" "$T/dst" || fail "$flag -m $m: content or size wrong"
		now=$(stat -c %i "$T/dst")
		if [ "$flag" = -o ]; then
			[ "$now" = "$ino" ] || fail "-o did not write in place"
		else
			[ "$now" != "$ino" ] || fail "-t wrote in place"
		fi
	done
done
ok "-t replaces, -o rewrites in place and truncates"

# A new file gets the usual mode (umask), a replaced one keeps its mode.
rm -f "$T/dst"
(umask 027 && xfer "-c 127.0.0.1 $T/small" "$T/dst")
[ "$(stat -c %a "$T/dst")" = 640 ] || fail "new file mode $(stat -c %a "$T/dst")"
chmod 600 "$T/dst"
xfer "-c 127.0.0.1 $T/small" "-t $T/dst"
[ "$(stat -c %a "$T/dst")" = 600 ] || fail "replaced file mode $(stat -c %a "$T/dst")"
ok "file modes"

# Failure under -o: the existing target is gone, not half-written; under -t
# it is exactly the old file.
for flag in -t -o; do
	cp "$T/big" "$T/dst"
	next_port
	start_recv "$T/r.log" "$flag" "$T/dst"
	wait_listen "$PORT"
	{ msg_hdr 1000; printf 'short'; } |
		timeout 10 nc -N 127.0.0.1 "$PORT" >/dev/null
	wait_recv
	[ "$RRC" = 1 ] || fail "$flag: receiver exit $RRC"
	if [ "$flag" = -o ]; then
		[ ! -e "$T/dst" ] || fail "-o: target left after a failed transfer"
	else
		cmp -s "$T/big" "$T/dst" || fail "-t: the old file changed"
	fi
	[ -z "$(ls -A "$T" | grep dnd-)" ] || fail "temporary left: $(ls -A "$T")"
done
ok "failed -o transfer leaves nothing under the target, -t the old file"

# A file that appears under the target's name while the receiver waits is
# neither replaced nor deleted.
rm -f "$T/late"
next_port
start_recv "$T/r.log" "$T/late"
wait_listen "$PORT"
echo precious >"$T/late"
"$DND" send -c 127.0.0.1 -p "$PORT" "$T/small" >"$T/s.log" 2>&1
SRC=$?
wait_recv
[ "$RRC" = 1 ] || fail "receiver exit $RRC with a target that appeared: $(cat "$T/r.log")"
grep -q "dnd: $T/late appeared while waiting for the sender; use -t to replace it or -o to overwrite it in place" "$T/r.log" ||
	fail "$(cat "$T/r.log")"
[ "$SRC" = 1 ] || fail "sender exit $SRC with a target that appeared"
grep -qx "dnd: the receiver refused the transfer: $T/late appeared while waiting for the sender; use -t to replace it or -o to overwrite it in place" "$T/s.log" ||
	fail "the sender was not told the receiver's reason: $(cat "$T/s.log")"
[ "$(cat "$T/late")" = precious ] || fail "a file that appeared meanwhile was touched"
[ -z "$(ls -A "$T" | grep dnd-)" ] || fail "temporary left: $(ls -A "$T")"
ok "a target that appears while waiting is left alone"

# late_target [FLAG]: the target appears during the transfer, once the
# receiver's temporary file holds data: the sender reads a FIFO that the
# test fills in two parts, creating the target in between.
late_target() {
	rm -f "$T/late" "$T/fifo"
	mkfifo "$T/fifo"
	next_port
	start_recv "$T/r.log" "$@" "$T/late"
	wait_listen "$PORT"
	"$DND" send -c 127.0.0.1 -p "$PORT" - <"$T/fifo" >"$T/s.log" 2>&1 &
	local spid=$!
	_pids+=("$spid")
	exec 3>"$T/fifo"
	head -c 100000 "$T/big" >&3
	wait_size "$T/.late.dnd-*" 1
	echo precious >"$T/late"
	tail -c +100001 "$T/big" >&3
	exec 3>&-
	wait_for "$spid" 20
	SRC=$?
	wait_recv
}

# -t replaces whatever is under the name at the rename: the decision made
# at the start does not throw away a verified transfer.
late_target -t
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
	fail "-t with a target that appeared mid-transfer: sender $SRC, receiver $RRC: $(cat "$T/s.log" "$T/r.log")"
cmp -s "$T/big" "$T/late" || fail "-t: the new data did not land"
[ -z "$(ls -A "$T" | grep dnd-)" ] || fail "temporary left: $(ls -A "$T")"
ok "-t replaces a target that appeared during the transfer"

# Without -t such a target stays, the landing fails, and the sender is told
# the receiver's reason rather than that the data may have landed.
late_target
[ "$RRC" = 1 ] || fail "receiver exit $RRC: $(cat "$T/r.log")"
grep -qxF "dnd: $T/late appeared during the transfer (another one landed it?); use -t to replace it" "$T/r.log" ||
	fail "receiver's cause: $(cat "$T/r.log")"
[ "$SRC" = 1 ] || fail "sender exit $SRC: $(cat "$T/s.log")"
grep -qxF "dnd: the receiver failed: $T/late appeared during the transfer (another one landed it?); use -t to replace it" "$T/s.log" ||
	fail "the sender was not told the receiver's reason: $(cat "$T/s.log")"
[ "$(cat "$T/late")" = precious ] || fail "a file that appeared meanwhile was replaced"
[ -z "$(ls -A "$T" | grep dnd-)" ] || fail "temporary left: $(ls -A "$T")"
ok "a landing that fails tells the sender why"
