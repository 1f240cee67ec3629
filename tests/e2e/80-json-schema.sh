#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real --json output of every subcommand and mode against docs/schema/ (JSON
# Schema 2020-12, Debian's python3-jsonschema): no field the schema does not
# list, none it requires missing; every object a schema describes is closed
# to unlisted fields; and docs/json.md documents exactly the fields the
# schemas allow. So neither the document nor a schema can fall behind.
# Modes: one-shot both ends (plain, keyed, zero copy, -P, -i with --json and
# --json-stream), failures, interrupted runs, --resume, dnd serve's pushes
# and pulls on both ends with its log, probe, bench, filebench, relay and
# bench relay.
. "$(dirname "$0")/lib.sh"
need_py3 jsonschema
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)
CHK=$(dirname "$0")/schema_check.py
check() { "$PY3" "$CHK" "$DOCS" "$@" || fail "schema check $*"; }

check doc
check examples
check closed

# probe
"$DND" probe --json >"$T/probe.jsonl" 2>"$T/probe.err" ||
	fail "probe --json: $(cat "$T/probe.err")"
check validate probe "$T/probe.jsonl"
check strict probe "$T/probe.jsonl"

# bench: the quick set holds cells of every status and the references.
expect_exit 0 "$DND" bench --quick --dir "$T" --json="$T/bench.jsonl"
grep '"type":"bench_cell"' "$T/bench.jsonl" >"$T/cell.jsonl"
grep '"type":"bench_reference"' "$T/bench.jsonl" >"$T/ref.jsonl"
[ "$(cat "$T/cell.jsonl" "$T/ref.jsonl" | wc -l)" = "$(wc -l <"$T/bench.jsonl")" ] ||
	fail "bench wrote a type other than bench_cell and bench_reference"
for s in '"status":"ok"' '"status":"n/a"' '"status":"not in set"'; do
	grep -q "$s" "$T/cell.jsonl" || fail "no cell with $s to validate"
done
check validate bench_cell "$T/cell.jsonl"
check strict bench_cell "$T/cell.jsonl"
check validate bench_reference "$T/ref.jsonl"

# filebench: every path at a tiny size, and a run that fails.
mkdir "$T/fb"
expect_exit 0 "$DND" filebench --size 256Ki --bs 64Ki --dir "$T/fb" --json
echo "$OUT" >"$T/fb.jsonl"
expect_exit 1 "$DND" filebench --paths direct --size 4000 --bs 1000 \
	--dir "$T/fb" --json
echo "$OUT" | grep '^{' >>"$T/fb.jsonl"
grep -q '"ok":false' "$T/fb.jsonl" || fail "no failed filebench run: $OUT"
check validate filebench_run "$T/fb.jsonl"
check strict filebench_run "$T/fb.jsonl"

# relay: stats on SIGUSR1 while it runs, and at exit.
next_port; sink=$PORT
next_port; rl=$PORT
bg "$T/sink.log" "$DND" bench relay --sink -l "127.0.0.1:$sink" --count 2
spid=$BPID
# JSON on stdout, the "listening on" line on stderr.
"$DND" relay -l "127.0.0.1:$rl" -t "127.0.0.1:$sink" --json \
	>"$T/relay.jsonl" 2>"$T/relay.err" &
rpid=$!
_pids+=("$rpid")
wait_listen "$sink"
wait_listen "$rl"
expect_exit 0 "$DND" bench relay --client -t "127.0.0.1:$rl" --flows 2 \
	--bytes 1Mi --reply 64Ki
wait "$spid" || fail "sink: $(cat "$T/sink.log")"
kill -USR1 "$rpid"
for _ in $(seq 1 100); do
	[ -s "$T/relay.jsonl" ] && break
	sleep 0.05
done
kill -TERM "$rpid"
wait "$rpid" || fail "relay exit $?: $(cat "$T/relay.jsonl")"
[ "$(grep -c '"type":"relay_stats"' "$T/relay.jsonl")" = 2 ] ||
	fail "want two relay_stats lines (SIGUSR1, exit): $(cat "$T/relay.jsonl")"
check validate relay_stats "$T/relay.jsonl"
check strict relay_stats "$T/relay.jsonl"

# bench relay: direct, splice and rw at a tiny size.
expect_exit 0 "$DND" bench relay --flows 1,2 --bytes 1Mi --json
echo "$OUT" | grep '^{' >"$T/br.jsonl"
[ "$(wc -l <"$T/br.jsonl")" = 6 ] || fail "bench relay: $OUT"
check validate bench_relay_run "$T/br.jsonl"
check strict bench_relay_run "$T/br.jsonl"

