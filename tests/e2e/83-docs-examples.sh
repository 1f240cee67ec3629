#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every example in README.md and man/*.1 runs, in order, on a fresh
# machine, with the dnd under test first on PATH.
#
# Which text is an example: README.md's fenced blocks tagged ```sh (each
# line a command) and ```console (the lines after a "$ " prompt); in a man
# page, each .nf/.fi block of the EXAMPLES section (roff escapes undone,
# "\" continuations joined). Other blocks (a synopsis, a report) are not.
#
# The fresh machine: one new network namespace, lo up with 10.0.0.1/8, so
# that 10.0.0.2 and 10.0.0.5 are local too, and a hosts file (ip netns
# exec's /etc/netns/NS/hosts) that names server 10.0.0.1,
# receiver.example.net 10.0.0.2 and backend.example.net 10.0.0.5: both
# hosts of an example are this one. Each document starts in a fresh
# directory ROOT holding etc/, srv/, data/ (a data disk) and home/ (the
# working directory); the paths /etc/dnd, /srv and /data in an example
# mean those beneath ROOT. The premise files: disk.img in home/ and in
# data/, and srv/data/ with two files.
#
# A command that listens (dnd recv or the 2006 form without -c, dnd serve
# --dir, dnd relay) or ends in "&" runs in the background; the next one
# starts once a new socket listens in the namespace. At the end of its
# block a receiver must have exited 0 (its sender ran); a server or relay
# is stopped. Every other command must exit 0 within 120 s. Commands that
# install or run for minutes are in the skip list below, each with why.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "a network namespace and its hosts file need root"
here=$(cd "$(dirname "$0")/../.." && pwd)

# pattern (a bash glob on the whole command) and why it does not run here.
skips=(
	"make *"		"installs Debian packages and runs for minutes (make test runs this suite)"
	"dnd bench *"		"runs for minutes; tests/e2e/20-bench*.sh run its quick forms"
	"dnd filebench *"	"writes GiBs for minutes; tests/e2e/50-filebench.sh runs it small"
	"while sleep *"		"loops until interrupted, by design"
)

NS="dndt-docs-$$"
ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace"
_netns+=("$NS")
ip -n "$NS" link set lo up
ip -n "$NS" addr add 10.0.0.1/8 dev lo
mkdir -p "/etc/netns/$NS"
_cleanup_hooks+=("rm -rf /etc/netns/$NS")
cat >"/etc/netns/$NS/hosts" <<EOF
127.0.0.1 localhost
::1 localhost
10.0.0.1 server
10.0.0.2 receiver.example.net
10.0.0.5 backend.example.net
EOF
mkdir "$T/bin"
ln -s "$DND" "$T/bin/dnd"

# examples FILE: its commands, one a line, a blank line between blocks.
examples() {
	case $1 in
	*.md) awk '/^```/ { if (b) { b = 0; print ""; next }
			    b = $0 == "```sh" ? 1 : $0 == "```console" ? 2 : 3; next }
		   b == 1 && NF { print }
		   b == 2 && /^\$ / { print substr($0, 3) }' "$1" ;;
	*) awk '/^\.SH/ { e = $0 == ".SH EXAMPLES" }
		e && /^\.nf/ { b = 1; next }
		e && /^\.fi/ { b = 0; print ""; next }
		b && !/^\./ { print }' "$1" |
		sed -e 's/\\-/-/g; s/\\e/\\/g' ;;
	esac | sed -e ':a' -e '/\\$/N; s/\\\n *//; ta'
}

# skipped CMD: prints why CMD does not run, if it is in the skip list.
skipped() {
	local i
	for ((i = 0; i < ${#skips[@]}; i += 2)); do
		# shellcheck disable=SC2053
		[[ $1 == ${skips[i]} ]] && { echo "${skips[i + 1]}"; return 0; }
	done
	return 1
}

# listener CMD: does CMD wait for connections?
listener() {
	local c=" ${1%%#*} "
	case $c in
	" dnd serve "*--dir*|" dnd relay "*) return 0 ;;
	*" -c "*|*" --connect "*) return 1 ;;
	" dnd recv "*) return 0 ;;
	" dnd -"*|" dnd /"*) return 0 ;;	# the 2006 form
	esac
	return 1
}

