#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two builds of dnd side by side: `dnd bench` (--quick unless told) run by
# each in alternating rounds, then every cell's median MB/s and the ratio
# new/old. For refactors that must not make anything slower.
# Usage: scripts/bench-builds.sh OLD_DND NEW_DND [ROUNDS=3] [BENCH ARGS...]
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 OLD_DND NEW_DND [ROUNDS] [bench args]" >&2; exit 2; }
old=$1 new=$2
rounds=${3:-3}
shift $(( $# >= 3 ? 3 : 2 ))
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--quick)
command -v jq >/dev/null || { echo "needs jq (scripts/deps.sh)" >&2; exit 2; }

dir=$(mktemp -d /tmp/dnd-builds.XXXXXX)
trap 'rm -rf "$dir"' EXIT

for r in $(seq 1 "$rounds"); do
	for who in old new; do
		bin=$old
		[ $who = new ] && bin=$new
		# Alternate which goes first, so neither always gets the
		# warmer machine.
		[ $((r % 2)) = 0 ] && bin=$([ $who = old ] && echo "$new" || echo "$old") &&
			who=$([ $who = old ] && echo new || echo old)
		timeout 900 "$bin" bench "${args[@]}" --json="$dir/$who.$r.jsonl" \
			>/dev/null 2>"$dir/$who.$r.err" ||
			{ echo "$who round $r failed: $(tail -n3 "$dir/$who.$r.err")" >&2; exit 1; }
		echo "round $r: $who done" >&2
	done
done

# One line per cell: table:src>sink|send|recv|median over the rounds'
# medians (values sorted per cell, then the middle one taken).
summary() {
	cat "$dir/$1".*.jsonl | jq -r 'select(.kind == "cell" and .status == "ok") |
		"\(.table // "-"):\(.src)>\(.sink)|\(.send)|\(.recv)|\(.mb_per_s.median)"' |
		sort -t'|' -k1,1 -k2,2 -k3,3 -k4,4g |
		awk -F'|' 'function out(  m) {
				if (!n) return
				if (n % 2) m = v[(n + 1) / 2]
				else m = (v[n / 2] + v[n / 2 + 1]) / 2
				print key "|" m
			}
			{ k = $1 "|" $2 "|" $3
			  if (k != key) { out(); key = k; n = 0 }
			  v[++n] = $4 }
			END { out() }'
}
summary old >"$dir/old.txt"
summary new >"$dir/new.txt"
printf '%-28s %-14s %-14s %10s %10s %7s\n' group send recv old_MB/s new_MB/s new/old
join -t'|' <(awk -F'|' '{ print $1 "/" $2 "/" $3 "|" $4 }' "$dir/old.txt") \
	<(awk -F'|' '{ print $1 "/" $2 "/" $3 "|" $4 }' "$dir/new.txt") |
	awk -F'|' '{ split($1, k, "/"); r = $2 > 0 ? $3 / $2 : 0; s += log(r); n++
		printf "%-28s %-14s %-14s %10.0f %10.0f %6.2fx\n", k[1], k[2], k[3], $2, $3, r }
		END { if (n) printf "geometric mean of new/old over %d cells: %.3fx\n", n, exp(s / n) }'
