#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The command line's conventions: a mistyped command is never taken for a
# file to receive into, no arguments is a usage error, --version and help
# work for every command, each side's help lists only its own options, and
# the relay knobs mean the same in relay and bench relay.
. "$(dirname "$0")/lib.sh"

W=$T/w
mkdir "$W"
cd "$W" || fail "cd $W"

# A typo: the exact message, exit 2, no file, and no receiver listening.
next_port
"$DND" bnech -p "$PORT" >"$T/typo.out" 2>"$T/typo.err" &
tpid=$!
_pids+=("$tpid")
for _ in $(seq 1 50); do
	kill -0 "$tpid" 2>/dev/null || break
	ss -Htln "sport = :$PORT" 2>/dev/null | grep -q . &&
		fail "'dnd bnech' listens on port $PORT"
	sleep 0.1
done
kill -0 "$tpid" 2>/dev/null && fail "'dnd bnech' still runs after 5 s"
wait "$tpid"
rc=$?
[ $rc = 2 ] || fail "'dnd bnech' exited $rc, wanted 2"
want="dnd: unknown command 'bnech'; did you mean 'bench'?
dnd: to receive into a file named 'bnech', use: dnd recv bnech"
[ "$(cat "$T/typo.err")" = "$want" ] || fail "typo message: $(cat "$T/typo.err")"
[ -s "$T/typo.out" ] && fail "typo printed on stdout: $(cat "$T/typo.out")"
no_leftovers "$W"
expect_exit 2 "$DND" help sned
[ "$OUT" = "dnd: unknown command 'sned'; did you mean 'send'?" ] ||
	fail "help of a typo: $OUT"
# A word that names a file is the 2006 program's form (here: refused, it exists).
echo keep >"$W/sned"
expect_exit 2 "$DND" sned
expect_out "dnd: sned exists; use -t to replace it"
rm "$W/sned"
ok "a mistyped command: exit 2, the fix named, no file, nothing listening"

# No arguments: usage on stderr only, exit 2.
"$DND" >"$T/none.out" 2>"$T/none.err"
rc=$?
[ $rc = 2 ] || fail "'dnd' exited $rc, wanted 2"
[ -s "$T/none.out" ] && fail "'dnd' printed on stdout: $(cat "$T/none.out")"
grep -q "^usage: dnd COMMAND" "$T/none.err" &&
	grep -q "^  bench relay " "$T/none.err" || fail "usage: $(cat "$T/none.err")"
ok "no arguments: usage on stderr, exit 2"

# The version, three ways and after any command, all the same.
expect_exit 0 "$DND" --version
v=$OUT
case "$v" in
"dnd $(cat "$(dirname "$0")/../../VERSION")"*"
kernel $(uname -r)
features: "*) ;;
*) fail "--version: $v" ;;
esac
for c in version -V "send --version" "recv -V" "bench relay --version" \
	"relay --version" "probe --version"; do
	# shellcheck disable=SC2086
	expect_exit 0 "$DND" $c
	[ "$OUT" = "$v" ] || fail "dnd $c: $OUT"
done
ok "--version, -V, version and CMD --version"

# help lists every command; help CMD is exactly CMD --help.
expect_exit 0 "$DND" help
for c in send recv bench "bench relay" filebench probe relay help version; do
	echo "$OUT" | grep -q "^  $c  " || fail "'dnd help' lacks $c: $OUT"
done
for c in send recv bench "bench relay" filebench probe relay version; do
	# shellcheck disable=SC2086
	a=$("$DND" help $c 2>&1) || fail "dnd help $c exited $?"
	# shellcheck disable=SC2086
	b=$("$DND" $c --help 2>&1) || fail "dnd $c --help exited $?"
	[ "$a" = "$b" ] || fail "'dnd help $c' differs from 'dnd $c --help'"
	echo "$b" | grep -q "^usage: dnd $c" || fail "dnd $c --help: $b"
	echo "$b" | grep -qiE "seed|original tool" && fail "dnd $c --help names a seed"
