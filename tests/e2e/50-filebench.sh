#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd filebench: every path writes exactly --size bytes of the expected
# content, fresh and rewriting; a path that cannot run says why.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"
need_py3 csv
D="$T/fb"
mkdir "$D"

size=$((3 * 1048576 + 5))
expect_exit 0 "$DND" filebench --size "$size" --bs 64Ki --dir "$D" --keep --json \
	--paths write,vmsplice,vmsplice-gift,mmap,uring
echo "$OUT" >"$T/fresh.json"
for p in write vmsplice vmsplice-gift mmap; do
	jq -se --arg p "$p" 'map(select(.path == $p))[0] | .ok and .content == "ok" and
		.bytes == '"$size"' and .mib_per_s > 0 and .fsync_seconds >= 0 and
		(.mb_per_s / .mib_per_s - 1.048576 | fabs) < 0.001' \
		"$T/fresh.json" >/dev/null || fail "$p: $(cat "$T/fresh.json")"
	f=$(ls "$D"/.dnd-filebench."$p".*)
	[ "$(stat -c %s "$f")" = "$size" ] || fail "$p wrote $(stat -c %s "$f") bytes"
	# independent of dnd's own check: every path leaves the same bytes
	cmp -s "$f" "$(ls "$D"/.dnd-filebench.write.*)" || fail "$p content differs from write's"
done
# block 1 starts with its index, little-endian
[ "$(od -An -tu8 -j 65536 -N 8 "$(ls "$D"/.dnd-filebench.mmap.*)" | tr -d ' ')" = 1 ] ||
	fail "block stamp missing"
# uring either ran correctly or said why it could not
jq -se 'map(select(.path == "uring"))[0] | (.ok and .content == "ok") or
	(.ok == false and (.error | length > 10))' "$T/fresh.json" >/dev/null ||
	fail "uring: $(grep uring "$T/fresh.json")"
rm -f "$D"/.dnd-filebench.*
ok "fresh files: exact size and content for every path"

expect_exit 0 "$DND" filebench --rewrite --repeat 2 --size "$size" --dir "$D" --csv \
	--paths write,vmsplice,mmap
echo "$OUT" >"$T/rw.csv"
$PY3 - "$T/rw.csv" "$size" <<'PY' || fail "rewrite CSV: $OUT"
import csv, sys
with open(sys.argv[1], newline="") as f:
    rows = list(csv.DictReader(f, strict=True))
assert len(rows) == 6, "%d rows, want 3 paths x 2 runs" % len(rows)
for r in rows:
    assert len(r) == 14 and None not in r, "row width: %s" % r
    assert r["mode"] == "rewrite" and r["content"] == "ok" and not r["error"], r
    assert int(r["bytes"]) == int(sys.argv[2]), r
    mb, mib = float(r["mb_per_s"]), float(r["mib_per_s"])
    assert mb > 0 and abs(mb / mib - 1.048576) < 1e-3, "MB/s vs MiB/s: %s" % r
PY
no_leftovers "$D"
ok "rewriting an existing file leaves the new content"

# O_DIRECT: aligned works; a block size the device refuses is reported.
expect_exit 0 "$DND" filebench --paths direct --size 4Mi --bs 64Ki --dir "$D"
expect_out " ok"
expect_exit 1 "$DND" filebench --paths direct --size 4000 --bs 1000 --dir "$D"
expect_out "direct         O_DIRECT write refused (EINVAL): --bs and --size must be multiples of the device's logical block size"
no_leftovers "$D"
ok "O_DIRECT reported, not crashed"

expect_exit 2 "$DND" filebench --paths turbo
expect_out "dnd: --paths: unknown path 'turbo'"
expect_exit 2 "$DND" filebench --bs 0
expect_out "dnd: --bs '0': give a size from 1 to 1Gi"
expect_exit 2 "$DND" filebench --dir "$T/nope"
expect_out "dnd: --dir $T/nope: not a writable directory"
ok "bad filebench options"

# Too little room in --dir: refused before anything is written, with what
# it has and what the runs need (the default --size is 8 GiB a path).
expect_exit 2 "$DND" filebench --size 1000Ti --dir "$D"
grep -qE "^dnd: --dir $D has [0-9]+\.[0-9] [GM]iB free; the runs need 1000Ti \(--size 1000Ti\): give a smaller --size or another --dir$" <<<"$OUT" ||
	fail "no room named: $OUT"
expect_exit 2 "$DND" filebench --size 600Ti --keep --paths write,mmap --dir "$D"
expect_out "the runs need 1200Ti (--size 600Ti for each path, kept with --keep): give a smaller --size or another --dir"
no_leftovers "$D"
ok "too little free space: refused up front, exit 2, the need named"
