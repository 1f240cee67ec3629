#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a dnd serve client can make the server spend or keep: the buffer
# and the memory it asks for (--max-buffer, --max-memory), the length it
# declares against the stream it sends (reserved up front, nothing past
# it), and the setuid/setgid bits of a file its push replaces.
. "$(dirname "$0")/lib.sh"

d="$T/d"; mkdir "$d"
random_file "$T/src" 300000

# serve ARGS...: a keyless server on loopback on a fresh port; sets SPID.
serve() {
	next_port
	bg "$T/serve.log" "$DND" serve --dir "$d" -p "$PORT" --grace 1 "$@"
	SPID=$BPID
	wait_listen "$PORT"
}
stop() {
	kill -TERM "$SPID"
	wait_for "$SPID" 10 || fail "serve exited $? after SIGTERM: $(cat "$T/serve.log")"
}
cli() { timeout 20 "$DND" "$@" -c 127.0.0.1 -p "$PORT"; }

# --replace over a setuid/setgid file: the new content never keeps 07000.
serve --replace
random_file "$d/tool" 1000
chmod 6755 "$d/tool"
expect_exit 0 cli send --to tool "$T/src"
cmp -s "$T/src" "$d/tool" || fail "--replace did not replace"
mode=$(stat -c %a "$d/tool")
[ "$mode" = 755 ] || fail "the replaced file has mode $mode, not 755"
chmod 1640 "$d/tool"
expect_exit 0 cli send --to tool "$T/src"
mode=$(stat -c %a "$d/tool")
[ "$mode" = 640 ] || fail "the replaced file has mode $mode, not 640"
rm -f "$d/tool"
stop
# One-shot dnd recv: -t replaces as --replace does; -o rewrites in place
# and drops the bits from the file it rewrote.
for how in -t -o; do
	random_file "$T/own" 1000
	chmod 6755 "$T/own"
	xfer "-c 127.0.0.1 $T/src" "$how $T/own"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "recv $how: exits $SRC $RRC: $(cat "$T/r.log")"
	cmp -s "$T/src" "$T/own" || fail "recv $how did not land the data"
	mode=$(stat -c %a "$T/own")
	[ "$mode" = 755 ] || fail "recv $how left mode $mode, not 755"
	rm -f "$T/own"
done
ok "--replace, recv -t and -o keep the old file's permission bits, never setuid, setgid or sticky"

# The request declares the length the server checks (free space,
# --max-bytes) and reserves; the stream must carry exactly that. A proxy
# rewrites the keyless request (not MACed): 1000 bytes declared, the
# stream then brings 300000, or comes without a length (a pipe's
# segments). Refused before any payload; nothing under the name.
req() { # req FLAGS LENGTH: the hex of a one-stream push request's start
	printf '01%02x000100000000%016x' "$1" "$2"
}
swapped_push() { # swapped_push FROM TO NAME SEND-ARGS...
	local from=$1 to=$2 name=$3; shift 3
	next_port
	bg "$T/mitm.out" perl "$(dirname "$0")/mitm.pl" 127.0.0.1 "$PORT" \
		127.0.0.1 "$SPORT" swaphex "$from" "$to"
	wait_text "$T/mitm.out" ready
	expect_exit 1 timeout 20 "$DND" send -c 127.0.0.1 -p "$PORT" --to "$name" "$@"
	grep -q swapped "$T/mitm.out" || fail "the proxy swapped nothing"
}
serve; SPORT=$PORT
swapped_push "$(req 3 300000)" "$(req 3 1000)" longer "$T/src"
expect_out "the stream declares 300000 bytes, the request 1000: refused, nothing written"
wait_log "$T/serve.log" "push longer -m rw: .*failed: .*the stream declares 300000 bytes" "no refusal logged"
swapped_push "$(req 1 0)" "$(req 3 1000)" seg - < <(cat "$T/src")
expect_out "the request declared 1000 bytes, the stream comes without a length: refused, nothing written"
swapped_push "$(req 3 300000)" "$(req 1 0)" unsaid "$T/src"
expect_out "the stream declares 300000 bytes, the request no length: refused, nothing written"
no_leftovers "$d"
ok "a stream longer than its request, or without the length it declared: refused, nothing written"


