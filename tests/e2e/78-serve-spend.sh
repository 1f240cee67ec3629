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
ok "--replace keeps the old file's permission bits, never setuid, setgid or sticky"

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
no_leftovers "$d"
ok "a stream longer than its request, or without the length it declared: refused, nothing written"