done
"$DND" 2>&1 | grep -qiE "seed|original tool" && fail "dnd's usage names a seed"
# dnd --help: the list of commands first, then the 2006 form's options.
expect_exit 0 "$DND" --help
[ "$(echo "$OUT" | head -1)" = "usage: dnd COMMAND [options]" ] ||
	fail "dnd --help does not open with the commands: $OUT"
for c in send recv bench "bench relay" filebench probe serve relay help version; do
	echo "$OUT" | grep -q "^  $c  " || fail "'dnd --help' lacks $c: $OUT"
done
cmds_at=$(echo "$OUT" | grep -n "^  version  " | cut -d: -f1)
old_at=$(echo "$OUT" | grep -n "^usage: dnd \[-b bsz\]" | cut -d: -f1)
[ -n "$old_at" ] && [ "$old_at" -gt "$cmds_at" ] ||
	fail "dnd --help: the 2006 form is not after the commands: $OUT"
echo "$OUT" | grep -q "The 2006 dnd program's command line" ||
	fail "dnd --help does not name the 2006 form: $OUT"
echo "$OUT" | grep -qiE "seed|original tool" && fail "dnd --help names a seed: $OUT"
ok "help lists every command; help CMD is CMD --help; --help lists them first"

# Each side's help lists only its options.
expect_exit 0 "$DND" send --help
expect_out "--connect-timeout SEC"
for o in "-o, --overwrite" "-t, --replace" "--bind" "--sync"; do
	case "$OUT" in *"$o"*) fail "send --help lists $o" ;; esac
done
expect_exit 0 "$DND" recv --help
expect_out "--bind ADDR"
expect_out "-t, --replace"
for o in "-l, --limit" "--connect-timeout" "--to NAME"; do
	case "$OUT" in *"$o"*) fail "recv --help lists $o" ;; esac
done
expect_out "--from NAME"	# -c HOST --from NAME pulls from dnd serve
expect_exit 0 "$DND" --help
for o in "-o, --overwrite" "--sync" "-l, --limit" "--connect-timeout"; do
	expect_out "$o"
done
ok "send --help and recv --help list only their side's options"

# recv refuses a sender's option, before it listens.
expect_exit 2 "$DND" recv --connect-timeout 5 "$W/x"
expect_out "dnd: unknown option '--connect-timeout' for recv; it is for send"
expect_exit 2 "$DND" send -c 127.0.0.1 --sync stream "$W/x"
expect_out "dnd: unknown option '--sync' for send; it is for recv"
no_leftovers "$W"
ok "an option of the other side: exit 2, named"

# --replace and its old name --truncate both replace an existing file.
random_file "$T/src1" 100000
random_file "$T/src2" 70000
for o in --replace --truncate -t; do
	echo old >"$W/dst"
	xfer "-c 127.0.0.1 $T/src1" "$o $W/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "$o: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src1" "$W/dst" || fail "$o did not replace the file"
	cp "$T/src2" "$T/src1"
	random_file "$T/src2" 70000
done
rm "$W/dst"
ok "--replace, --truncate and -t replace an existing file"

# The relay knobs are one table: bench relay refuses what relay refuses.
# (bounded: a relay that took the value would listen until killed)
expect_exit 2 timeout 10 "$DND" relay -l 127.0.0.1:1 -t 127.0.0.1:1 --pipe-size 1000
r=$(echo "$OUT" | head -n1)
expect_exit 2 timeout 10 "$DND" bench relay --pipe-size 1000 --flows 1 --size 1Mi
b=$(echo "$OUT" | head -n1)
[ "$r" = "dnd: --pipe-size '1000': a pipe holds at least one page (4Ki) and at most 1Gi; 0 keeps the kernel's size" ] ||
	fail "relay --pipe-size 1000: $r"
[ "$b" = "$r" ] || fail "bench relay --pipe-size 1000: $b"
expect_exit 2 "$DND" bench relay --max-conn 5
expect_out "dnd: unknown option '--max-conn' for bench relay; it is for relay"
ok "bench relay --pipe-size 1000 refused like relay's"
