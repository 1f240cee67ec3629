#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd bench --quick on loopback: every cell of the quick set runs (or says
# why it cannot), data into files is verified, and every output format
# parses: the table, JSON Lines, CSV, PNG and SVG.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed (make deps)"
command -v gnuplot >/dev/null || skip "gnuplot is not installed (make deps)"
need_py3 csv

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
	"== references" "memcpy" "pipe ceiling" "fastest cell of each table" \
	"local copy: read/write 1 MiB, fdatasync" "x-copy x-device" \
	"device: O_DIRECT 1 MiB writes, 16 in flight" \
	"total MB/s, the time a user waits: the receiver's first byte to the"; do
	expect_out "$t"
done
ls -d "$T"/dnd-bench.* 2>/dev/null && fail "scratch directory left in $T"
# The CPU columns: "us/MB (usr/sys)" gives the user and system parts in
# us/MB too, so with one run per cell (--quick) they add up to the total.
echo "$OUT" >"$T/table.txt"
$PY3 - "$T/table.txt" <<'PY' || fail "CPU columns: $OUT"
import re, sys
rows = 0
for line in open(sys.argv[1]):
    for t, u, s in re.findall(r" (\d+) \((\d+)/(\d+)\)", line):
        t, u, s = int(t), int(u), int(s)
        if abs(u + s - t) > 2:
            sys.exit("usr/sys %d/%d do not add up to %d us/MB: %s" % (u, s, t, line))
        rows += t >= 10
if not rows:
    sys.exit("no CPU column of 10 us/MB or more")
PY
ok "quick table, CPU in us/MB with its usr/sys parts, scratch directory removed"

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
# memcpy is the fastest of many passes on the CPU clock (four passes on
# the wall clock swung 16x with the other programs on a shared machine),
# and every measured reference carries the steal its samples were taken
# under, in the text and the JSON.
echo "$OUT" | grep -Eq '^memcpy 64 MiB buffers, fastest of 24 passes on CPU time +[0-9]+ MB/s .*, steal [0-9.]+% \(max [0-9.]+%\)$' ||
	fail "memcpy row without its passes or steal: $(echo "$OUT" | grep memcpy)"
bad=$(jq -c 'select(.kind == "reference" and .ok) |
	select((.machine_steal_pct >= 0 and
		.machine_steal_max_pct >= .machine_steal_pct) | not)' "$J")
[ -z "$bad" ] || fail "references without their steal: $bad"
# The file -> file table brings a local buffered copy and the device's
# O_DIRECT write rate; its cells, and only they, are read against both.
for k in copy device; do
	jq -s -e --arg k "$k" 'any(.kind == "reference" and .key == $k and
		.ok and .mb_per_s.median > 0)' "$J" >/dev/null ||
		fail "no $k reference: $(jq -c --arg k "$k" 'select(.key == $k)' "$J")"
