#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -i SEC: a line per interval on both ends; --json-stream: JSON Lines on
# stdout, flushed as written, intervals whose bytes add up to the report's;
# --json: one document, the intervals in its "intervals" array.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || skip "jq is not installed"

# JSON Lines from both ends, 3 streams, 0.1 s intervals.
xfer "-c 127.0.0.1 --json-stream -i 0.1 -P 3 -b 1Mi -l 3Gi /dev/zero" \
	"--json-stream -i 0.1 -m null -b 1Mi /dev/null"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "$(cat "$T/s.log" "$T/r.log")"
for side in s r; do
	# Every stdout line parses on its own; nothing else is there.
	while IFS= read -r line; do
		jq -e . >/dev/null <<<"$line" || fail "$side: not JSON: $line"
	done < <(grep -v '^dnd: ' "$T/$side.log")
	jq -s -e 'length >= 3 and (.[-1].type == "report") and
		(.[:-1] | all(.type == "interval" and .end_seconds > .start_seconds
			and .bytes >= 0 and .schema == 1 and
			(.mb_per_s | type == "number"))) and
		([.[:-1][].bytes] | add) == .[-1].bytes and
		.[-1].bytes == 3221225472' \
		<(json_of "$T/$side.log") >/dev/null ||
		fail "$side: intervals do not add up: $(cat "$T/$side.log")"
done
n=$(json_of "$T/s.log" | grep -c '"type":"interval"')
ok "--json-stream: $n intervals on the sender add up to the report, both ends"

# --json with -i: stdout is one JSON document, the intervals inside it
# (as iperf3 -J -i), adding up to the report's bytes; stderr apart.
next_port
"$DND" recv -p "$PORT" --json -i 0.1 -m null -b 1Mi /dev/null \
	>"$T/rj.out" 2>"$T/rj.err" &
RPID=$!
_pids+=("$RPID")
wait_listen "$PORT"
"$DND" send -p "$PORT" -c 127.0.0.1 --json -i 0.1 -P 2 -b 1Mi -l 1Gi \
	/dev/zero >"$T/sj.out" 2>"$T/sj.err"
SRC=$?
wait_recv
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
	fail "--json -i: $(cat "$T/sj.out" "$T/sj.err" "$T/rj.out" "$T/rj.err")"
for side in sj rj; do
	jq -s -e 'length == 1 and .[0].type == "report" and
		(.[0].intervals | length >= 1) and .[0].intervals_lost == 0 and
		(.[0].intervals | all(.end_seconds > .start_seconds and
			.bytes >= 0 and (.mb_per_s | type == "number"))) and
		(.[0].intervals[-1].last == true) and
		([.[0].intervals[].bytes] | add) == .[0].bytes and
		.[0].bytes == 1073741824' "$T/$side.out" >/dev/null ||
		fail "$side: stdout is not one report with its intervals: $(cat "$T/$side.out")"
done
n=$(jq '.intervals | length' "$T/sj.out")
ok "--json -i: stdout is one JSON report, its $n intervals inside adding up"

# Text lines, on the report's stream, without JSON.
xfer "-c 127.0.0.1 -i 0.2 -l 1Gi /dev/zero" "-i 0.2 /dev/null"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "$(cat "$T/s.log" "$T/r.log")"
for side in s r; do
	grep -Eq '^  \[ *[0-9.]+- *[0-9.]+ s\] +[0-9]+ B +[0-9.]+ MB/s  cpu +[0-9.]+%  retr [0-9]+  rtt [0-9]+ us$' \
		"$T/$side.log" || fail "$side: no interval line: $(cat "$T/$side.log")"
done
ok "-i 0.2: interval lines with bytes, rate, CPU, retransmits and RTT"

expect_exit 2 "$DND" send -c 127.0.0.1 -i 0.05 -l 1 /dev/zero
expect_out "-i 0.05: give at least 0.1 seconds"
ok "an interval below 0.1 s is refused"
