#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# docs/json.md's unit rule in the text tables too: throughput first in
# MB/s (10^6 bytes), other units beside it and consistent with it:
# filebench's MiB/s, bench relay's Gbit/s. (The transfer's headline is
# 02-streams.sh's, bench's CPU columns 20-bench.sh's.)
. "$(dirname "$0")/lib.sh"
need_py3

# rows FILE HEADER-REGEX ROW-REGEX FACTOR: the header is there, at least
# one row is, and in each row the second figure is the first times FACTOR
# (within the rounding of the printed digits).
rows() {
	"$PY3" - "$@" <<'PY'
import re, sys
path, head, row, factor = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
text = open(path).read()
if not re.search(head, text, re.M):
    sys.exit("no header %r in:\n%s" % (head, text))
n = 0
for m in re.finditer(row, text, re.M):
    a, b = float(m.group(1)), float(m.group(2))
    if abs(a * factor - b) > 0.06 * max(1, factor) + 1e-3 * b:
        sys.exit("%s beside %s is not x%g: %s" % (b, a, factor, m.group(0)))
    n += 1
if not n:
    sys.exit("no row matching %r in:\n%s" % (row, text))
PY
}

mkdir "$T/fb"
expect_exit 0 "$DND" filebench --paths write,vmsplice --size 1Mi --bs 64Ki --dir "$T/fb"
echo "$OUT" >"$T/fb.txt"
rows "$T/fb.txt" '^path +MB/s +\[min\.\.max\] +MiB/s +usr%' \
	'^(?:write|vmsplice) +([0-9.]+) \[ *[0-9.]+\.\. *[0-9.]+\] +([0-9.]+) ' \
	"$(awk 'BEGIN { print 1e6 / 1048576 }')" || fail "filebench table: $OUT"
ok "filebench: MB/s first, MiB/s beside it"

expect_exit 0 "$DND" bench relay --flows 1 --bytes 4Mi --modes direct,splice
echo "$OUT" >"$T/br.txt"
rows "$T/br.txt" '^ +flows +path +MB/s median \[min\.\.max\] +Gbit/s ' \
	'^ +1 +(?:direct|splice) +([0-9]+) \[ *[0-9]+\.\. *[0-9]+\] +([0-9.]+) ' \
	0.008 || fail "bench relay table: $OUT"
ok "bench relay: MB/s first, Gbit/s beside it"
