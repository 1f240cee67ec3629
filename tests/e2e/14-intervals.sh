#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -i SEC: a line per interval on both ends; --json-stream: JSON Lines on
# stdout, flushed as written, intervals whose bytes add up to the report's.
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
