#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A man in the middle (mitm_tls.py) against keyed transfers (issue 21):
# flipping one byte, putting a 1 KiB block of the same XXH3-64 in place
# (xxh3_twin), replaying an earlier session and cutting the client's TLS
# close_notify each fail on both ends with the cause and land nothing, for
# one-shot send/recv --key and for a push to dnd serve --key; a capture
# holds no 64-byte run of the source and not the file's name. And what a
# keyless transfer does not prove: the twin block lands, verified.
. "$(dirname "$0")/lib.sh"
need_py3
TWIN=$(dirname "$DND")/tests/tools/xxh3_twin
[ -x "$TWIN" ] || fail "no $TWIN: make test builds it (make tools)"
MITM=$(dirname "$0")/mitm_tls.py
command -v xxhsum >/dev/null || skip "xxhsum is missing (Debian package xxhash)"

# The source has a block at 1 MiB whose twin keeps its XXH3-64; forged is
# the source with the twin in place.
O=1048576
"$TWIN" 3145728 "$O" "$T/src" "$T/twin" >/dev/null || fail "xxh3_twin"
cp "$T/src" "$T/forged"
dd if="$T/twin" of="$T/forged" bs=1024 seek=$((O / 1024)) conv=notrunc status=none
[ "$(xxh3 "$T/src")" = "$(xxh3 "$T/forged")" ] || fail "the twin changed xxhsum's XXH3"
! cmp -s "$T/src" "$T/forged" || fail "the twin is the block itself"
mkdir "$T/d"

# mitm TARGET MODE ARGS...: the proxy on a port of its own ($MPORT) in
# front of 127.0.0.1:TARGET; MPID its PID.
mitm() {
	local target=$1
	# The proxy connects as soon as its client comes: the target must
	# listen by then (a receiver under ASan binds late).
	wait_listen "$target"
	next_port
	MPORT=$PORT
	bg "$T/m.log" timeout 60 "$PY3" "$MITM" --timeout 40 "$MPORT" 127.0.0.1 "$target" "${@:2}"
	MPID=$BPID
	wait_log "$T/m.log" '^ready' "the proxy did not start"
}

# leaks CAPTURE SOURCE NAME: says what of SOURCE or NAME is in CAPTURE, and
# fails (1) if anything is. Any 64-byte run of SOURCE holds a 32-byte piece
# at a multiple of 32: the capture's every 32-byte window is looked up
# among those pieces.
leaks() {
	"$PY3" - "$@" <<'EOF'
import sys
cap = open(sys.argv[1], 'rb').read()
src = open(sys.argv[2], 'rb').read()
name = sys.argv[3].encode()
pieces = {src[i:i + 32] for i in range(0, len(src) - 31, 32)}
hit = next((i for i in range(len(cap) - 31) if cap[i:i + 32] in pieces), -1)
if hit >= 0:
    print('a 32-byte piece of the source at capture offset %d' % hit)
if name in cap:
    print('the name at capture offset %d' % cap.find(name))
sys.exit(1 if hit >= 0 or name in cap else 0)
EOF
}

# --- Without a key: accidents, not attackers. ---
# Where the payload starts in a keyless stream: from a recorded transfer.
next_port
start_recv "$T/r.log" "$T/d/plain"
mitm "$PORT" record "$T/plain.rec"
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$MPORT" "$T/src"
wait_recv
[ "$RRC" = 0 ] || fail "keyless receiver exited $RRC: $(cat "$T/r.log")"
wait_for "$MPID" 20 || fail "the proxy exited $?: $(cat "$T/m.log")"
head=$("$PY3" -c 'import sys; print(open(sys.argv[1], "rb").read().find(open(sys.argv[2], "rb").read(4096)))' "$T/plain.rec" "$T/src")
[ "$head" -ge 0 ] || fail "the keyless stream does not carry the source"
leaks "$T/plain.rec" "$T/src" zzz >/dev/null && fail "the leak check finds nothing in plaintext"
rm -f "$T/d/plain"

next_port
start_recv "$T/r.log" "$T/d/plain"
mitm "$PORT" twin $((head + O)) "$T/twin"
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$MPORT" "$T/src"
sout=$OUT
wait_recv
[ "$RRC" = 0 ] || fail "keyless receiver exited $RRC: $(cat "$T/r.log")"
wait_for "$MPID" 20 || fail "the proxy exited $?"
grep -q '^twinned' "$T/m.log" || fail "the proxy did not swap the block"
cmp -s "$T/forged" "$T/d/plain" || fail "the keyless landing is not the forged file"
case $sout in *"verify: verified (xxh3 "*) ;; *) fail "no verified line: $sout" ;; esac
grep -q "verify: verified as received (xxh3 " "$T/r.log" || fail "no verified line: $(cat "$T/r.log")"
ok "keyless: a block of the same XXH3-64 swapped on the way lands as verified"
rm -f "$T/d/plain"