done
bad=$(jq -r 'select(.kind == "cell" and .status == "ok") |
	select((.ratio | has("copy") and has("device")) !=
	       (.src == "file" and .sink == "file")) |
	"\(.src)->\(.sink) \(.send)->\(.recv): \(.ratio)"' "$J")
[ -z "$bad" ] || fail "disk ratios on the wrong cells: $bad"
# Into a file, the total MB/s, the time a user waits (to the verified
# file's rename): each run's total time is at least its timed part, so the
# median total is at most the median MB/s. A null sink has none.
bad=$(jq -r 'select(.kind == "cell" and .status == "ok") |
	select(if .sink == "file" then
		(.total_mb_per_s.median > 0 and
		 .total_mb_per_s.median <= .mb_per_s.median and
		 .total_mb_per_s.min <= .total_mb_per_s.median and
		 .total_mb_per_s.median <= .total_mb_per_s.max) | not
	       else has("total_mb_per_s") end) |
	"\(.src)->\(.sink) \(.send)->\(.recv): \(.mb_per_s) total \(.total_mb_per_s)"' "$J")
[ -z "$bad" ] || fail "total MB/s not right: $bad"
ok "JSON Lines: $n objects, every cell ran or said why, $files verified into files, each with its total"


# CSV, read by Python's csv module (RFC 4180): a header, one row per JSON
# object in the same order, every row as wide as the header, and the text
# fields (reasons with commas in them) exactly as in the JSON.
$PY3 - "$J" "$C" <<'PY' || fail "CSV does not match the JSON Lines"
import csv, json, sys
objs = [json.loads(line) for line in open(sys.argv[1])]
with open(sys.argv[2], newline="") as f:
    rows = list(csv.reader(f, strict=True))
head, body = rows[0], rows[1:]
want = ("kind,table,src,sink,send,recv,buffer_bytes,recv_buffer_bytes,"
        "pipe_asked_bytes,streams,window_bytes,size_bytes,status,reason,"
        "verdict,runs,"
        "mb_per_s,mb_per_s_min,mb_per_s_max,gbit_per_s,"
        "total_mb_per_s,total_mb_per_s_min,total_mb_per_s_max,"
        "send_cpu_user_seconds,send_cpu_sys_seconds,recv_cpu_user_seconds,"
        "recv_cpu_sys_seconds,send_cpu_us_per_mb,recv_cpu_us_per_mb,"
        "cpu_us_per_mb,send_syscalls_per_mb,recv_syscalls_per_mb,"
        "machine_busy_pct,machine_busy_run_pct,machine_steal_pct,"
        "machine_steal_run_pct,"
        "retransmits,ratio_memcpy,"
        "ratio_pipe,ratio_iperf3,ratio_iperf3_l1m,ratio_copy,ratio_device,best_in_row,"
        "key,name").split(",")
def check(cond, what):
    if not cond:
        sys.exit("CSV: " + what)
check(head == want, "header %s" % head)
check(len(body) == len(objs), "%d rows for %d objects" % (len(body), len(objs)))
commas = totals = 0
for n, (r, o) in enumerate(zip(body, objs), 2):
    check(len(r) == len(head), "line %d has %d fields" % (n, len(r)))
    d = dict(zip(head, r))
    check(d["kind"] == o["kind"], "line %d kind" % n)
    if o["kind"] == "cell":
        for k in ("table", "src", "sink", "send", "recv", "status"):
            check(d[k] == o[k], "line %d %s: %r != %r" % (n, k, d[k], o[k]))
        check(d["reason"] == (o["reason"] or ""), "line %d reason: %r != %r"
              % (n, d["reason"], o["reason"]))
        check(int(d["buffer_bytes"]) == o["buffer_bytes"], "line %d buffer" % n)
        check(int(d["streams"]) == o["streams"], "line %d streams" % n)
        check(d["key"] == "" and d["name"] == "", "line %d: a cell with a key" % n)
        if o["status"] == "ok":
            m = o["mb_per_s"]["median"]
            check(abs(float(d["mb_per_s"]) - m) <= 1e-5 * m, "line %d MB/s" % n)
        else:
            check(d["mb_per_s"] == "", "line %d: MB/s without a run" % n)
        if "total_mb_per_s" in o:
            t = o["total_mb_per_s"]
            for k in ("median", "min", "max"):
                c = "total_mb_per_s" + ("" if k == "median" else "_" + k)
                check(d[c] != "" and abs(float(d[c]) - t[k]) <= 1e-5 * t[k],
                      "line %d %s: %r != %r" % (n, c, d[c], t[k]))
            totals += 1
        else:
            check(d["total_mb_per_s"] == "", "line %d: a total without one" % n)
    else:
        # Each JSON field in the column of its name.
        check(d["table"] == "", "line %d: a reference with a table" % n)
        check(d["key"] == o["key"], "line %d reference key" % n)
        check(d["name"] == o["name"], "line %d reference name" % n)
        check(d["reason"] == (o["reason"] or ""), "line %d reference reason: %r != %r"
              % (n, d["reason"], o["reason"]))
        check(d["status"] == ("ok" if o["ok"] else "not measured"),
              "line %d reference status" % n)
    commas += "," in d["reason"]
check(commas > 0, "no reason with a comma: quoting was not exercised")
check(totals > 0, "no cell with a total MB/s")
print("ok - CSV: %d columns on %d rows, %d fields with commas kept"
      % (len(head), len(body), commas))
PY

[ -s "$P" ] || fail "empty PNG"
[ "$(head -c 8 "$P" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "$P is not a PNG"
# IHDR: width and height, big-endian, at bytes 16 and 20. Four tables of
# the quick set, as grids of 124 x 52 pixel cells with the header above.
w=$(od -An -tu1 -j 16 -N 4 "$P" | awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')
h=$(od -An -tu1 -j 20 -N 4 "$P" | awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')
[ "$w" -ge 1180 ] && [ "$w" -le 3200 ] && [ "$h" -ge 900 ] && [ "$h" -le 3200 ] ||
	fail "PNG is $w x $h pixels"
bytes=$(stat -c %s "$P")
[ "$bytes" -ge 40000 ] && [ "$bytes" -le 4000000 ] || fail "PNG of $bytes bytes"
case "$OUT" in *gnuplot*) fail "gnuplot said: $(echo "$OUT" | grep gnuplot)" ;; esac
ok "PNG chart, $w x $h pixels, $bytes bytes, no word from gnuplot"

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
grep -q gnuplot "$T/o.err" && fail "gnuplot said: $(grep gnuplot "$T/o.err")"
# The one cell's figure and its table's title are drawn as text.
grep -q '>zero -> null | 32Mi per run' "$S" || fail "no table title in $S"
grep -q 'µs/MB<' "$S" || fail "no CPU per MB in $S"
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
