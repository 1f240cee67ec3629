#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd serve's log and what a peer's bytes can do to it: a hostile client
# pushes a name holding a newline, a forged timed "verified" line and an
# escape sequence; the text log keeps one escaped line (no raw newline, no
# ESC byte), the JSON log stays valid and decodes to the exact bytes, and
# dnd's own client refuses such a name before connecting. --json writes
# JSON Lines alone to stdout (messages to stderr), --log FILE takes either
# log, text lines start with an RFC 3339 time; and 200 refused connections
# give 10 lines and one line that counts the other 190.
. "$(dirname "$0")/lib.sh"
need_py3 json
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)
CHK=$(dirname "$0")/schema_check.py
d="$T/d"; mkdir "$d"
random_file "$T/src" 100000

# raw.py PORT push NAME_HEX: a keyless client's request by hand (wire.h,
# params.h): prints the verdict's status and reason. raw.py PORT flood N:
# N connections, each sending a preamble and read until the server closes
# or resets it (so each is logged by the time this returns).
cat >"$T/raw.py" <<'PY'
import socket, struct, sys
port, mode, arg = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"DNDa" + struct.pack(">HBB", 2, 0, 0))
    return s
def recvn(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            sys.exit("the server closed after %d of %d bytes" % (len(b), n))
        b += c
    return b
if mode == "flood":
    for _ in range(int(arg)):
        s = conn()
        try:
            while s.recv(4096):
                pass
        except ConnectionResetError:
            pass
        s.close()
    sys.exit(0)
name = bytes.fromhex(arg)
params = struct.pack(">BBHB3xQQB", 1, 0, 1, 0, 0, 65536, 2) + b"rw" + \
    struct.pack(">H", len(name)) + name + b"\0"
s = conn()
assert recvn(s, 8)[:4] == b"DNDb"
s.sendall(b"DNDq" + struct.pack(">HH", len(params), 0) + params)
head = recvn(s, 8)
assert head[:4] == b"DNDv", head
status, n = struct.unpack(">HH", head[4:])
print(status, recvn(s, n).decode("ascii"))
PY
# jsonl.py FILE: every line of FILE is a strict UTF-8 JSON object.
cat >"$T/jsonl.py" <<'PY'
import json, sys
with open(sys.argv[1], "rb") as f:
    for n, line in enumerate(f, 1):
        try:
            assert isinstance(json.loads(line.decode("utf-8")), dict)
        except (ValueError, AssertionError) as e:
            sys.exit("%s:%d: not a JSON object (%s): %r" % (sys.argv[1], n, e, line))
PY
hex() { printf %s "$1" | od -An -v -tx1 | tr -d ' \n'; }
# stamped FILE: every line of FILE starts with a time and "dnd: ".
stamped() {
	[ -s "$1" ] || fail "$1 is empty"
	grep -v "^$STAMP dnd: " "$1" && fail "a line of $1 without its time (above)"
	return 0
}
# serve LOG ARGS: a keyless server on a fresh port, stdout to LOG.out and
# stderr to LOG.err; sets SPID.
serve() {
	local log=$1; shift
	next_port
	"$DND" serve --dir "$d" -p "$PORT" --grace 1 "$@" >"$log.out" 2>"$log.err" &
	SPID=$!
	_pids+=("$SPID")
	wait_listen "$PORT"
}
stop() { kill -TERM "$SPID"; wait "$SPID" || fail "serve exited $? after SIGTERM"; }

forged=$'x\n2026-12-02T11:40:03.123Z dnd: session 127.0.0.1:1 push y -m rw: 9 bytes in 0.001 s, verified\e[31m'
esc='x\n2026-12-02T11:40:03.123Z dnd: session 127.0.0.1:1 push y -m rw: 9 bytes in 0.001 s, verified\x1b[31m'
why="name '$esc' holds a control character (byte 0x0a at offset 1); names with control characters are refused"

# Text, on stderr: one refused session, escaped; no forged line, no ESC.
serve "$T/t"
"$PY3" "$T/raw.py" "$PORT" push "$(hex "$forged")" >"$T/v" || fail "raw push: $(cat "$T/v")"
[ "$(cat "$T/v")" = "1 $why" ] || fail "the verdict: $(cat "$T/v")"
wait_log "$T/t.err" "failed: refused: name" "no refused session logged"
stop
stamped "$T/t.err"
[ "$(grep -c "^$STAMP dnd: session 127.0.0.1:1 push y" "$T/t.err")" = 0 ] &&
	[ "$(grep -c "dnd: session" "$T/t.err")" = 1 ] || fail "a forged line: $(cat "$T/t.err")"
[ "$(grep -c $'\e' "$T/t.err")" = 0 ] || fail "an ESC byte in the log"
grep -q "^$STAMP dnd: session 127.0.0.1:[0-9]* push $(printf %s "$esc" | sed 's/[][\\.*^$]/\\&/g') -m rw: 0 bytes in [0-9.]* s, failed: refused: $(printf %s "$why" | sed 's/[][\\.*^$]/\\&/g')$" "$T/t.err" ||
	fail "the refused session's line: $(cat "$T/t.err")"
[ -s "$T/t.out" ] && fail "text log on stdout: $(cat "$T/t.out")"
[ -z "$(ls -A "$d")" ] || fail "in DIR: $(ls -A "$d")"
ok "a forged name: refused with its reason, one escaped log line, no ESC byte, every line timed"

# JSON on stdout: every line a JSON object, the name exact; stderr timed.
serve "$T/j" --json
"$PY3" "$T/raw.py" "$PORT" push "$(hex "$forged")" >"$T/v" || fail "raw push: $(cat "$T/v")"
[ "$(cat "$T/v")" = "1 $why" ] || fail "the verdict: $(cat "$T/v")"
wait_log "$T/j.out" '"type":"serve_session"' "no session in the JSON log"
stop
"$PY3" "$T/jsonl.py" "$T/j.out" || fail "stdout is not JSON Lines"
stamped "$T/j.err"
grep -q "^$STAMP dnd: listening on .*:$PORT$" "$T/j.err" || fail "no listening line: $(cat "$T/j.err")"
"$PY3" - "$T/j.out" "$(hex "$forged")" "$why" <<'PY' || fail "the JSON log: $(cat "$T/j.out")"
import json, sys
o = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
assert len(o) == 1 and o[0]["type"] == "serve_session", o
assert o[0]["name"].encode() == bytes.fromhex(sys.argv[2]), o[0]["name"]
assert o[0]["error"] == "refused: " + sys.argv[3], o[0]["error"]
PY
ok "serve --json: stdout holds JSON Lines alone, the name decodes to its exact bytes; messages on stderr, timed"

# dnd's client refuses the name before it connects (nothing listens).
next_port
expect_exit 2 "$DND" send -c 127.0.0.1 -p "$PORT" --to "$forged" "$T/src"
expect_out "dnd: --to '$esc': the name holds a control character (byte 0x0a at offset 1), which dnd serve refuses; give a name without control characters"
[ "$(printf %s "$OUT" | grep -c $'\e')" = 0 ] || fail "an ESC byte in the client's message"
expect_exit 2 "$DND" recv -c 127.0.0.1 -p "$PORT" --from $'a\tb' "$T/pulled"
expect_out "dnd: --from 'a\tb': the name holds a control character (byte 0x09 at offset 1), which dnd serve refuses; give a name without control characters"
[ ! -e "$T/pulled" ] || fail "a refused pull wrote $T/pulled"
ok "dnd send --to and recv --from refuse a name with a control character: exit 2, escaped"

# A session that fails in its transfer (the client leaves after the
# verdict): its one line in --log FILE, and no message of the session
# process beside it (only the parent writes the log).
serve "$T/f" --log "$T/f.log"
"$PY3" "$T/raw.py" "$PORT" push "$(hex ok)" >"$T/v" || fail "raw push: $(cat "$T/v")"
[ "$(cat "$T/v")" = "0 " ] || fail "the verdict: $(cat "$T/v")"
wait_log "$T/f.log" "dnd: session 127.0.0.1:[0-9]* push ok -m rw: 0 bytes in [0-9.]* s, failed: " "no failed session logged"
stop
stamped "$T/f.log"
grep -v -e "dnd: listening on" -e "dnd: no --key" -e "dnd: stopping: " -e "dnd: stopped$" \
	-e "dnd: session 127.0.0.1:[0-9]* push ok -m rw: 0 bytes in [0-9.]* s, failed: " "$T/f.log" &&
	fail "other lines in --log FILE (above)"
[ ! -s "$T/f.out" ] && [ ! -s "$T/f.err" ] || fail "with --log, output elsewhere: $(cat "$T/f.out" "$T/f.err")"
[ -z "$(ls -A "$d")" ] || fail "in DIR: $(ls -A "$d")"
ok "a failed transfer: one line in --log FILE, none from the session process"

# 50 refused connections (well inside one 10 s window): 10 lines, and one
# that counts the other 40.
serve "$T/r" --allow 10.0.0.0/8 --log "$T/r.log"
"$PY3" "$T/raw.py" "$PORT" flood 50 || fail "flood"
stop
stamped "$T/r.log"
[ ! -s "$T/r.out" ] && [ ! -s "$T/r.err" ] || fail "with --log, output elsewhere: $(cat "$T/r.out" "$T/r.err")"
[ "$(grep -c "^$STAMP dnd: session 127.0.0.1:[0-9]*: refused: not in --allow$" "$T/r.log")" = 10 ] ||
	fail "refused lines: $(cat "$T/r.log")"
[ "$(grep -c "more refused or failed" "$T/r.log")" = 1 ] &&
	grep -q "^$STAMP dnd: 40 more refused or failed connections from 127.0.0.1 in the last [0-9]* s (not shown)$" "$T/r.log" ||
	fail "no count of the suppressed lines: $(cat "$T/r.log")"
grep -q "^$STAMP dnd: listening on" "$T/r.log" && tail -n1 "$T/r.log" | grep -q "^$STAMP dnd: stopped$" ||
	fail "--log FILE lacks the server's messages: $(cat "$T/r.log")"
ok "50 refused connections: 10 lines and '40 more ... (not shown)' in --log FILE"

# The same as JSON in --log FILE: 10 serve_session, one serve_suppressed.
serve "$T/q" --allow 10.0.0.0/8 --json --log "$T/q.jsonl"
"$PY3" "$T/raw.py" "$PORT" flood 50 || fail "flood"
stop
[ ! -s "$T/q.out" ] || fail "with --log, JSON on stdout: $(cat "$T/q.out")"
stamped "$T/q.err"
"$PY3" "$T/jsonl.py" "$T/q.jsonl" || fail "--log FILE is not JSON Lines"
[ "$(grep -c '"type":"serve_session",.*"error":"refused: not in --allow"' "$T/q.jsonl")" = 10 ] &&
	[ "$(grep -c '"type":"serve_suppressed",.*"source":"127.0.0.1","suppressed":40,"seconds":' "$T/q.jsonl")" = 1 ] &&
	[ "$(wc -l <"$T/q.jsonl")" = 11 ] || fail "the JSON log: $(cat "$T/q.jsonl")"
if "$PY3" -c "import jsonschema" 2>/dev/null; then
	grep '"type":"serve_suppressed"' "$T/q.jsonl" >"$T/sup.jsonl"
	grep '"type":"serve_session"' "$T/q.jsonl" >"$T/ses.jsonl"
	"$PY3" "$CHK" "$DOCS" validate serve_suppressed "$T/sup.jsonl" &&
		"$PY3" "$CHK" "$DOCS" validate serve_session "$T/ses.jsonl" ||
		fail "schema"
fi
ok "the same with --json --log FILE: 10 serve_session and a serve_suppressed of 190, valid JSON Lines"
