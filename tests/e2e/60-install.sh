#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make install puts exactly the program, man pages, completion, docs (and a
# systemd unit when contrib/ has one) under DESTDIR/PREFIX, with the right
# modes; make uninstall takes every file back out.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
command -v make >/dev/null || skip "make is missing"
# Our own make, not the one running the suite (its jobserver is not ours).
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$root" "$@"; }

# expected PREFIX COMPLETIONSDIR UNITDIR: the files install should write.
expected() {
	local p=$1 f
	echo "$p/bin/dnd"
	for f in "$root"/man/*.1; do echo "$p/share/man/man1/${f##*/}"; done
	echo "$2/dnd"
	for f in README.md LICENSE "$root"/docs/*.md; do
		[ -f "$f" ] || [ -f "$root/$f" ] || continue
		echo "$p/share/doc/dnd/${f##*/}"
	done
	for f in "$root"/docs/schema/*.json; do
		echo "$p/share/doc/dnd/schema/${f##*/}"
	done
	[ -n "$3" ] && echo "$3/dnd-serve.service"
}

# files DIR: every file and link under DIR, relative, sorted.
files() { (cd "$1" && find . ! -type d | sed 's|^\.||' | sort); }

# check NAME DESTDIR PREFIX COMPLETIONSDIR UNITDIR [MAKE ARGS...]
check() {
	local name=$1 d=$2 p=$3 cdir=$4 udir=$5 f got want
	shift 5
	mk install DESTDIR="$d" PREFIX="$p" "$@" >"$T/install.log" 2>&1 ||
		fail "$name: make install failed: $(cat "$T/install.log")"
	got=$(files "$d")
	want=$(expected "$p" "$cdir" "$udir" | sort)
	[ "$got" = "$want" ] ||
		fail "$name: installed files differ:$(diff <(echo "$want") <(echo "$got"))"
	while read -r f; do
		case $f in
		*/bin/dnd) [ "$(stat -c %a "$d$f")" = 755 ] ||
			fail "$name: $f is mode $(stat -c %a "$d$f"), not 755" ;;
		*) [ "$(stat -c %a "$d$f")" = 644 ] ||
			fail "$name: $f is mode $(stat -c %a "$d$f"), not 644" ;;
		esac
	done <<<"$got"
	"$d$p/bin/dnd" --help >/dev/null ||
		fail "$name: the installed dnd does not run"
	cmp -s "$root/completion/dnd" "$d$cdir/dnd" ||
		fail "$name: the installed completion differs from completion/dnd"
	cmp -s "$root/man/dnd.1" "$d$p/share/man/man1/dnd.1" ||
		fail "$name: the installed dnd.1 differs from man/dnd.1"

	mk uninstall DESTDIR="$d" PREFIX="$p" "$@" >"$T/uninstall.log" 2>&1 ||
		fail "$name: make uninstall failed: $(cat "$T/uninstall.log")"
	got=$(files "$d")
	[ -z "$got" ] || fail "$name: uninstall left: $got"
	[ -d "$d$p/share/doc/dnd" ] &&
		fail "$name: uninstall left the directory $p/share/doc/dnd"
	ok "$name: install writes exactly $(wc -l <<<"$want") files; uninstall removes them"
}

ls "$root"/man/dnd.1 "$root"/man/dnd-send.1 >/dev/null 2>&1 ||
	fail "man/ lacks dnd.1 or dnd-send.1"
unit=
[ -f "$root/contrib/dnd-serve.service" ] && unit=/usr/local/lib/systemd/system

# The default prefix keeps everything under /usr/local, completion included.
check "PREFIX=/usr/local" "$T/a" /usr/local \
	/usr/local/share/bash-completion/completions "$unit"

# PREFIX=/usr: the places pkg-config names, as a distribution package has.
cdir=$(pkg-config --variable=completionsdir bash-completion 2>/dev/null)
: "${cdir:=/usr/share/bash-completion/completions}"
udir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)
: "${udir:=/usr/lib/systemd/system}"
[ -f "$root/contrib/dnd-serve.service" ] || udir=
check "PREFIX=/usr" "$T/b" /usr "$cdir" "$udir"

# A systemd unit is installed, and uninstalled, when there is one.
mkdir -p "$T/contrib"
printf '[Unit]\nDescription=test unit\n' >"$T/contrib/dnd-serve.service"
check "with a unit" "$T/c" /opt/dnd /opt/dnd/share/bash-completion/completions \
	/opt/dnd/lib/systemd/system UNIT="$T/contrib/dnd-serve.service"
