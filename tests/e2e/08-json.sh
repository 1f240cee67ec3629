#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --json: one valid object per run, with the numbers, also when the run fails.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"

random_file "$T/src" 1000000
xfer "-c 127.0.0.1 --json -m splice --pipe-size 256Ki $T/src" "--json -m vmsplice $T/dst"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "$(cat "$T/s.log" "$T/r.log")"
for side in s r; do
	jq -e '.schema == 1 and .ok == true and .error == null and
		.verdict == "verified" and .bytes == 1000000 and
		(.xxh3 | test("^[0-9a-f]{16}$")) and .seconds > 0 and
		.mb_per_s > 0 and .cpu_us_per_mb >= 0 and .ncpu >= 1 and
		.machine_busy_pct >= 0 and .machine_steal_pct >= 0 and
		.machine_busy_pct + .machine_steal_pct <= 100.0001 and
		(.syscalls | type == "object") and .sndbuf_bytes > 0 and .rcvbuf_bytes > 0 and
		.tcp.rtt_us >= 0' <(json_of "$T/$side.log") >/dev/null ||
		fail "$side JSON lacks fields: $(cat "$T/$side.log")"
done
jq -e '.role == "send" and .method == "splice" and .pipe_bytes == 262144 and
	.pipe_asked_bytes == 262144 and .syscalls["splice>pipe"].calls > 0' \
	<(json_of "$T/s.log") >/dev/null || fail "send JSON: $(cat "$T/s.log")"
jq -e '.role == "recv" and .syscalls.vmsplice.bytes == 1000000 and
	.syscalls.fdatasync.calls == 1' <(json_of "$T/r.log") >/dev/null ||
	fail "recv JSON: $(cat "$T/r.log")"
[ "$(jq -r .xxh3 <(json_of "$T/s.log"))" = "$(jq -r .xxh3 <(json_of "$T/r.log"))" ] || fail "hashes differ"
ok "JSON on success"

# The time a user waits, on each end from the first byte: the sender's to
# the receiver's confirmation, the receiver's to the verified file's
# rename and directory fsync; never less than the data path's seconds.
for side in s r; do
	jq -e '.total_seconds >= .seconds and .seconds > 0' \
		<(json_of "$T/$side.log") >/dev/null ||
		fail "$side JSON: no total_seconds >= seconds: $(cat "$T/$side.log")"
done
rm -f "$T/dst"
xfer "-c 127.0.0.1 $T/src" "$T/dst"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "text run: $(cat "$T/s.log" "$T/r.log")"
cmp -s "$T/src" "$T/dst" || fail "text run: data differs"
head=$(sed -n 's/^receiver: 1000000 bytes in \([0-9.]*\) s: .*/\1/p' "$T/r.log")
total=$(sed -n 's/^  total: \([0-9.]*\) s from the first byte to the rename and directory fsync: [0-9.]* MB\/s$/\1/p' "$T/r.log")
[ -n "$head" ] && [ -n "$total" ] || fail "no receiver headline or total: line: $(cat "$T/r.log")"
awk -v h="$head" -v t="$total" 'BEGIN { exit !(t >= h && t > 0) }' ||
	fail "receiver total $total s < headline $head s: $(cat "$T/r.log")"
ok "each end's total: JSON total_seconds >= seconds, the receiver's total: line"

# On failure: still one valid object, with the cause in "error".
next_port
"$DND" recv -p "$PORT" --json "$T/dst2" >"$T/r.log" 2>"$T/r.err" &
RPID=$!
wait_listen "$PORT"
printf 'NOT A DND HEADER AT ALL!' | timeout 10 nc -N 127.0.0.1 "$PORT" >/dev/null
wait_recv
[ "$RRC" = 1 ] || fail "exit $RRC"
jq -e '.ok == false and .verdict == "failed" and
	(.error | test("bad header"))' <(json_of "$T/r.log") >/dev/null ||
	fail "failure JSON: $(cat "$T/r.log")"
[ "$(wc -l <"$T/r.log")" = 1 ] || fail "more than one line: $(cat "$T/r.log")"
next_port
expect_exit 1 "$DND" send --json -c 127.0.0.1 -p "$PORT" --connect-timeout 0 "$T/src"
echo "$OUT" | grep -v '^dnd: ' | jq -e '.ok == false and (.error | test("cannot connect"))' >/dev/null ||
	fail "connect failure JSON: $OUT"
ok "JSON on failure"

# A receiver writing data to stdout puts its report on stderr.
next_port
"$DND" recv -p "$PORT" --json - >"$T/out" 2>"$T/r.log" &
RPID=$!
wait_listen "$PORT"
"$DND" send -c 127.0.0.1 -p "$PORT" "$T/src" >/dev/null 2>&1 || fail "send to stdout receiver"
wait_recv
cmp -s "$T/src" "$T/out" || fail "stdout data polluted"
jq -e '.verdict == "counted"' <(json_of "$T/r.log") >/dev/null || fail "report not on stderr: $(cat "$T/r.log")"
# Nothing lands: the receiver's total ends at its verdict.
jq -e '.total_seconds >= .seconds' <(json_of "$T/r.log") >/dev/null ||
	fail "stdout receiver: no total_seconds >= seconds: $(cat "$T/r.log")"
ok "report goes where the data does not"

# --sync stream starts writeback every 8 MiB as data lands, then syncs.
random_file "$T/src20" $((20 * 1048576 + 3))
rm -f "$T/dst20"
xfer "-c 127.0.0.1 $T/src20" "--json --sync stream -m splice $T/dst20"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "--sync stream: $(cat "$T/s.log" "$T/r.log")"
cmp -s "$T/src20" "$T/dst20" || fail "--sync stream: data differs"
jq -e '.verdict == "verified" and .syscalls.sync_file_range.calls == 2 and
	.syscalls.sync_file_range.bytes >= 16777216 and
	.syscalls.sync_file_range.bytes <= 20971523 and
	.syscalls.fdatasync.calls == 1' <(json_of "$T/r.log") >/dev/null ||
	fail "--sync stream accounting: $(cat "$T/r.log")"
ok "--sync stream: writeback as data lands, counted"

# --json -i: stdout is JSON only, so a pipe into jq works (issue 28's
# "parse error: Invalid numeric literal" when interval text came first).
next_port
"$DND" recv -p "$PORT" -m null /dev/null >"$T/r.log" 2>&1 &
RPID=$!
_pids+=("$RPID")
wait_listen "$PORT"
mbps=$("$DND" send -c 127.0.0.1 -p "$PORT" -i 0.1 --json -l 512Mi /dev/zero \
	2>"$T/s.err" | jq -e .mb_per_s) || fail "--json -i: stdout is not JSON: $(cat "$T/s.err")"
wait_recv
[ "$RRC" = 0 ] || fail "receiver: $(cat "$T/r.log")"
[[ $mbps =~ ^[0-9.]+(e[-+]?[0-9]+)?$ ]] || fail "--json -i: mb_per_s is $mbps"
ok "--json -i | jq .mb_per_s: $mbps"
