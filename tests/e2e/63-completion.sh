#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bash completion (completion/dnd), called as bash calls it: COMP_WORDS and
# COMP_CWORD set, _dnd run, COMPREPLY read. Commands, every option each
# command's --help prints, method names as 'dnd probe' lists them, the
# other value lists as dnd's own errors name them, and files. Once alone,
# once with bash-completion loaded (its _filedir then names the files).
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
comp="$root/completion/dnd"
[ -f "$comp" ] || fail "completion/dnd is missing"

mkdir -p "$T/dir/sub"
: >"$T/dir/file1"
: >"$T/dir/file2"

# words LIST: the words of a space, comma or newline list, sorted, one line.
words() { tr -s ', ' '\n' | grep -v '^$' | sort -u | tr '\n' ' '; }

# Methods as the registry reports them: dnd probe's table, by direction.
probe_methods() { # send|recv|all
	"$DND" probe | awk -v d="$1" '/^methods/ { on = 1; next }
		on && /^$/ { exit }
		on && $2 ~ /^(usable|NO)$/ && (d == "all" || $3 ~ d || $4 ~ d) {
			print $1 }' | words
}
[ -n "$(probe_methods all)" ] || fail "'dnd probe' lists no methods"

# names_in WORDS ARGS...: fails unless the completed WORDS are not empty and
# dnd's own error for ARGS names each of them (the values it accepts there).
names_in() {
	local w msg
	msg=$("$DND" "${@:2}" 2>&1 | head -n1)
	[ -n "$1" ] || fail "nothing completed where dnd says: $msg"
	for w in $1; do
		grep -qE -- "[ ,:;]${w}([ ,;.]|\$)" <<<"$msg" ||
			fail "completion offers '$w'; dnd says: $msg"
	done
}

for mode in alone with-bash-completion; do
	pre=
	if [ $mode = with-bash-completion ]; then
		bc=/usr/share/bash-completion/bash_completion
		[ -f "$bc" ] || { echo "note: bash-completion is not installed; one mode only"; break; }
		pre=". $bc;"
	fi
	cat >"$T/run.sh" <<EOF
$pre
. "$comp"
complete -p dnd | grep -q -- '-F _dnd' || { echo "not registered"; exit 1; }
# c WORD...: completes the last word; prints COMPREPLY sorted, one line.
c() {
	COMP_WORDS=("\$@")
	COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1))
	COMP_LINE="\$*"
	COMP_POINT=\${#COMP_LINE}
	COMPREPLY=()
	_dnd 2>/dev/null
	printf '%s\n' "\${COMPREPLY[@]}" | grep -v '^\$' | sort -u | tr '\n' ' '
}
EOF
	# c2 WORD...: the completion of the words, as one sorted line.
	c2() {
		(cd "$T/dir" && bash --norc --noprofile -c \
			". '$T/run.sh'; c \"\$@\"" c "$DND" "$@") ||
			fail "$mode: completion script failed for dnd $*"
	}
	# t EXPECTED WORD...: completion of the words must be EXPECTED.
	t() {
		local want=$1 got
		shift
		got=$(c2 "$@")
		[ "$got" = "$want" ] ||
			fail "$mode: dnd $* -> '$got', wanted '$want'"
	}
	# has OPTION... -- WORD...: the completion offers every OPTION.
	has() {
		local o got
		local -a want=()
		while [ "$1" != -- ]; do want+=("$1"); shift; done
		shift
		got=" $(c2 "$@")"
		for o in "${want[@]}"; do
			case "$got" in *" $o "*) ;;
			*) fail "$mode: dnd $* does not offer $o (got:$got)" ;;
			esac
		done
	}

	# Commands: what 'dnd help' lists, plus help and version.
	cmds=$("$DND" help | awk '/^  [a-z][a-z-]* +[^ ]/ { print $1 }')
	for c in send recv bench filebench probe relay; do
		grep -qx "$c" <<<"$cmds" || fail "'dnd help' does not list $c"
	done
	# shellcheck disable=SC2086
	t "$(echo $cmds help version | words)" ""
	# shellcheck disable=SC2086
	t "$(echo $cmds help version | words)" help ""
	t "relay " bench ""
	t "" relay ""

	# Every long option --help prints, and the short ones it lists first.
	for cmd in "" send recv bench "bench relay" filebench probe relay serve; do
		# shellcheck disable=SC2086
		help=$("$DND" $cmd --help 2>&1)
		long=$(grep -oE -- "--[a-z][a-z0-9-]*" <<<"$help" | sort -u)
		short=$(grep -oE -- "^ +-[a-zA-Z]," <<<"$help" | tr -d ' ,' | sort -u)
		[ -n "$long" ] || fail "'dnd $cmd --help' prints no options"
		# shellcheck disable=SC2086
		has $long -- $cmd --
		# shellcheck disable=SC2086
		[ -z "$short" ] || has $short -- $cmd -
	done
	t "--method " send --me
	t "--version " --vers

	# Methods per direction, as dnd probe reports this build's registry.
	t "$(probe_methods send)" send -m ""
	t "$(probe_methods recv)" recv --method ""
	t "$(probe_methods all)" -c host -m ""
	t "$(probe_methods send | tr ' ' '\n' | grep '^s' | words)" send -m s
	t "$(probe_methods send)" bench --send ""
	t "rw,splice " bench --recv rw,spl
	t "--method=sendfile --method=splice " send -b 1Mi --method=s
	# The relay's methods and the other fixed lists, each value one that
	# dnd's error message for a bad value names.
	names_in "$(c2 relay -m "")" relay -l 1 -t h:1 -m bogus
	names_in "$(c2 bench relay --modes "")" bench relay --modes bogus
	names_in "$(c2 bench --src "")" bench --src bogus
	names_in "$(c2 bench --sink "")" bench --sink bogus
	names_in "$(c2 send --splice-flags "")" send -c h --splice-flags bogus x
	t "move,gift move,more move,move move,none " recv --splice-flags move,
	# --require: exactly the names dnd probe knows.
	t "$("$DND" probe --require bogus 2>&1 | head -n1 |
		sed 's/.*known: //' | words)" probe --require ""
	t "splice-relay-a,splice-relay-b " probe -r splice-relay-a,splice-relay-b
	t "end stream " recv --sync ""
	t "cold warm " bench --cache ""
	has write direct mmap -- filebench --paths ""

	# Files, directories, hosts.
	t "file1 file2 sub " send ""
	t "file1 file2 " recv -t "fi"
	t "file1 file2 " -c host "fi"
	t "sub " bench --dir s
	t "--json=file1 --json=file2 " bench --json=fi
	t "file1 file2 " bench --json = "fi"
	t "" send -p ""
	has localhost -- send -c local
	ok "$mode: commands, options, methods, value lists and files"
done
