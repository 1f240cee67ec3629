#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The progress line: drawn in place (\r, cleared) on a terminal, with the
# bytes, the length, the percentage, the rate and an ETA, and cleared before
# the next message; never when stdout or stderr is not a terminal, with -q,
# or in the JSON modes. script(1) gives dnd its terminal.
. "$(dirname "$0")/lib.sh"
command -v script >/dev/null || skip "script (util-linux) is missing"

# run NAME ARGS...: a send from /dev/zero to a receiver that prints an
# interval line every 0.2 s; once those say a second has passed (a line
# would have been drawn twice), the receiver is stopped and the sender
# fails. ARGS is the rest of a shell command line. The sender's terminal
# output is in $T/NAME.tty (script's own lines removed).
run() {
	local name=$1; shift
	next_port
	start_recv "$T/r.log" -i 0.2 /dev/null
	wait_listen "$PORT"
	bg "$T/$name.script" script -qfec "$DND send -c 127.0.0.1 -p $PORT -l 100Gi /dev/zero $*" \
		"$T/$name.raw"
	wait_log "$T/r.log" '[-] *[1-9][0-9]*\.[0-9]* s\]' "$name: no second of transfer"
	kill "$RPID"
	wait_recv
	wait_for "$BPID" 20
	[ $? = 1 ] || fail "$name: the sender exited $?, wanted 1: $(cat -v "$T/$name.raw")"
	grep -v '^Script \(started\|done\) on' "$T/$name.raw" >"$T/$name.tty"
}

run tty
# drawn in place, e.g. "sent 133.2 MiB of 102400.0 MiB (0%) at 273.5 MB/s, ETA 392 s"
grep -qaE $'\r\033\\[Ksent [0-9]+\\.[0-9] MiB of 102400\\.0 MiB \\([0-9]+%\\) at [0-9]+\\.[0-9] MB/s, ETA [0-9]+ s' "$T/tty.tty" ||
	fail "no progress line on a terminal: $(cat -v "$T/tty.tty")"
# cleared before the cause, which starts its own line
grep -qa $'\r\033\\[Kdnd: the connection was reset after' "$T/tty.tty" ||
	fail "the progress line was not cleared before the cause: $(cat -v "$T/tty.tty")"
ok "a terminal gets the progress line, cleared before the next message"

for c in "q:-q" "stdout:>$T/out" "json:--json" "json-stream:--json-stream"; do
	run "${c%%:*}" "${c#*:}"
	grep -qa 'ETA\|MiB of' "$T/${c%%:*}.tty" &&
		fail "${c#*:}: a progress line: $(cat -v "$T/${c%%:*}.tty")"
	grep -qa "dnd: the connection was reset after" "$T/${c%%:*}.tty" "$T/out" ||
		fail "${c#*:}: no cause: $(cat -v "$T/${c%%:*}.tty")"
done
ok "no progress line with -q, stdout not a terminal, --json, --json-stream"

# No terminal at all: nothing but the cause on stderr.
next_port
start_recv "$T/r.log" -i 0.2 /dev/null
wait_listen "$PORT"
bg "$T/plain.log" "$DND" send -c 127.0.0.1 -p "$PORT" -l 100Gi /dev/zero
wait_log "$T/r.log" '[-] *[1-9][0-9]*\.[0-9]* s\]' "no second of transfer"
kill "$RPID"
wait_recv
wait_for "$BPID" 20
[ $? = 1 ] || fail "the sender exited $?"
grep -qa $'\r\\|ETA' "$T/plain.log" && fail "a progress line without a terminal: $(cat -v "$T/plain.log")"
grep -qxE "dnd: the connection was reset after [0-9]+ bytes: by the receiver \(see its message\) or by something on the path" "$T/plain.log" &&
	[ "$(wc -l <"$T/plain.log")" = 1 ] || fail "stderr is not the cause alone: $(cat -v "$T/plain.log")"
ok "no progress line without a terminal"
