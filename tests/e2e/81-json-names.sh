#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# File names in JSON (docs/json.md, "File names"): names with bytes that
# are not UTF-8, control characters, quotes, backslashes and multibyte
# text give valid JSON in send/recv --json, --json-stream and serve's log,
# each name decodes back to its exact bytes (the text, or *_bytes_hex),
# and the objects still match docs/schema.
. "$(dirname "$0")/lib.sh"
need_py3 jsonschema
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)
CHK=$(dirname "$0")/schema_check.py

names=(
	$'bad\xff\xfe.img'
	$'sur\xed\xa0\x80'
	$'ctl\x01\x1b[1m\ttab\nnl\x7f'
	$'q"uo\\te\\'
	$'d\xc3\xa9j\xc3\xa0 \xe2\x82\xac \xf0\x9f\x98\x80'
)
# 233 bytes (the longest name dnd lands), none UTF-8: a serve log line
# longer than its old 2 KiB buffer.
names+=("$(for _ in $(seq 1 233); do printf '\xff'; done)")
hex() { printf %s "$1" | od -An -v -tx1 | tr -d ' \n'; }

# names.py FILE TYPE KEY HEX...: every line of FILE that starts with "{"
# is strict UTF-8 JSON, and KEY of its objects of TYPE, decoded as
# docs/json.md says, are exactly the HEX byte strings (in any order).
cat >"$T/names.py" <<'PY'
import json, sys
path, typ, key, want = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
got = []
with open(path, "rb") as f:
    for n, line in enumerate(f, 1):
        if not line.startswith(b"{"):
            continue
        try:
            o = json.loads(line.decode("utf-8"))
        except ValueError as e:
            sys.exit("%s:%d: not JSON (%s): %r" % (path, n, e, line))
        if o.get("type") != typ:
            continue
        hk = key + "_bytes_hex"
        raw = bytes.fromhex(o[hk]) if hk in o else o[key].encode("utf-8")
        if hk in o and o[key] != raw.decode("utf-8", "replace"):
            sys.exit("%s:%d: %s %r is not the text of %s" % (path, n, key, o[key], hk))
        got.append(raw.hex())
if sorted(got) != sorted(want):
    sys.exit("%s: %s of %s: got %s, want %s" % (path, key, typ, got, want))
PY
names_are() { "$PY3" "$T/names.py" "$@" || fail "names in $1: $(cat "$1")"; }
valid() { "$PY3" "$CHK" "$DOCS" validate "$1" "$2" >/dev/null || fail "schema $1: $(cat "$2")"; }

# move FLAGS SRC DST: xfer with file names kept whole (no word splitting).
move() {
	next_port
	# shellcheck disable=SC2086
	start_recv "$T/r.log" $1 "$3"
	# shellcheck disable=SC2086
	"$DND" send -p "$PORT" -c 127.0.0.1 $1 "$2" >"$T/s.log" 2>&1
	SRC=$?
	wait_recv
}

# One-shot send/recv --json, and --json-stream with intervals.
mkdir "$T/in" "$T/out"
random_file "$T/src" 300000
for n in "${names[@]}"; do
	cp "$T/src" "$T/in/$n"
	move --json "$T/in/$n" "$T/out/$n"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "transfer of $(hex "$n"): $(cat "$T/s.log" "$T/r.log")"
	cmp "$T/src" "$T/out/$n" || fail "$(hex "$n") differs"
	names_are "$T/s.log" report file "$(hex "$T/in/$n")"
	names_are "$T/r.log" report file "$(hex "$T/out/$n")"
	json_of "$T/s.log" >>"$T/report.jsonl"
	json_of "$T/r.log" >>"$T/report.jsonl"
done
n=${names[0]}
rm "$T/out/$n"
move "--json-stream -i 0.1" "$T/in/$n" "$T/out/$n"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "--json-stream: $(cat "$T/s.log" "$T/r.log")"
names_are "$T/s.log" report file "$(hex "$T/in/$n")"
names_are "$T/r.log" report file "$(hex "$T/out/$n")"
json_of "$T/s.log" | grep '"type":"report"' >>"$T/report.jsonl"
valid report "$T/report.jsonl"
ok "send/recv --json and --json-stream: ${#names[@]} hard names exact, valid JSON and schema"

# dnd serve --json: one log line per push, the name exact.
mkdir "$T/srv"
next_port
bg "$T/serve.log" "$DND" serve --dir "$T/srv" -p "$PORT" --json
wait_log "$T/serve.log" "listening on .*:$PORT" "no listening line"
want=()
for n in "${names[@]}"; do
	# dnd serve refuses a name with a control character (82-serve-log.sh).
	[ "$(printf %s "$n" | LC_ALL=C tr -d '\001-\037\177' | wc -c)" = "$(printf %s "$n" | wc -c)" ] ||
		continue
	"$DND" send -c 127.0.0.1 -p "$PORT" --json --to "$n" "$T/src" >"$T/c.log" 2>&1 ||
		fail "push $(hex "$n"): $(cat "$T/c.log")"
	cmp "$T/src" "$T/srv/$n" || fail "pushed $(hex "$n") differs"
	names_are "$T/c.log" report file "$(hex "$T/src")"
	want+=("$(hex "$n")")
done
for _ in $(seq 1 200); do
	[ "$(grep -c '"type":"serve_session"' "$T/serve.log")" -ge ${#want[@]} ] && break
	sleep 0.05
done
names_are "$T/serve.log" serve_session name "${want[@]}"
grep '"type":"serve_session"' "$T/serve.log" >"$T/sessions.jsonl"
valid serve_session "$T/sessions.jsonl"
ok "serve --json: the log names each pushed file exactly, valid JSON and schema"