# send/recv: a pipe method, a failure before any byte, zero copy, streams.
# docs/schema/report.json still has report.c's current names (its
# $comment and docs/json.md say which names it will take).
random_file "$T/src" 3000000
# keep_reports WHAT PATTERN: both ends' logs hold PATTERN (grep -E); their
# reports are kept for the validation below.
keep_reports() {
	local l
	for l in s r; do
		grep -Eq "$2" "$T/$l.log" || fail "$1 ($l): no $2: $(cat "$T/$l.log")"
		json_of "$T/$l.log" >>"$T/report.jsonl"
	done
}
xfer "-c 127.0.0.1 --json -m splice $T/src" "--json -m splice --verify readback $T/dst"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "transfer: $(cat "$T/s.log" "$T/r.log")"
json_of "$T/s.log" >"$T/report.jsonl"
json_of "$T/r.log" >>"$T/report.jsonl"
# Asked to, the receiver reads the landed file back.
grep -q '"verify":"readback"' "$T/r.log" || fail "splice receiver: $(cat "$T/r.log")"
# Keyed: the "tls" object on both ends (null in the others).
(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
xfer "-c 127.0.0.1 --json --key $T/key $T/src" "--json --key $T/key $T/dstk"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "keyed transfer: $(cat "$T/s.log" "$T/r.log")"
keep_reports keyed '"tls":\{"version":"TLSv1\.3","cipher":"TLS_AES_128_GCM_SHA256","group":"x25519","auth":"psk","ktls_tx":'
grep -q '"tls":null' "$T/report.jsonl" || fail "keyless reports have no \"tls\":null"
grep -q '"verify":"as-received"' "$T/r.log" || fail "rw receiver: $(cat "$T/r.log")"
# --mptcp (loopback: a subflow a stream), where this kernel has MPTCP.
if "$DND" probe --require mptcp >/dev/null 2>&1; then
	xfer "-c 127.0.0.1 --json --mptcp -P 2 $T/src" "--json --mptcp $T/dstm"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "--mptcp: $(cat "$T/s.log" "$T/r.log")"
	keep_reports --mptcp '"mptcp":\{"fallback_streams":0,"subflows_total":2,"subflows":\[\{"stream":0,'
fi
next_port
expect_exit 1 "$DND" send --json -c 127.0.0.1 -p "$PORT" --connect-timeout 0 "$T/src"
echo "$OUT" | grep '^{' >>"$T/report.jsonl"
if "$DND" probe --require msg-zerocopy >/dev/null 2>&1; then
	xfer "-c 127.0.0.1 --json -m zerocopy $T/src" "--json -m rw $T/dst2"
	[ "$SRC" = 0 ] || fail "zerocopy send: $(cat "$T/s.log")"
	grep -q '"zerocopy":{' "$T/s.log" || fail "no zerocopy object: $(cat "$T/s.log")"
	json_of "$T/s.log" >>"$T/report.jsonl"
fi
# Interrupted: the sender stopped by SIGINT while its receiver (--resume)
# is frozen; both write a failed report. Then the resumed transfer.
head -c $((640 << 20)) /dev/urandom >"$T/big"
mkdir "$T/res"
SEND_ARGS=--json freeze_transfer "$T/big" "$T/res" --json --resume
kill -INT "$SPID"
wait_for "$SPID" 20
src=$?
kill -CONT "$RPID"
wait_recv
[ "$src" = 130 ] && [ "$RRC" = 1 ] ||
	fail "interrupted: send $src recv $RRC: $(cat "$T/s.log" "$T/r.log")"
keep_reports interrupted '^\{.*"ok":false'
xfer "-c 127.0.0.1 --json $T/big" "--json --resume $T/res/dst"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "--resume: $(cat "$T/s.log" "$T/r.log")"
cmp -s "$T/big" "$T/res/dst" || fail "--resume: the file differs"
keep_reports --resume '"resumed_from":[1-9]'
rm -f "$T/big"

# --json -i: one report on stdout with its intervals inside, both ends.
xfer "-c 127.0.0.1 --json -i 0.1 -P 2 -l 256Mi /dev/zero" \
	"--json -i 0.1 -m null /dev/null"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "--json -i: $(cat "$T/s.log" "$T/r.log")"
keep_reports "--json -i" '"intervals":\[\{"start_seconds":'

# dnd serve: keyed pushes and pulls, the client's report (with the
# server's peer_report) and the server's log lines; a wrong key and a
# refused address fail on both ends.
# serve --json logs JSON Lines to stdout, and nothing else goes there.
serve_sessions() { cat "$T/serve.out"; }
wait_sessions() { # wait_sessions N: until the log holds N sessions
	local i
	for i in $(seq 1 200); do
		[ "$(serve_sessions | wc -l)" -ge "$1" ] && return 0
		sleep 0.05
	done
	fail "want $1 serve_session lines: $(cat "$T/serve.out")"
}
(umask 077; "$DND" serve --new-key "$T/other" 2>/dev/null) || fail "--new-key"
mkdir "$T/sd"
next_port
"$DND" serve --dir "$T/sd" -p "$PORT" --key "$T/key" --json --grace 1 \
	>"$T/serve.out" 2>"$T/serve.err" &
svpid=$!
_pids+=("$svpid")
wait_listen "$PORT"
cli() { "$DND" "$@" -c 127.0.0.1 -p "$PORT" --json; }
expect_exit 0 cli send --key "$T/key" --to pushed "$T/src"
echo "$OUT" | grep '^{' >"$T/served.jsonl"
cmp -s "$T/src" "$T/sd/pushed" || fail "served push differs"
expect_exit 0 cli send --key "$T/key" -P 2 --to pushed2 "$T/src"
echo "$OUT" | grep '^{' >>"$T/served.jsonl"
expect_exit 0 cli recv --key "$T/key" --from pushed "$T/pulled"
echo "$OUT" | grep '^{' >>"$T/served.jsonl"
cmp -s "$T/src" "$T/pulled" || fail "served pull differs"
expect_exit 1 cli send --key "$T/other" --to refused "$T/src"
echo "$OUT" | grep '^{' >>"$T/served.jsonl"
[ "$(grep -c '"peer_report":{' "$T/served.jsonl")" = 3 ] ||
	fail "want the server's report in 3 client reports: $(cat "$T/served.jsonl")"
cat "$T/served.jsonl" >>"$T/report.jsonl"
wait_sessions 4
# A connection --allow refuses never reaches a child: the parent logs it.
next_port
"$DND" serve --dir "$T/sd" -p "$PORT" --allow 192.0.2.0/24 --json \
	>"$T/serve2.out" 2>"$T/serve2.err" &
sv2=$!
_pids+=("$sv2")
wait_listen "$PORT"
expect_exit 1 "$DND" send -c 127.0.0.1 -p "$PORT" --to x --json "$T/src"
for _ in $(seq 1 200); do
	grep -q '"refused: not in --allow"' "$T/serve2.out" && break
	sleep 0.05
done
kill -TERM "$svpid" "$sv2"
wait "$svpid" "$sv2"
serve_sessions >"$T/sessions.jsonl"
cat "$T/serve2.out" >>"$T/sessions.jsonl"
grep -v '^{' "$T/sessions.jsonl" && fail "serve --json wrote a line that is not JSON to stdout"
for w in '"direction":"push"' '"direction":"pull"' '"direction":null' \
	'"verdict":"failed"' '"error":"refused: not in --allow"'; do
	grep -qF "$w" "$T/sessions.jsonl" || fail "no session with $w: $(cat "$T/sessions.jsonl")"
done
check validate serve_session "$T/sessions.jsonl"
check strict serve_session "$T/sessions.jsonl"

# Three streams, and intervals before the report on both ends.
xfer "-c 127.0.0.1 --json-stream -i 0.1 -P 3 -l 64Mi /dev/zero" \
	"--json-stream -i 0.1 -m null /dev/null"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "-P 3: $(cat "$T/s.log" "$T/r.log")"
json_of "$T/s.log" >"$T/stream.jsonl"
json_of "$T/r.log" >>"$T/stream.jsonl"
grep '"type":"report"' "$T/stream.jsonl" >>"$T/report.jsonl"
grep '"type":"interval"' "$T/stream.jsonl" >"$T/interval.jsonl"
grep -q '"stream":\[' "$T/report.jsonl" || fail "no report with streams"
check validate interval "$T/interval.jsonl"
check strict interval "$T/interval.jsonl"
check validate report "$T/report.jsonl"
check strict report "$T/report.jsonl"
ok "real output of probe, bench, filebench, relay, bench relay, send and recv (one-shot, keyed, -P, -i, failed, interrupted, resumed, served), serve's log and intervals matches docs/schema"
