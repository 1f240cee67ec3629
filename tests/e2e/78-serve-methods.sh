#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd serve --methods LIST: a client that asks the server's end for another
# method is refused with the list, nothing lands; the listed ones run.
. "$(dirname "$0")/lib.sh"

d="$T/d"; mkdir "$d"
random_file "$T/src" 500000
next_port
bg "$T/serve.log" "$DND" serve --dir "$d" -p "$PORT" --methods rw,splice --grace 1
spid=$BPID
wait_listen "$PORT"
cli() { timeout 20 "$DND" "$@" -c 127.0.0.1 -p "$PORT"; }

expect_exit 1 cli send --peer-method mmap --to m1 "$T/src"
[ "$(echo "$OUT" | head -1)" = "dnd: server refused: --peer-method mmap is not allowed by this server; it allows rw, splice" ] ||
	fail "push: $OUT"
[ ! -e "$d/m1" ] || fail "a refused push landed"
cp "$T/src" "$d/pullme"
expect_exit 1 cli recv --peer-method sendfile --from pullme "$T/back"
[ "$(echo "$OUT" | head -1)" = "dnd: server refused: --peer-method sendfile is not allowed by this server; it allows rw, splice" ] ||
	fail "pull: $OUT"
[ ! -e "$T/back" ] || fail "a refused pull wrote $T/back"
expect_exit 1 cli send --peer-end null --peer-method null -l 1M /dev/zero
expect_out "dnd: server refused: --peer-method null is not allowed by this server; it allows rw, splice"
wait_log "$T/serve.log" "failed: refused: --peer-method null is not allowed" "the refusal is not logged"
ok "--methods rw,splice: mmap, sendfile and null refused with the list, nothing landed"

if "$DND" probe --require splice >/dev/null 2>&1; then
	expect_exit 0 cli send --peer-method splice --to m2 "$T/src"
	cmp -s "$T/src" "$d/m2" || fail "the splice push differs"
fi
expect_exit 0 cli recv --peer-method rw --from pullme "$T/back"
cmp -s "$T/src" "$T/back" || fail "the rw pull differs"
ok "--methods rw,splice: the listed methods run, byte-exact"
kill -TERM "$spid"; wait "$spid" || fail "serve exited $?"

expect_exit 2 "$DND" serve --dir "$d" --methods rw,bogus
expect_out "dnd: --methods: 'bogus' is not a method; choose from send methods: "
ok "--methods with an unknown name: a usage error"
