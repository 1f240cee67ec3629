#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a hostile peer and a hostile file system found (the hardening issue):
# each defect reproduced, with the exit code and the disk in agreement.
. "$(dirname "$0")/lib.sh"

D="$T/land"
mkdir "$D"
printf 'abcd' >"$T/abcd"
H=$(xxh3 "$T/abcd")
random_file "$T/old" 5000
random_file "$T/new" 70000

# crafted "RECV ARGS" MODE: a receiver fed by perl_peer with the bytes in
# $T/in (not a pipeline: RRC must survive); RRC and $T/r.log as for xfer.
crafted() {
	local args=$1 mode=$2
	next_port
	# shellcheck disable=SC2086
	start_recv "$T/r.log" --timeout 2 $args
	wait_listen "$PORT"
	perl_peer "$PORT" "$mode" <"$T/in" >/dev/null 2>&1
	wait_recv
}

# 1. -o through a symlink would tear the file it points to: refused up
# front (exit 2), the real file untouched.
cp "$T/old" "$T/real"
ln -s "$T/real" "$D/dst"
expect_exit 2 "$DND" recv -p 1 -o "$D/dst"
expect_out "is a symbolic link; -o would write through it"
cmp -s "$T/old" "$T/real" || fail "-o symlink: the real file changed"
ok "-o refuses a symlink target; the file it points to is untouched"

# 4. A dangling symlink is refused before any sender (exit 2) ...
rm "$D/dst"
ln -s "$T/nowhere" "$D/dst"
expect_exit 2 "$DND" recv -p 1 "$D/dst"
expect_out "$D/dst exists; use -t to replace it"
# ... and -t replaces the link itself, not what it points to.
cp "$T/old" "$T/real"
rm "$D/dst"
ln -s "$T/real" "$D/dst"
xfer "-c 127.0.0.1 $T/new" "-t $D/dst"
[ "$RRC" = 0 ] && [ "$SRC" = 0 ] || fail "-t over a symlink: $(cat "$T/r.log")"
[ -L "$D/dst" ] && fail "-t left the symlink in place"
cmp -s "$T/new" "$D/dst" || fail "-t over a symlink: wrong content"
cmp -s "$T/old" "$T/real" || fail "-t wrote through the symlink"
rm -f "$D/dst"
ok "dangling symlink refused up front; -t replaces the link itself"

# 5. -t with a failed transfer: the old file stays exactly as it was.
cp "$T/old" "$D/dst"
ino=$(stat -c %i "$D/dst")
{ msg_hdr 1000; printf 'garbage'; } >"$T/in"
crafted "-t $D/dst" fin
[ "$RRC" = 1 ] || fail "-t, short stranger: exit $RRC"
cmp -s "$T/old" "$D/dst" || fail "-t destroyed the old file on failure"
[ "$(stat -c %i "$D/dst")" = "$ino" ] || fail "-t replaced the old file"
[ "$(ls -A "$D")" = dst ] || fail "temporary left: $(ls -A "$D")"
rm "$D/dst"
ok "-t: a failed transfer leaves the old file exactly as it was"

# 6. The receiver decides: a trailer without the hash flag lands nothing
# unless the receiver itself was told --no-verify.
{ msg_hdr 4; cat "$T/abcd"; msg_trl 4 0 0; } >"$T/in"
crafted "$D/dst" fin
[ "$RRC" = 1 ] || fail "hash withheld: exit $RRC"
grep -qF "dnd: the sender sent no hash (it ran with --no-verify), so nothing could be verified; $D/dst was not written" "$T/r.log" ||
	fail "hash withheld: $(cat "$T/r.log")"
no_leftovers "$D"
{ msg_hdr 4; cat "$T/abcd"; msg_trl 4 0 0; } >"$T/in"
crafted "--no-verify $D/dst" fin
[ "$RRC" = 0 ] && cmp -s "$T/abcd" "$D/dst" ||
	fail "--no-verify receiver: exit $RRC: $(cat "$T/r.log")"
grep -q "verify: counted (4 bytes)" "$T/r.log" || fail "$(cat "$T/r.log")"
rm "$D/dst"
# The real sender with --no-verify is refused by a verifying receiver,
# and says why.
xfer "-c 127.0.0.1 --no-verify $T/abcd" "$D/dst"
[ "$RRC" = 1 ] && [ "$SRC" = 1 ] || fail "no-verify sender: $RRC/$SRC"
grep -qF "dnd: the receiver refused the data: it verifies and this sender sent no hash (--no-verify here needs --no-verify there)" "$T/s.log" ||
	fail "sender's message: $(cat "$T/s.log")"
no_leftovers "$D"
# Bytes after the trailer are an error, not ignored.
{ msg_hdr 4; cat "$T/abcd"; msg_trl 4 "$H"; printf 'extra'; } >"$T/in"
crafted "$D/dst" fin
[ "$RRC" = 1 ] || fail "trailing bytes: exit $RRC"
grep -qF "dnd: malformed stream from the peer: bytes after the sender's trailer; $D/dst was not written" "$T/r.log" ||
	fail "trailing bytes: $(cat "$T/r.log")"
no_leftovers "$D"
# The well-formed crafted stream does land: the checks above are not
# refusing everything.
{ msg_hdr 4; cat "$T/abcd"; msg_trl 4 "$H"; } >"$T/in"
crafted "$D/dst" fin
[ "$RRC" = 0 ] && cmp -s "$T/abcd" "$D/dst" || fail "valid: $(cat "$T/r.log")"
rm "$D/dst"
ok "no hash, no landing (unless --no-verify there); trailing bytes refused"

