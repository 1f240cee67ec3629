#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The build notices changed flags: CFLAGS, SANITIZE, or liburing appearing
# or going away (pkg-config) rebuild the objects of a tree built before,
# through $(BUILD)/flags.txt, and unchanged flags rebuild nothing.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
command -v "${CC:-cc}" >/dev/null || skip "no C compiler"
B="$T/build"
obj="$B/src/core/log.o"

# Not the flags of a make that runs this suite (make asan-check).
unset MAKEFLAGS MFLAGS MAKELEVEL

# mk ARGS...: builds one object into the scratch tree with the default
# flags, then ARGS; output in $T/mk.log.
mk() {
	touch "$T/mark"
	timeout 120 make --no-print-directory -C "$root" BUILD="$B" \
		CFLAGS="-O2 -g" SANITIZE= "$@" "$obj" >"$T/mk.log" 2>&1 ||
		fail "make $*: $(cat "$T/mk.log")"
}
rebuilt() { [ "$obj" -nt "$T/mark" ]; }

mk
[ -f "$B/flags.txt" ] || fail "no $B/flags.txt"
grep -q "CFLAGS=-O2 -g " "$B/flags.txt" || fail "flags: $(cat "$B/flags.txt")"
mk
rebuilt && fail "unchanged flags rebuilt $obj"
ok "unchanged flags: nothing rebuilt"

mk CFLAGS=-O1
rebuilt || fail "CFLAGS=-O1 did not rebuild $obj"
grep -q "CFLAGS=-O1 " "$B/flags.txt" || fail "flags: $(cat "$B/flags.txt")"
mk CFLAGS=-O1
rebuilt && fail "CFLAGS=-O1 twice rebuilt $obj"
ok "CFLAGS change rebuilds"

mk SANITIZE=undefined
rebuilt || fail "SANITIZE=undefined did not rebuild $obj"
mk
rebuilt || fail "dropping SANITIZE did not rebuild $obj"
ok "SANITIZE change rebuilds"

# liburing going away: a pkg-config that knows no packages.
if pkg-config --exists liburing 2>/dev/null; then
	mkdir "$T/bin"
	printf '#!/bin/sh\nexit 1\n' >"$T/bin/pkg-config"
	chmod +x "$T/bin/pkg-config"
	PATH="$T/bin:$PATH" mk
	rebuilt || fail "liburing gone, yet $obj was kept"
	grep -q DND_HAVE_LIBURING "$B/flags.txt" &&
		fail "flags still say liburing: $(cat "$B/flags.txt")"
	mk
	rebuilt || fail "liburing back, yet $obj was kept"
	grep -q DND_HAVE_LIBURING "$B/flags.txt" ||
		fail "flags lack liburing: $(cat "$B/flags.txt")"
	ok "liburing appearing or going away rebuilds"
else
	echo "note: no liburing here; its toggle is not checked"
fi
