#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages: every command has one and every page a command; each
# renders at 80 columns without a warning from man, groff or mandoc; each
# has the sections a reader looks for; and each names every option its
# command's --help prints, so the pages cannot fall behind the program.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
man="$root/man"
command -v groff >/dev/null || skip "groff is missing (apt-get install groff-base)"

# --- one page per command, one command per page --------------------------
cmds=$("$DND" help | awk '/^  [a-z][a-z-]* +[^ ]/ { print $1 }')
[ -n "$cmds" ] || fail "'dnd help' lists no commands: $("$DND" help 2>&1)"
pages="dnd"
for c in $cmds; do
	case $c in help | version) continue ;; esac
	pages="$pages dnd-$c"
	[ "$c" = bench ] && pages="$pages dnd-bench-relay"
done
for p in $pages; do
	[ -f "$man/$p.1" ] || fail "no man page for $p: write man/$p.1"
done
for f in "$man"/*.1; do
	p=$(basename "$f" .1)
	case " $pages " in *" $p "*) ;;
	*) fail "man/$p.1 documents no command that 'dnd help' lists" ;;
	esac
done
ok "a page for each command: $pages"

# --- rendering ------------------------------------------------------------
for p in $pages; do
	f="$man/$p.1"
	err=$(groff -ww -z -man "$f" 2>&1)
	[ -z "$err" ] || fail "groff warns on $p.1: $err"
	if command -v man >/dev/null; then
		out=$(MANWIDTH=80 man --warnings -l "$f" \
			2>"$T/man.err")
		[ -s "$T/man.err" ] && fail "man warns on $p.1: $(cat "$T/man.err")"
		w=$(LC_ALL=C.UTF-8 wc -L <<<"$out")
		[ "$w" -le 80 ] || fail "$p.1 renders $w columns wide, not 80"
	fi
	if command -v mandoc >/dev/null; then
		err=$(mandoc -T lint -W warning "$f" 2>&1)
		[ -z "$err" ] || fail "mandoc -T lint warns on $p.1: $err"
	fi
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES \
		"SEE ALSO"; do
		grep -q "^\.SH \"\?$s\"\?$" "$f" || fail "$p.1 has no $s section"
	done
	grep -q 'json\.md' "$f" || fail "$p.1 does not say where json.md is"
	grep -q "^\.TH $(tr '[:lower:]' '[:upper:]' <<<"$p" | sed 's/-/\\\\-/g') 1 " "$f" ||
		fail "$p.1: .TH does not name $p in section 1"
done
command -v man >/dev/null || echo "note: man is missing; rendered with groff only"
command -v mandoc >/dev/null || echo "note: mandoc is missing; no mandoc lint"
ok "every page renders without warnings and has its sections"

# --- dnd(1) credits the threads dnd grew from -----------------------------
for w in "Jim Schutt" "Jens Axboe" "David Miller" "Willy Tarreau" \
	"Eric Dumazet" "Ben Mansell" "Ofer Heifetz" "Changli Gao" \
	"linux-kernel, November 2006" "netdev, January 2009" \
	"netdev, July 2010"; do
	grep -q "$w" "$man/dnd.1" || fail "dnd.1 does not credit '$w'"
done
ok "dnd.1 credits the three threads"

# --- every option --help prints is in the page ----------------------------
# text PAGE: the page's words with roff escapes for fonts and dashes undone.
text() { sed -e 's/\\f[BIRP]//g; s/\\-/-/g; s/\\&//g; s/\\(->/->/g' "$1"; }
# opts CMD...: every option-looking word in `dnd CMD --help`.
opts() {
	"$DND" "$@" --help 2>&1 |
		grep -oE "(^|[][[:space:](,|'\"])--?[A-Za-z][A-Za-z0-9-]*" |
		sed -E 's/^[^-]+//' | sort -u
}
check_opts() { # PAGE CMD...
	local page=$1 o n=0 missing=
	shift
	text "$man/$page.1" >"$T/page.txt"
	for o in $(opts "$@"); do
		n=$((n + 1))
		grep -qE -- "(^|[^A-Za-z0-9-])$o([^A-Za-z0-9-]|$)" "$T/page.txt" ||
			missing="$missing $o"
	done
	[ $n -ge 2 ] || fail "'dnd ${*:+$* }--help' shows no options: $("$DND" "$@" --help 2>&1)"
	[ -z "$missing" ] || fail "$page.1 lacks options that 'dnd ${*:+$* }--help' prints:$missing"
	echo "  $page.1: all $n options of 'dnd ${*:+$* }--help'"
}
check_opts dnd
for c in $cmds; do
	case $c in help | version) continue ;; esac
	check_opts "dnd-$c" "$c"
done
check_opts dnd-bench-relay bench relay
ok "every page names every option its --help prints"
