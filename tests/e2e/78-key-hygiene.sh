#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Key files and the processes that hold a key: a key file another user
# owns is refused on both ends (exit 2, the owner and the fix); a keyed
# server, its session child and a keyed client cannot be dumped or traced
# (the files of a process that is not dumpable in /proc are root's), and
# the key's page is left out of core dumps. Runs them as nobody, whose
# own processes show as nobody's when dumpable.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root, to run dnd as nobody"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
# A command, not a function: bg's PID must be dnd's own.
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
"${as_nobody[@]}" "$DND" version >/dev/null 2>&1 || skip "nobody cannot run $DND"
chmod 711 "$T"
d="$T/d"; mkdir "$d"; chown 65534:65534 "$d"
(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
random_file "$T/src" 200000
chmod 644 "$T/src"

# The key is root's: nobody may not use it, even could it read it.
cp "$T/key" "$T/rootkey"; chown 65534:65534 "$T/key"
want="dnd: key file $T/key is owned by nobody (uid 65534), not by root (uid 0) who runs dnd; run chown root $T/key"
next_port
expect_exit 2 "$DND" send -c 127.0.0.1 -p "$PORT" --key "$T/key" --to x "$T/src"
[ "$(echo "$OUT" | head -1)" = "$want" ] || fail "send: $OUT"
expect_exit 2 "$DND" recv -c 127.0.0.1 -p "$PORT" --key "$T/key" --from x "$T/back"
[ "$(echo "$OUT" | head -1)" = "$want" ] || fail "recv: $OUT"
expect_exit 2 timeout 20 "$DND" serve --dir "$d" -p "$PORT" --key "$T/key"
[ "$(echo "$OUT" | head -1)" = "$want" ] || fail "serve: $OUT"
[ ! -e "$T/back" ] || fail "a refused pull wrote $T/back"
ok "a key file another user owns is refused by send, recv and serve"

# owner PID: who /proc says owns PID.
owner() { stat -c %U "/proc/$1/status"; }
# dd_page PID: PID has a mapping left out of core dumps (VmFlags dd)
# that is not the kernel's ([vvar], [vdso] ...).
dd_page() { awk '/^[0-9a-f]+-/ { name = $6 } /^VmFlags:.* dd/ && name !~ /^\[/ { n++ } END { exit !n }' "/proc/$1/smaps"; }
# kid PID: PID's one child, waited for (10 s).
kid() {
	local k
	for _ in $(seq 1 200); do
		k=$(ps -o pid= --ppid "$1" | tr -d ' ')
		[ -n "$k" ] && { echo "$k"; return; }
		sleep 0.05
	done
	fail "no session child of $1 after 10 s: $(cat "$T/send.log" "$T/serve.log")"
}

# A keyless server as nobody: dumpable, so /proc shows nobody (the check
# below can tell).
next_port
bg "$T/plain.log" "${as_nobody[@]}" "$DND" serve --dir "$d" -p "$PORT"
ppid=$BPID
wait_log "$T/plain.log" "listening on" "keyless server did not start"
[ "$(owner "$ppid")" = nobody ] || fail "keyless serve as nobody shows as $(owner "$ppid")"
kill -TERM "$ppid"; wait "$ppid" || fail "keyless serve exited $?"

next_port
bg "$T/serve.log" "${as_nobody[@]}" "$DND" serve --dir "$d" -p "$PORT" --key "$T/key"
spid=$BPID
wait_log "$T/serve.log" "listening on" "keyed server did not start"
[ "$(owner "$spid")" = root ] || fail "keyed serve is dumpable (/proc owner $(owner "$spid"))"
dd_page "$spid" || fail "keyed serve: no page left out of core dumps"
# A push held open by its source (a FIFO a shell descriptor keeps open).
mkfifo "$T/fifo"; chmod 666 "$T/fifo"
exec 3<>"$T/fifo"
head -c 60000 "$T/src" >&3	# below a pipe's 64 KiB: no reader yet
# Not bg: a background command's stdin is /dev/null unless redirected.
"${as_nobody[@]}" "$DND" send -c 127.0.0.1 -p "$PORT" --key "$T/key" -l 200000 --to held - <"$T/fifo" >"$T/send.log" 2>&1 &
cpid=$!
_pids+=("$cpid")
child=$(kid "$spid") || exit 1
[ "$(owner "$child")" = root ] || fail "the session child is dumpable: $(ps -ef --forest | grep -A3 "[d]nd serve"; cat "$T/send.log" "$T/serve.log")"
dd_page "$child" || fail "the session child: no page left out of core dumps"
[ "$(owner "$cpid")" = root ] || fail "keyed send is dumpable"
dd_page "$cpid" || fail "keyed send: no page left out of core dumps"
tail -c +60001 "$T/src" >&3
exec 3>&-
wait_for "$cpid" 20 || fail "the held push exited $?: $(cat "$T/send.log")"
cmp -s "$T/src" "$d/held" || fail "the held push landed wrong"
kill -TERM "$spid"; wait "$spid" || fail "serve exited $?"
ok "keyed serve, its session child and keyed send: not dumpable, the key's page out of core dumps"