# hold NAME ARGS...: a push of NAME (dnd send ARGS) from a FIFO held open
# on fd $HFD, waited for until its first byte landed (its buffers are set
# up by then); sets HPID. 'exec {HFD}>&-' lets it end. The clients send
# with splice or sendfile, which hold no buffer of -b themselves: only the
# server's end (--peer-method rw) does.
hold() {
	local name=$1; shift
	mkfifo "$T/$name.fifo"
	(timeout 60 "$DND" send -c 127.0.0.1 -p "$PORT" -m splice --to "$name" "$@" - \
		<"$T/$name.fifo" >"$T/$name.log" 2>&1) &
	HPID=$!
	_pids+=("$HPID")
	exec {HFD}>"$T/$name.fifo"
	printf x >&"$HFD"
	wait_size "$d/.$name.dnd-*" 1
}

# -b 1Gi against the default --max-buffer 16Mi: the session runs with
# 16Mi, its process never holds the 1 GiB, and the client is told.
serve
hold big -b 1Gi
kid=$(pgrep -P "$SPID")
[ -n "$kid" ] && [ "$(echo "$kid" | wc -l)" = 1 ] || fail "session process: '$kid'"
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$kid/status")
[ "$hwm" -lt 65536 ] || fail "the session process peaked at $hwm kB for a client's -b 1Gi"
exec {HFD}>&-
wait "$HPID" || fail "the capped push failed: $(cat "$T/big.log")"
grep -q "^    capped: buffer 16Mi (the server capped -b 1Gi to its --max-buffer 16Mi)$" "$T/big.log" ||
	fail "the client's report does not name the cap: $(cat "$T/big.log")"
[ "$(cat "$d/big")" = x ] || fail "the capped push landed '$(cat "$d/big")'"
rm -f "$d/big"
expect_exit 0 cli send -m sendfile --json -b 1Gi --to big "$T/src"
grep -q '"peer_report":{.*"buffer_bytes":16777216,"buffer_used_bytes":16777216,"buffer_asked_bytes":1073741824,"capped":"the server capped -b 1Gi to its --max-buffer 16Mi"' <<<"$OUT" ||
	fail "the JSON report does not name the cap: $OUT"
cmp -s "$T/src" "$d/big" || fail "the capped push landed other bytes"
rm -f "$d/big"
stop
ok "-b 1Gi: capped to --max-buffer 16Mi, the session peaked at $hwm kB, the report says so"

# --max-memory 40Mi over concurrent sessions: two of -b 16Mi hold 32Mi;
# a third is told busy, one of 8Mi still fits; once the two ended the
# third is served. A request above the budget alone is capped to fit.
serve --max-memory 40Mi
hold m1 -b 16Mi; f1=$HFD; p1=$HPID
hold m2 -b 16Mi; f2=$HFD; p2=$HPID
expect_exit 1 cli send -m sendfile -b 16Mi --to m3 "$T/src"
expect_out "dnd: server refused: server busy: its --max-memory 40Mi is held by the sessions running (this one needs 16Mi); try again later"
expect_exit 0 cli send -m sendfile -b 8Mi --to m4 "$T/src"
cmp -s "$T/src" "$d/m4" || fail "the push that fits differs"
exec {f1}>&- {f2}>&-
wait "$p1" && wait "$p2" || fail "a held push failed: $(cat "$T/m1.log" "$T/m2.log")"
wait_log "$T/serve.log" "push m2 -m rw: 1 bytes" "the second held session did not end"
wait_log "$T/serve.log" "push m1 -m rw: 1 bytes" "the first held session did not end"
expect_exit 0 cli send -m sendfile -b 16Mi --to m3 "$T/src"
cmp -s "$T/src" "$d/m3" || fail "the retried push differs"
# A session's share of the budget is freed when the server reaps it.
wait_log "$T/serve.log" "push m4 -m " "the m4 session did not end"
wait_log "$T/serve.log" "push m3 -m " "the m3 session did not end"
expect_exit 0 cli send -m sendfile -P 4 -b 16Mi --to m5 "$T/src"
expect_out "capped: buffer 10Mi (the server capped -b 16Mi to 10Mi: 4 stream(s) of -m rw, 1 buffer(s) each, must fit its --max-memory 40Mi)"
cmp -s "$T/src" "$d/m5" || fail "the capped 4-stream push differs"
stop
rm -f "$d"/m[1-5]
no_leftovers "$d"
ok "--max-memory: busy beside running sessions, served once they end, capped when above it alone"
