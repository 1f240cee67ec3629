#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package: dpkg-buildpackage -b on a copy of the tree (the tree
# itself gets no build products) builds a .deb whose files, version and
# library dependencies are right, whose check step ran the quick tests (and
# with nocheck did not), and on which lintian reports no error.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
command -v dpkg-buildpackage >/dev/null ||
	skip "dpkg-buildpackage is missing (apt-get install dpkg-dev, or make deps)"
[ -f "$root/debian/control" ] || fail "debian/control is missing"
version=$(cat "$root/VERSION")
arch=$(dpkg --print-architecture)

# A copy of the tree: git's files (tracked and new) when this is a git
# work tree, else everything but the build products.
src="$T/src/dnd-$version"
mkdir -p "$src"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$root" && git ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf -) | tar -C "$src" -xf - ||
		fail "cannot copy the tree"
else
	cp -a "$root/." "$src/" || fail "cannot copy the tree"
	rm -rf "$src"/build* "$src/dnd"
fi
(cd "$src" && dpkg-checkbuilddeps) >"$T/bdeps.log" 2>&1 ||
	skip "build dependencies missing ($(tail -n1 "$T/bdeps.log")); make deps installs them"
before=$(ls -A "$root/debian")

# build LOG DEB_BUILD_OPTIONS [ARG]: dpkg-buildpackage -b in the copy.
build() {
	(cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u CC -u CFLAGS \
		-u CPPFLAGS -u LDFLAGS DEB_BUILD_OPTIONS="$2" \
		dpkg-buildpackage -us -uc -b ${3:+"$3"}) >"$1" 2>&1 ||
		fail "dpkg-buildpackage${2:+ with $2} failed: $(tail -n 30 "$1")"
}

# dh_auto_test runs the unit programs and a loopback smoke.
build "$T/build.log" ""
grep -q "^tests: [1-9][0-9]* passed, 0 failed" "$T/build.log" ||
	fail "dh_auto_test ran no unit programs: $(grep -A5 dh_auto_test "$T/build.log")"
grep -q "^smoke: .*byte-exact" "$T/build.log" ||
	fail "dh_auto_test ran no smoke transfer"
deb="$T/src/dnd_${version}_$arch.deb"
[ -f "$deb" ] || fail "no $deb: $(ls "$T/src")"
ok "dpkg-buildpackage -b builds $(basename "$deb"), its check step tested"

# With nocheck they do not run. The same build tree (-nc), to keep it short.
rm -f "$deb"
build "$T/nocheck.log" nocheck -nc
grep -q "^smoke:\|^tests:" "$T/nocheck.log" && fail "nocheck still ran the tests"
[ -f "$deb" ] || fail "no $deb with nocheck: $(ls "$T/src")"
ok "dpkg-buildpackage -b with DEB_BUILD_OPTIONS=nocheck"

[ "$(ls -A "$root/debian")" = "$before" ] ||
	fail "the build left products in the source tree's debian/"

# --- what is in it -----------------------------------------------------------
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] ||
	fail "the package's version is $(dpkg-deb -f "$deb" Version), VERSION says $version"
deps=$(dpkg-deb -f "$deb" Depends)
for l in libxxhash0 liburing2; do
	case "$deps" in *"$l "*) ;; *) fail "Depends lacks $l: $deps" ;; esac
done
dpkg -x "$deb" "$T/root" || fail "dpkg -x failed"
got=$(cd "$T/root" && find . ! -type d | sed 's|^\.||' | sort)
want=$(
	echo /usr/bin/dnd
	for f in "$root"/man/*.1; do echo "/usr/share/man/man1/${f##*/}.gz"; done
	echo /usr/share/bash-completion/completions/dnd
	echo /usr/share/doc/dnd/README.md.gz
	echo /usr/share/doc/dnd/changelog.gz
	echo /usr/share/doc/dnd/copyright
	# dh_compress: docs over 4 KiB are compressed, json.md never.
	for f in "$root"/docs/*.md; do
		[ -f "$f" ] || continue
		z=; [ "$(stat -c %s "$f")" -gt 4096 ] && [ "${f##*/}" != json.md ] && z=.gz
		echo "/usr/share/doc/dnd/${f##*/}$z"
	done
	# The JSON schemas beside json.md, uncompressed: validators read them.
	for f in "$root"/docs/schema/*.json; do
		echo "/usr/share/doc/dnd/schema/${f##*/}"
	done
	[ -f "$root/contrib/dnd-serve.service" ] &&
		echo /lib/systemd/system/dnd-serve.service
)
want=$(sort <<<"$want")
[ "$got" = "$want" ] ||
	fail "the package's files differ:$(diff <(echo "$want") <(echo "$got"))"
for f in "$root"/man/*.1; do
	zcat "$T/root/usr/share/man/man1/${f##*/}.gz" | cmp -s - "$f" ||
		fail "the packaged ${f##*/} differs from man/${f##*/}"
done
cmp -s "$root/completion/dnd" "$T/root/usr/share/bash-completion/completions/dnd" ||
	fail "the packaged completion differs from completion/dnd"
for f in "$root"/docs/json.md "$root"/docs/schema/*.json; do
	cmp -s "$f" "$T/root/usr/share/doc/dnd/${f#"$root/docs/"}" ||
		fail "the packaged ${f#"$root/"} differs from the tree's"
done
"$T/root/usr/bin/dnd" --help >/dev/null || fail "the packaged dnd does not run"
ok "the package holds $(wc -l <<<"$got") files: program, man pages, completion, docs, json.md and its schemas"

# --- lintian -----------------------------------------------------------------
if command -v lintian >/dev/null; then
	lintian --fail-on error "$T/src/dnd_${version}_$arch.changes" \
		>"$T/lintian.log" 2>&1 ||
		fail "lintian reports errors: $(grep -v 'root privileges' "$T/lintian.log")"
	n=$(grep -c '^W:' "$T/lintian.log")
	[ "$n" -eq 0 ] || echo "note: lintian warns: $(grep '^W:' "$T/lintian.log")"
	ok "lintian: no errors, $n warnings"
else
	echo "note: lintian is missing (make deps installs it); not run"
fi
