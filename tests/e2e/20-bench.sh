#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd bench --quick on loopback: every cell of the quick set runs (or says
# why it cannot), data into files is verified, and every output format
# parses: the table, JSON Lines, CSV, PNG and SVG.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed (make deps)"
command -v gnuplot >/dev/null || skip "gnuplot is not installed (make deps)"

# Usage errors come before any work (exit 2, cause and fix named).
expect_exit 2 "$DND" bench --rate 10gbit
expect_out "add --netns"
expect_exit 2 "$DND" bench --plot "$T/chart.pdf"
expect_out ".png or .svg"
expect_exit 2 "$DND" bench --send nosuch
expect_out "not a send method"
expect_exit 2 "$DND" bench --json --csv
expect_out "cannot both take stdout"
expect_exit 2 "$DND" bench -b 0
expect_out "give sizes"
ok "usage errors"

J=$T/b.jsonl C=$T/b.csv P=$T/b.png
expect_exit 0 "$DND" bench --quick --dir "$T" --json="$J" --csv="$C" --plot "$P"
for t in "== zero -> null" "== file -> file" "== best path: zero -> null" \
	"== references" "memcpy" "pipe ceiling" "fastest cell of each table"; do
	expect_out "$t"
done
ls -d "$T"/dnd-bench.* 2>/dev/null && fail "scratch directory left in $T"
ok "quick table, scratch directory removed"

# JSON Lines: every line is one object with the schema and the machine.
n=$(wc -l <"$J")
[ "$n" -gt 10 ] || fail "only $n JSON lines"
jq -s -e 'all(type == "object" and .schema == 1 and
	(.machine.kernel | length) > 0 and .machine.ncpu >= 1 and
	(.kind == "cell" or .kind == "reference") and
	.type == "bench_" + .kind and (.dnd_version | length) > 0 and
	(.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")))' "$J" >/dev/null ||
	fail "a JSON line lacks schema, type, kind, version, time or machine"
[ "$(jq -s 'length' "$J")" = "$n" ] || fail "JSON Lines do not parse one per line"

# Every cell ran, or says why not; none failed; the verdict fits the sink.
bad=$(jq -r 'select(.kind == "cell") |
	select(.status == "failed" or .status == "not run" or
	       ((.status == "n/a" or .status == "not in set") and
		(.reason | length) == 0) or
	       (.status == "ok" and (.runs < 1 or .mb_per_s.median <= 0 or
		.verdict != (if .sink == "file" then "verified" else "counted" end))))
	| "\(.src)->\(.sink) \(.send)->\(.recv): \(.status) \(.verdict) \(.reason)"' "$J")
[ -z "$bad" ] || fail "cells not right: $bad"
files=$(jq -s '[.[] | select(.kind == "cell" and .sink == "file" and
	.status == "ok")] | length' "$J")
nsend=$(jq -s '[.[] | select(.kind == "cell" and .sink == "file") | .send] |
	unique | length' "$J")
[ "$files" -ge "$nsend" ] || fail "$files verified file cells for $nsend senders"
# Each method appears on each side at least once, in both default tables.
for combo in "zero null" "file file"; do
	set -- $combo
	for side in send recv; do
		want=$(jq -s -r --arg s "$1" --arg k "$2" --arg d "$side" '[.[] |
			select(.kind == "cell" and .src == $s and .sink == $k and
			.table == "main" and .status != "n/a") | .[$d]] | unique | length' "$J")
		have=$(jq -s -r --arg s "$1" --arg k "$2" --arg d "$side" '[.[] |
			select(.kind == "cell" and .src == $s and .sink == $k and
			.table == "main" and .status == "ok") | .[$d]] | unique | length' "$J")
		[ "$have" = "$want" ] || fail "$1->$2: $have of $want $side methods ran"
	done
done
jq -s -e 'any(.kind == "reference" and .key == "memcpy" and .ok and
	.mb_per_s.median > 0)' "$J" >/dev/null || fail "no memcpy reference"
ok "JSON Lines: $n objects, every cell ran or said why, $files verified into files"

# CSV: a header and one row per JSON object, every row the same width.
[ "$(wc -l <"$C")" = $((n + 1)) ] || fail "CSV rows do not match JSON lines"
head -n1 "$C" | grep -q '^kind,table,src,sink,send,recv,' || fail "CSV header"
awk -F, 'NR == 1 { w = NF } NF != w { print "line " NR ": " NF " != " w; bad = 1 }
	END { exit bad }' "$C" || fail "CSV column count varies"
ok "CSV: $(head -n1 "$C" | awk -F, '{ print NF }') columns on every row"

[ -s "$P" ] || fail "empty PNG"
[ "$(head -c 8 "$P" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "$P is not a PNG"
ok "PNG chart"

# --json without a file takes stdout (the table moves to stderr); SVG.
S=$T/b.svg
"$DND" bench --quick --dir "$T" --src zero --sink null --send rw --recv null \
	--no-best-path --json --plot "$S" >"$T/o.jsonl" 2>"$T/o.err" ||
	fail "bench --json exit $?: $(tail -n3 "$T/o.err")"
jq -e '.schema == 1' "$T/o.jsonl" >/dev/null || fail "stdout is not JSON Lines"
grep -q "== zero -> null" "$T/o.err" || fail "table not on stderr"
[ "$(jq -s '[.[] | select(.kind == "cell" and .status == "ok")] | length' \
	"$T/o.jsonl")" = 1 ] || fail "expected exactly one cell"
[ -s "$S" ] && head -n1 "$S" | grep -q '^<?xml' && grep -q '<svg' "$S" ||
	fail "$S is not an SVG"
ok "JSON on stdout, SVG chart"

# --streams adds -P to the table: a cell per stream count, each verified.
"$DND" bench --quick --dir "$T" --streams 1,3 --send rw --recv null,rw \
	--no-best-path --json >"$T/p.jsonl" 2>"$T/p.err" ||
	fail "bench --streams exit $?: $(tail -n3 "$T/p.err")"
grep -q "| -P 3 ==" "$T/p.err" || fail "no -P 3 table: $(cat "$T/p.err")"
jq -s -e '[.[] | select(.kind == "cell" and .streams == 3 and
	.status == "ok")] | length >= 3 and
	([.[] | select(.kind == "cell" and .streams == 3 and .sink == "file")] |
	all(.verdict == "verified"))' "$T/p.jsonl" >/dev/null ||
	fail "--streams cells: $(jq -c 'select(.kind == "cell") | [.streams, .src, .sink, .send, .recv, .status, .verdict]' "$T/p.jsonl")"
ok "--streams 1,3: the -P 3 tables ran and verified"