# --- With a key. ---
"$DND" serve --new-key "$T/key" 2>/dev/null || fail "--new-key"
"$DND" send -c 127.0.0.1 -p 1 --key "$T/key" "$T/src" >"$T/probe.log" 2>&1
[ $? != 2 ] || skip "this dnd has no keyed one-shot transfer (send -c HOST --key): $(head -n1 "$T/probe.log")"
MAC="a TLS record failed its check (bad record mac): the data was changed on the way"
CUT="the connection was cut before TLS closed"
# A receiver that stops at a bad record sends its alert and resets the
# connection: the sender names the alert when it reads it before the
# reset (while sending, or already waiting for the reply), else the reset
# (flip, twin); a cut sender hears the alert.
RESET="^dnd: (cannot send the trailer: a TLS record failed the peer's check \(bad record mac\): the data was changed on the way$|a TLS record failed the peer's check \(bad record mac\): the data was changed on the way( after [0-9]* bytes| \(waiting for the receiver's reply\))|the connection was reset after [0-9]* bytes: by the receiver)"

# Each attack fails on both ends (exit 1), the receiver names CAUSE, and
# nothing is left in the landing directory: not the name, no temporary.
# oneshot CAUSE MODE ARGS...: recv --key <- proxy <- send --key; $T/s.log
# holds what the sender said.
oneshot() {
	local cause=$1
	next_port
	start_recv "$T/r.log" --key "$T/key" "$T/d/dst"
	mitm "$PORT" "${@:2}"
	"$DND" send -c 127.0.0.1 -p "$MPORT" --key "$T/key" "$T/src" >"$T/s.log" 2>&1
	SRC=$?
	wait_recv
	wait_for "$MPID" 45 || fail "$2: the proxy exited $?: $(cat "$T/m.log")"
	[ "$SRC" = 1 ] || fail "$2: one-shot sender exited $SRC: $(cat "$T/s.log")"
	[ "$RRC" = 1 ] || fail "$2: one-shot receiver exited $RRC: $(cat "$T/r.log")"
	grep -qF "dnd: $cause" "$T/r.log" || fail "$2: receiver's cause: $(cat "$T/r.log")"
	no_leftovers "$T/d"
}

# served CAUSE MODE ARGS...: send --key --to NAME -> proxy -> serve --key;
# the server logs the session's failure with CAUSE.
served() {
	local cause=$1 n
	n=$(grep -c 'session 127.0.0.1' "$T/serve.log")
	mitm "$SPORT" "${@:2}"
	"$DND" send -c 127.0.0.1 -p "$MPORT" --key "$T/key" --to plan.bin "$T/src" >"$T/s.log" 2>&1
	SRC=$?
	wait_for "$MPID" 45 || fail "$2: the proxy exited $?: $(cat "$T/m.log")"
	[ "$SRC" = 1 ] || fail "$2: push exited $SRC: $(cat "$T/s.log")"
	for _ in $(seq 1 200); do
		[ "$(grep -c 'session 127.0.0.1' "$T/serve.log")" -gt "$n" ] && break
		sleep 0.05
	done
	tail -n1 "$T/serve.log" | grep -q "^$STAMP dnd: session 127.0.0.1:[0-9]* push plan.bin -m rw: [0-9]* bytes in [0-9.]* s, failed: " ||
		fail "$2: no failed session line: $(cat "$T/serve.log")"
	tail -n1 "$T/serve.log" | grep -qF "failed: $cause" || fail "$2: the server's cause: $(cat "$T/serve.log")"
	no_leftovers "$T/s"
}

oneshot "$MAC" flip $((O + 333))
grep -q '^flipped' "$T/m.log" || fail "the proxy flipped nothing"
grep -qE "$RESET" "$T/s.log" || fail "flip: the sender: $(cat "$T/s.log")"
oneshot "$MAC" twin "$O" "$T/twin"
grep -q '^twinned' "$T/m.log" || fail "the proxy swapped nothing"
grep -qE "$RESET" "$T/s.log" || fail "twin: the sender: $(cat "$T/s.log")"
oneshot "$CUT" cut
grep -q '^cut 24$' "$T/m.log" || fail "the proxy cut no close_notify: $(cat "$T/m.log")"
ok "one-shot --key: a flipped byte, a twin block and a cut close_notify fail on both ends, nothing lands"

