#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd bench --remote between two network namespaces: dnd serve in one,
# bench --quick in the other, both directions; every cell ran, carries
# both ends' figures (the far one from the server's report) and nothing is
# left in the server's DIR.
. "$(dirname "$0")/lib.sh"

setup_ns
d="$T/d"; mkdir "$d"
(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
next_port
bg "$T/serve.log" ip netns exec "$NS_A" "$DND" serve --dir "$d" -p "$PORT" --key "$T/key" --grace 1
spid=$BPID
ns_listen "$NS_A" "$PORT"

# bench DIRECTION-FLAGS...: one --quick run of the default set, 60 s at most
# (a sanitizer build on a busy machine needs more than a plain one's 5 s).
bench() {
	timeout 60 ip netns exec "$NS_B" "$DND" bench --remote 10.231.0.1 \
		-p "$PORT" --key "$T/key" --quick --no-best-path --dir "$T" \
		--json="$T/j" "$@" >"$T/table" 2>"$T/err"
}

# The cells that did not run, for a failure's message.
failed_cells() {
	grep '"type":"bench_cell"' "$T/j" 2>/dev/null |
		grep -v '"status":"\(ok\|not in set\|n/a\)"' | head -3
}

check_cells() { # check_cells FAR-SIDE
	local n bad
	n=$(grep -c '"type":"bench_cell".*"status":"ok"' "$T/j")
	[ "$n" -ge 4 ] || fail "$1: only $n cells ran: $(cat "$T/err")"
	bad=$(grep '"type":"bench_cell"' "$T/j" | grep -v '"status":"\(ok\|not in set\|n/a\)"' | head -1)
	[ -z "$bad" ] || fail "$1: a cell failed: $bad"
	bad=$(grep '"status":"ok"' "$T/j" | grep -v "\"far\":{\"host\":\"10.231.0.1\",\"port\":$PORT,\"side\":\"$1\",\"cpu_user_seconds\":[0-9.e-]*,\"cpu_sys_seconds\":[0-9.e-]*,\"cpu_us_per_mb\":[0-9.e-]*[1-9][0-9.e-]*,\"syscalls_per_mb\":[0-9.]*[1-9]" | head -1)
	[ -z "$bad" ] || fail "$1: a cell without the far end's figures: $bad"
	grep '"status":"ok"' "$T/j" | grep -v '"sender":{[^}]*"syscalls_per_mb":[0-9.]*[1-9][^}]*},"receiver":{[^}]*"syscalls_per_mb":[0-9.]*[1-9]' |
		head -1 | grep -q . && fail "$1: a cell lacks one side's calls"
	grep -q '"src":"file","sink":"file".*"status":"ok".*"verdict":"verified"' "$T/j" ||
		fail "$1: no verified file -> file cell"
	# The session removes its scratch file after the client has its report.
	for _ in $(seq 1 50); do
		[ -z "$(ls -A "$d")" ] && break
		sleep 0.1
	done
	[ -z "$(ls -A "$d")" ] || fail "$1: left in DIR: $(ls -A "$d")"
}

bench || fail "bench exited $?: $(tail -n 5 "$T/err") $(failed_cells)"
grep -q '"path":"dnd serve at 10.231.0.1 port '"$PORT"', pushes' "$T/j" || fail "no path fact"
check_cells receiver
grep -q "push dnd-scratch-[0-9a-f]\{16\} -m rw: 8388608 bytes in [0-9.]* s, verified" "$T/serve.log" ||
	fail "no scratch push in the server's log: $(cat "$T/serve.log")"
ok "push: every cell ran with the server's figures, its scratch files removed"

bench --reverse || fail "bench --reverse exited $?: $(tail -n 5 "$T/err") $(failed_cells)"
check_cells sender
grep -q "pull (scratch) -m [a-z-]*: 8388608 bytes in [0-9.]* s, verified" "$T/serve.log" ||
	fail "no scratch pull in the server's log"
grep -q "pull (zero) -m [a-z-]*: 33554432 bytes in [0-9.]* s, counted" "$T/serve.log" ||
	fail "no zero pull in the server's log"
ok "--reverse: the server sends from /dev/zero and scratch, both ends' figures"

expect_exit 2 "$DND" bench --reverse
expect_out "add --remote HOST"
expect_exit 2 "$DND" bench --remote 10.231.0.1 --netns
expect_out "--netns needs both ends here"
ok "--remote's companions and exclusions are usage errors"

kill -TERM "$spid"
wait "$spid" || fail "serve exited $? after SIGTERM"
[ -z "$(ls -A "$d")" ] || fail "left in DIR: $(ls -A "$d")"
ok "nothing left in the server's DIR"