# listening: the namespace's listening sockets, one per line; a new
# listener is one that was not there before (a count could stay level if
# another closed meanwhile).
listening() { ip netns exec "$NS" ss -Htln | sort; }
listens_anew() { comm -13 <(echo "$1") <(listening) | grep -q .; }

# in_ns ROOT CMD: the words that run CMD in the namespace, in ROOT/home
# (a simple command execs, so that a background PID is the command's).
in_ns() {
	run=(ip netns exec "$NS" env PATH="$T/bin:$PATH"
		bash -o pipefail -c "cd '$1/home' && exec $2")
}

# end_block: receivers must have finished well; servers are stopped.
bg_pids=() bg_cmds=() bg_logs=()
end_block() {
	local i rc
	for i in "${!bg_pids[@]}"; do
		if listener "${bg_cmds[i]}" && [[ ${bg_cmds[i]} != "dnd serve "* &&
			${bg_cmds[i]} != "dnd relay "* ]]; then
			wait_for "${bg_pids[i]}" 60
			rc=$?
			[ "$rc" = 0 ] || fail "$doc: '${bg_cmds[i]}' exited $rc: $(cat "${bg_logs[i]}")"
		else
			kill -TERM "${bg_pids[i]}" 2>/dev/null
			wait_for "${bg_pids[i]}" 20 >/dev/null
		fi
	done
	bg_pids=() bg_cmds=() bg_logs=()
}

n=0 ran=0
for doc in README.md man/*.1; do
	root="$T/root$((n++))"
	mkdir -p "$root/etc" "$root/srv/data" "$root/data" "$root/home"
	random_file "$root/home/disk.img" 3000000
	cp "$root/home/disk.img" "$root/data/disk.img"
	random_file "$root/srv/data/a" 100000
	echo notes >"$root/srv/data/b"
	while IFS= read -r line; do
		if [ -z "$line" ]; then
			end_block
			continue
		fi
		if why=$(skipped "$line"); then
			echo "  $doc: skipped '$line': $why"
			continue
		fi
		# The documented paths, beneath ROOT; gigabytes of zeros shrunk to
		# 64 MiB (the example's form is what is tested, not the machine).
		cmd=$(sed -E -e "s#(^|[ =])/(etc/dnd|srv|data)([/ ]|\$)#\\1$root/\\2\\3#g" \
			-e 's/ -l [0-9]+Gi / -l 64Mi /' <<<"$line")
		log="$T/log$((ran++))"
		if [[ $cmd == *"&" ]] || listener "$cmd"; then
			before=$(listening)
			cmd=${cmd%&}
			in_ns "$root" "$cmd"
			"${run[@]}" >"$log" 2>&1 &
			bg_pids+=($!) bg_cmds+=("$line") bg_logs+=("$log")
			_pids+=($!)
			for _ in $(seq 1 400); do
				listens_anew "$before" && break
				kill -0 "$!" 2>/dev/null ||
					fail "$doc: '$line' exited at once: $(cat "$log")"
				sleep 0.05
			done
			listens_anew "$before" ||
				fail "$doc: '$line' listens on nothing after 20 s: $(cat "$log")"
			echo "  $doc: '$line' listens"
			continue
		fi
		in_ns "$root" "$cmd"
		timeout 600 "${run[@]}" >"$log" 2>&1
		rc=$?
		[ "$rc" = 0 ] || fail "$doc: '$line' exited $rc: $(cat "$log")"
		echo "  $doc: '$line' ran"
	done < <(examples "$here/$doc")
	end_block
done
[ "$ran" -ge 20 ] || fail "only $ran examples ran: did the extraction break?"
ok "$ran examples of README.md and man/*.1 ran in order on a fresh machine"