# Replay: a clean session recorded, then its bytes sent again.
next_port
start_recv "$T/r.log" --key "$T/key" "$T/d/dst"
mitm "$PORT" record "$T/one.rec"
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$MPORT" --key "$T/key" "$T/src"
wait_recv
[ "$RRC" = 0 ] || fail "recorded one-shot exited $RRC: $(cat "$T/r.log")"
wait_for "$MPID" 45 || fail "record: the proxy exited $?"
cmp -s "$T/src" "$T/d/dst" || fail "recorded one-shot landed other bytes"
rm "$T/d/dst"
next_port
start_recv "$T/r.log" --key "$T/key" "$T/d/dst"
wait_listen "$PORT"
timeout 60 "$PY3" "$MITM" --timeout 40 0 127.0.0.1 "$PORT" replay "$T/one.rec" >"$T/m.log" 2>&1 ||
	fail "replay: $(cat "$T/m.log")"
wait_recv
[ "$RRC" = 1 ] || fail "replayed one-shot: receiver exited $RRC: $(cat "$T/r.log")"
grep -qF "dnd: $MAC" "$T/r.log" || fail "replay: receiver's cause: $(cat "$T/r.log")"
no_leftovers "$T/d"
ok "one-shot --key: a replayed session fails, nothing lands"

# The same against dnd serve --key.
mkdir "$T/s"
next_port
SPORT=$PORT
bg "$T/serve.log" "$DND" serve --dir "$T/s" -p "$SPORT" --key "$T/key" --grace 1
wait_log "$T/serve.log" "listening on .*:$SPORT" "serve did not start"
served "$MAC" flip $((O + 333))
grep -q '^flipped' "$T/m.log" || fail "the proxy flipped nothing"
served "$MAC" twin "$O" "$T/twin"
grep -q '^twinned' "$T/m.log" || fail "the proxy swapped nothing"
served "$CUT" cut
grep -q '^cut 24$' "$T/m.log" || fail "the proxy cut no close_notify: $(cat "$T/m.log")"
mitm "$SPORT" record "$T/push.rec"
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$MPORT" --key "$T/key" --to plan.bin "$T/src"
wait_for "$MPID" 45 || fail "record: the proxy exited $?"
cmp -s "$T/src" "$T/s/plan.bin" || fail "recorded push landed other bytes"
rm "$T/s/plan.bin"
timeout 60 "$PY3" "$MITM" --timeout 40 0 127.0.0.1 "$SPORT" replay "$T/push.rec" >"$T/m.log" 2>&1 ||
	fail "replay: $(cat "$T/m.log")"
wait_log "$T/serve.log" "^$STAMP dnd: session 127.0.0.1:[0-9]*: 0 bytes in [0-9.]* s, failed: $MAC" \
	"the replayed push is not refused with its cause"
no_leftovers "$T/s"
ok "serve --key: flip, twin, cut and replay fail with their cause, nothing lands"

# What a capture shows: neither the data nor the name.
mitm "$SPORT" capture "$T/push.cap"
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$MPORT" --key "$T/key" --to plan.bin "$T/src"
wait_for "$MPID" 45 || fail "capture: the proxy exited $?"
cmp -s "$T/src" "$T/s/plan.bin" || fail "captured push landed other bytes"
leaks "$T/push.cap" "$T/src" plan.bin || fail "the capture of a keyed push shows it"
next_port
start_recv "$T/r.log" --key "$T/key" "$T/d/dst"
mitm "$PORT" capture "$T/one.cap"
# A name long enough that ciphertext cannot hold it by chance ("src",
# 3 bytes, turns up in 3 MB of random bytes about one run in six).
ln "$T/src" "$T/one-shot-source-name.img"
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$MPORT" --key "$T/key" "$T/one-shot-source-name.img"
wait_recv
wait_for "$MPID" 45 || fail "capture: the proxy exited $?"
cmp -s "$T/src" "$T/d/dst" || fail "captured one-shot landed other bytes"
leaks "$T/one.cap" "$T/src" one-shot-source-name.img || fail "the capture of a keyed one-shot shows it"
ok "a capture of keyed transfers holds no 64-byte run of the source and no name"

# Under SANITIZE a leak report does not change an exit code.
! grep -l "ERROR: [A-Za-z]*Sanitizer" "$T"/*.log || fail "a sanitizer report above"
