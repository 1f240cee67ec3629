#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# contrib/dnd-serve.service's SystemCallFilter= lets dnd serve work: the
# server runs under strace -f -c while every method is asked of its end
# (push and pull, one and two streams, keyless and keyed, the special
# ends), and every system call it made must be one the unit's filter
# allows (expanded with systemd-analyze's own groups). Then the unit
# passes systemd-analyze verify.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
unit="$root/contrib/dnd-serve.service"
command -v strace >/dev/null || skip "no strace"
command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
command -v python3 >/dev/null || skip "no python3 (scripts/deps.sh adds it)"
systemd-analyze syscall-filter >"$T/groups" 2>/dev/null || skip "systemd-analyze syscall-filter failed"

d="$T/d"; mkdir "$d"
random_file "$T/src" 3000000
(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
usable() { "$DND" probe --require "$1" >/dev/null 2>&1; }

# traced TAG SERVE-ARGS...: a server under strace on a fresh port; sets SPID.
traced() {
	next_port
	# LeakSanitizer cannot run under ptrace: without leak checks there.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		bg "$T/$1.log" strace -f -c -o "$T/$1.strace" "$DND" serve --dir "$d" -p "$PORT" --grace 1 --replace "${@:2}"
	SPID=$BPID
	wait_listen "$PORT"
	wait_log "$T/$1.log" "listening on" "no listening line"
}
cli() { expect_exit 0 timeout 60 "$DND" "$@" -c 127.0.0.1 -p "$PORT"; }
# SIGTERM to the server, strace's child (strace itself would hold on to
# it); strace writes its summary once every traced process has gone.
stop() {
	local dnd
	dnd=$(ps -o pid= --ppid "$SPID" | tr -d ' ')
	[ -n "$dnd" ] || fail "no dnd under strace $SPID"
	kill -TERM "$dnd"
	wait_for "$SPID" 30 || fail "serve under strace exited $?: $(cat "$T/$1.log")"
	grep -q "total" "$T/$1.strace" || fail "no strace summary: $(cat "$T/$1.strace")"
}

traced plain
n=0
for m in rw mmap splice vmsplice uring uring-splice tcpmmap; do
	usable "$m" || continue
	for p in 1 2; do
		cli send --peer-method "$m" -P "$p" --to "push-$m-$p" "$T/src"
		n=$((n + 1))
	done
done
cli send --peer-end null --peer-method null -l 2M /dev/zero
cli send --peer-end scratch -l 2M /dev/zero
cli send --to push-rw-1 "$T/src"	# --replace
for m in rw mmap sendfile splice vmsplice zerocopy uring uring-splice; do
	usable "$m" || continue
	for p in 1 2; do
		rm -f "$T/back"
		cli recv --peer-method "$m" -P "$p" --from push-rw-1 "$T/back"
		cmp -s "$T/src" "$T/back" || fail "pull $m -P $p differs"
		n=$((n + 1))
	done
done
cli recv --peer-end zero --peer-size 2M /dev/null
cli recv --peer-end scratch --peer-size 2M /dev/null
stop plain
ok "keyless: $n method runs and the special ends under strace"

traced keyed --key "$T/key"
for m in rw mmap; do
	cli send --key "$T/key" --peer-method "$m" -P 2 --to "k-$m" "$T/src"
	rm -f "$T/back"
	cli recv --key "$T/key" --peer-method "$m" -P 2 --from "k-$m" "$T/back"
	cmp -s "$T/src" "$T/back" || fail "keyed pull $m differs"
done
stop keyed
ok "keyed: rw and mmap both ways at -P 2 under strace"

out=$(python3 "$(dirname "$0")/syscall_filter.py" "$unit" "$T/groups" "$T/plain.strace" "$T/keyed.strace")
rc=$?
[ $rc = 0 ] || fail "the unit's SystemCallFilter= refuses what dnd serve called (exit $rc): $out"
ok "every system call dnd serve made is allowed by the unit's filter"

# verify resolves ExecStart=: a copy whose binary is this dnd.
sed "s|^ExecStart=/usr/bin/dnd |ExecStart=$DND |" "$unit" >"$T/dnd-serve.service"
out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$T/dnd-serve.service" 2>&1)
[ -z "$out" ] || fail "systemd-analyze verify: $out"
ok "systemd-analyze verify: no complaint"
