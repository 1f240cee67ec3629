#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A machine without xxhash.h: `make` stops before the first compile and
# names the Debian packages and `make deps`, not the compiler's "No such
# file". The header is hidden from a compiler wrapper, never uninstalled.
# And scripts/deps.sh asks for debian/control's Build-Depends.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CC:-cc}
command -v "$cc" >/dev/null || skip "no C compiler ($cc)"
command -v make >/dev/null || skip "make is missing"
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$root" "$@"; }

# The compiler's own include path; /usr/include is the one to mirror.
mapfile -t dirs < <(echo | "$cc" -xc -E -v - 2>&1 |
	sed -n '/^#include <...> search starts here:/,/^End of search list/p' |
	sed '1d;$d; s/^ *//')
printf '%s\n' "${dirs[@]}" | grep -qx /usr/include ||
	skip "$cc does not search /usr/include (${dirs[*]})"

# wrapper NAME HIDE...: a compiler that sees /usr/include without HIDE.
wrapper() {
	local name=$1 d args=""
	shift
	mkdir -p "$T/$name-inc"
	ln -s /usr/include/* "$T/$name-inc/"
	for d in "$@"; do rm -f "$T/$name-inc/$d"; done
	for d in "${dirs[@]}"; do
		[ "$d" = /usr/include ] && d=$T/$name-inc
		args="$args -isystem $d"
	done
	printf '#!/bin/sh\nexec %s -nostdinc%s "$@"\n' "$cc" "$args" >"$T/$name"
	chmod +x "$T/$name"
}

# The same mirror with nothing hidden passes: the wrapper itself is sound.
wrapper cc-all
mk check-headers CC="$T/cc-all" BUILD="$T/b-all" >"$T/all.log" 2>&1 ||
	fail "check-headers fails with every header there: $(cat "$T/all.log")"

[ -e /usr/include/xxhash.h ] || echo "note: xxhash.h is not installed here"
wrapper cc-noxx xxhash.h xxh3.h
expect_exit 2 mk CC="$T/cc-noxx" BUILD="$T/b-noxx"
for w in "xxhash.h is missing (Debian package libxxhash-dev)" \
	"apt-get install libxxhash-dev libsodium-dev libmicrohttpd-dev libssl-dev libbpf-dev clang bpftool pkg-config liburing-dev" \
	"liburing-dev is optional" "make deps"; do
	expect_out "$w"
done
case "$OUT" in *"No such file"* | *sodium.h*)
	fail "the compiler ran anyway, or a header there was called missing: $OUT" ;;
esac
objs=$(find "$T/b-noxx" -name '*.o' 2>/dev/null)
[ -z "$objs" ] || fail "objects were built before the check: $objs"
ok "without xxhash.h, make names the packages and make deps, compiles nothing"

wrapper cc-nosodium sodium.h sodium
expect_exit 2 mk CC="$T/cc-nosodium" BUILD="$T/b-nosodium"
expect_out "sodium.h is missing (Debian package libsodium-dev)"
case "$OUT" in *xxhash.h*) fail "xxhash.h called missing: $OUT" ;; esac
ok "without sodium.h, make names libsodium-dev"

wrapper cc-nomhd microhttpd.h microhttpd
expect_exit 2 mk CC="$T/cc-nomhd" BUILD="$T/b-nomhd"
expect_out "microhttpd.h is missing (Debian package libmicrohttpd-dev)"
ok "without microhttpd.h, make names libmicrohttpd-dev"

wrapper cc-nossl openssl
expect_exit 2 mk CC="$T/cc-nossl" BUILD="$T/b-nossl"
expect_out "openssl/ssl.h is missing (Debian package libssl-dev)"
ok "without openssl/ssl.h, make names libssl-dev"

# deps.sh reads Build-Depends: a copy whose control wants a package that
# does not exist asks for it (as a user, so nothing is installed).
id nobody >/dev/null 2>&1 || skip "no user 'nobody' to run deps.sh as"
command -v setpriv >/dev/null || skip "setpriv is missing (util-linux)"
mkdir -p "$T/tree/scripts" "$T/tree/debian"
cp "$root/scripts/deps.sh" "$T/tree/scripts/"
sed 's/^Build-Depends: /Build-Depends: dnd-test-no-such-package (>= 1) [linux-any] | other,\n /' \
	"$root/debian/control" >"$T/tree/debian/control"
chmod -R a+rX "$T"
expect_exit 1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	sh "$T/tree/scripts/deps.sh"
expect_out "missing Debian packages: dnd-test-no-such-package"
expect_out "sudo apt-get install"
case "$OUT" in *other* | *"(>="* | *linux-any* | *debhelper-compat*)
	fail "deps.sh did not reduce Build-Depends to package names: $OUT" ;;
esac
ok "deps.sh asks for debian/control's Build-Depends"

# deps.sh bench asks for what make bench needs and no more: with nothing
# installed (a dpkg-query that knows no package), the list it asks for.
mkdir -p "$T/nodpkg"
printf '#!/bin/sh\nexit 0\n' >"$T/nodpkg/dpkg-query"
chmod -R a+rX "$T"; chmod a+x "$T/nodpkg/dpkg-query"
cp "$root/debian/control" "$T/tree/debian/control"
asks() {
	expect_exit 1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env PATH="$T/nodpkg:$PATH" sh "$T/tree/scripts/deps.sh" "$@"
	echo "$OUT" | sed -n 's/^dnd: missing Debian packages: \(.*\); run .*/\1/p' |
		tr ' ' '\n' | sort | tr '\n' ' '
}
want="bash-completion bpftool clang gcc iperf3 iproute2 libbpf-dev libmicrohttpd-dev libsodium-dev libssl-dev liburing-dev libxxhash-dev make pkg-config "
got=$(asks bench)
[ "$got" = "$want" ] || fail "deps.sh bench asks for '$got', not '$want'"
got=$(asks)
for p in lintian mandoc debhelper iperf3 jq python3-jsonschema; do
	case " $got" in *" $p "*) ;; *) fail "deps.sh (make test) does not ask for $p: $got" ;; esac
done
ok "deps.sh bench asks only for the compilers (gcc, clang and bpftool for the relay's BPF program), the libraries, iperf3 and iproute2"
