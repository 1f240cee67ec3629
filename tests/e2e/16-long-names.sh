#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Names too long for what dnd keeps beside them (.NAME.dnd-partial.info.new
# is the longest): one-shot recv refuses before it listens, send --to before
# it connects, both with exit 2; dnd serve refuses the request with a reason
# its client prints. The longest name allowed lands, and keeps its partial
# and the partial's record for --resume.
. "$(dirname "$0")/lib.sh"

name() { printf "%${1}s" | tr ' ' n; }
why() {
	echo "a file name of $1 bytes is too long: dnd keeps" \
	     ".NAME.dnd-partial.info.new beside it, so the limit is 233" \
	     "bytes (NAME_MAX 255 less 22); use a shorter name"
}
mkdir "$T/in"
random_file "$T/src" 300000

for n in 234 244 255; do
	next_port
	expect_exit 2 timeout 20 "$DND" recv -p "$PORT" "$T/in/$(name $n)"
	[ "$OUT" = "dnd: $(why $n)" ] || fail "recv, $n bytes: $OUT"
	no_leftovers "$T/in"
done
ok "one-shot recv refuses names of 234, 244 and 255 bytes before it listens"

# Nothing listens on PORT: only a check before connecting answers 2.
next_port
expect_exit 2 timeout 20 "$DND" send -c 127.0.0.1 -p "$PORT" \
	--to "sub/$(name 244)" "$T/src"
expect_out "dnd: --to: $(why 244)"
ok "send --to refuses a name of 244 bytes before it connects"

# The longest name allowed: it lands, and a cut transfer keeps its
# partial file and record (.NAME.dnd-partial.info.new is 255 bytes).
max=$(name 233)
xfer "-c 127.0.0.1 $T/src" "$T/in/$max"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "233 bytes: $SRC/$RRC: $(cat "$T/s.log" "$T/r.log")"
cmp -s "$T/src" "$T/in/$max" || fail "233 bytes: the landed file differs"
rm "$T/in/$max"
next_port
start_recv "$T/r.log" --resume "$T/in/$max"
wait_listen "$PORT"
{ msg_hdr 300000 5; head -c 100000 "$T/src"; } | perl_peer "$PORT" fin
wait_recv
[ "$RRC" = 1 ] || fail "cut transfer: receiver exited $RRC: $(cat "$T/r.log")"
grep -q "dnd: kept 100000 bytes for --resume" "$T/r.log" ||
	fail "no partial kept: $(cat "$T/r.log")"
cmp -s <(head -c 100000 "$T/src") "$T/in/.$max.dnd-partial" ||
	fail "the kept partial differs"
[ -f "$T/in/.$max.dnd-partial.info" ] || fail "no record: $(ls -A "$T/in")"
rm -f "$T/in"/.n*
no_leftovers "$T/in"
ok "a name of 233 bytes lands, and keeps its partial and record"

# dnd serve, keyless on loopback (its request is not MACed), behind a
# proxy that turns an allowed name (12 + "zq/" + 233 bytes) into one of
# 248: the server must refuse it with the reason, not fail at the temporary.
mkdir "$T/d"
next_port; SPORT=$PORT
bg "$T/serve.log" "$DND" serve --dir "$T/d" -p "$SPORT"
SPID=$BPID
wait_listen "$SPORT"
next_port
bg "$T/mitm.out" perl "$(dirname "$0")/mitm.pl" 127.0.0.1 "$PORT" \
	127.0.0.1 "$SPORT" swap zq/n zqqn
wait_text "$T/mitm.out" ready
expect_exit 1 timeout 20 "$DND" send -c 127.0.0.1 -p "$PORT" \
	--to "$(name 12)zq/$max" "$T/src"
expect_out "dnd: server refused: $(why 248)"
grep -q swapped "$T/mitm.out" || fail "the proxy swapped nothing"
wait_log "$T/serve.log" "failed: refused: $(why 248)" "no refusal logged"
no_leftovers "$T/d"
kill -TERM "$SPID"
wait_for "$SPID" 10 || fail "serve exited $? after SIGTERM"
ok "dnd serve refuses a name of 248 bytes with the reason"
