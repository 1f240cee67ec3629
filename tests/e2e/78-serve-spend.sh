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