# 2. A sender that resets right after its trailer: whatever the receiver
# decides, its exit code and the disk agree.
for i in 1 2 3; do
	{ msg_hdr 4; cat "$T/abcd"; msg_trl 4 "$H"; } >"$T/in"
	crafted "$D/dst" rst
	case $RRC in
	0) cmp -s "$T/abcd" "$D/dst" || fail "reset: exit 0, wrong file" ;;
	1) no_leftovers "$D" ;;
	*) fail "reset after trailer: exit $RRC: $(cat "$T/r.log")" ;;
	esac
	rm -f "$D/dst"
done
# The sender whose confirmation never comes says the data may have landed:
# a receiver that accepts, takes everything, and closes without a reply.
next_port
timeout 20 perl -MSocket -e '
	socket(my $l, PF_INET, SOCK_STREAM, 0) or die;
	setsockopt($l, SOL_SOCKET, SO_REUSEADDR, 1);
	bind($l, sockaddr_in($ARGV[0], inet_aton("127.0.0.1"))) or die;
	listen($l, 1) or die; accept(my $c, $l) or die;
	my ($b, $got) = ("", 0);
	$got += sysread($c, $b, 48 - $got, $got) while $got < 48;
	syswrite($c, "DNDA" . ("\0" x 20));
	1 while sysread($c, $b, 65536);
	close $c;' "$PORT" &
_pids+=("$!")
wait_listen "$PORT"
expect_exit 1 "$DND" send -c 127.0.0.1 -p "$PORT" "$T/abcd"
expect_out "dnd: the peer closed the connection before the receiver's reply"
expect_out "the data may have landed: check the receiver's side"
ok "reset after the trailer: exit code and disk agree; a lost reply is named"

# 7. Messages. A stalled peer is a timeout for every method, counting the
# bytes that arrived (also those in a half-filled buffer).
for m in rw mmap splice vmsplice; do
	{ msg_hdr 100000; head -c 1000 /dev/zero; } >"$T/in"
	crafted "-m $m --timeout 1 $D/dst" stall
	[ "$RRC" = 1 ] || fail "-m $m stall: exit $RRC"
	grep -q "dnd: no progress for 1 s after 1000 bytes; the peer stalled (--timeout)" "$T/r.log" ||
		fail "-m $m stall: $(cat "$T/r.log")"
	no_leftovers "$D"
done
# A segment header that stops half-way is a stall, not a close.
{ msg_hdr_seg; printf '\x00\x00\x00'; } >"$T/in"
crafted "--timeout 1 $D/dst" stall
grep -q "dnd: no progress for 1 s after 0 bytes; the peer stalled (--timeout)" "$T/r.log" ||
	fail "half a segment header: $(cat "$T/r.log")"
no_leftovers "$D"
# Pseudo file systems and FIFOs without a reader are refused up front.
expect_exit 2 "$DND" recv -p 1 /proc/dnd-test-target
expect_out "is on a pseudo file system"
mkfifo "$T/fifo"
expect_exit 2 timeout 5 "$DND" recv -p 1 "$T/fifo"
expect_out "$T/fifo is a FIFO with no reader; start its reader first"
ok "stalls are timeouts with the bytes that came; /proc and readerless FIFOs refused"

# An mmap sender whose source shrinks under it says "short source".
random_file "$T/shrink" $((32 << 20))
next_port
start_recv "$T/r.log" -b 1Mi "$D/dst"
wait_listen "$PORT"
kill -STOP "$RPID"
"$DND" send -c 127.0.0.1 -p "$PORT" -m mmap -b 1Mi "$T/shrink" >"$T/s.log" 2>&1 &
sp=$!
_pids+=("$sp")
# The sender connects (the kernel completes the handshake for the stopped
# receiver), then opens and maps its source: half a second after the
# connection, however slow its start, the file shrinks.
for _ in $(seq 1 200); do
	ss -Htnp state established "( dport = :$PORT )" | grep -q "pid=$sp," && break
	sleep 0.05
done
sleep 0.5
truncate -s 1M "$T/shrink"
kill -CONT "$RPID"
wait "$sp"
src=$?
wait_recv
[ "$src" = 1 ] || fail "shrunk mmap source: sender exit $src"
grep -q "dnd: short source: $T/shrink ended after" "$T/s.log" ||
	fail "shrunk mmap source: $(cat "$T/s.log")"
no_leftovers "$D"
ok "an mmap source that shrinks is a short source, not 'Bad address'"

# 8. Exit 0 is durable: the directory is fsynced after the rename, and
# the report says how the file was synced.
if command -v strace >/dev/null; then
	next_port
	start_recv_traced "$T/st" fsync,fdatasync "$T/r.log" "$D/dst"
	"$DND" send -c 127.0.0.1 -p "$PORT" "$T/new" >"$T/s.log" 2>&1 ||
		fail "strace'd transfer: $(cat "$T/s.log")"
	wait_recv
	grep -q "fsync([0-9]*<$D>) = 0" "$T/st" ||
		fail "no fsync of $D: $(cat "$T/st")"
	grep -q "sync: fdatasync, renamed, directory fsynced" "$T/r.log" ||
		fail "no sync line: $(cat "$T/r.log")"
	rm "$D/dst"
	ok "the directory is fsynced after the rename, and the report says so"
fi
