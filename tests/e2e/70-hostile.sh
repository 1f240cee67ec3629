#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A hostile peer against every receive method: real `dnd send` transfers
# (files, -P 2 and 3 streams, /dev/zero, a pipe's segments), captured, then
# replayed with bit flips, truncation, tiny writes, stalls, resets, trailing
# garbage, a withheld hash, a stream that never comes or comes twice. The
# receiver must exit 0 or 1, never report a sanitizer error, name the cause,
# and leave the disk agreeing with its exit code. Known receiver defects are
# listed in hostile.py (KNOWN) with their reason. First, concurrent
# pushes to one name on a dnd serve --replace.
# DND_HOSTILE_N runs per method and seed (20), DND_HOSTILE_SEED (1) plus one
# random seed unless DND_HOSTILE_RANDOM=0, DND_HOSTILE_ONLY=method:run.
# First, a hostile source: a file rewritten in place while it is sent.
. "$(dirname "$0")/lib.sh"

# The torn source. A proxy stops passing the payload after 1 MiB, so the
# sender blocks with most of the 16 MiB unread; the file is rewritten in
# place (same size, dd conv=notrunc) and the proxy lets go. Hashed as it
# passes, the mix of old and new bytes would verify: both ends must fail
# with the cause instead, and nothing may land.
D="$T/land"
mkdir "$D" "$T/srv"
random_file "$T/new" $((16 << 20))
# torn_proxy PORT: the pausing proxy on a new $PORT to PORT; sets MPID.
torn_proxy() {
	next_port
	bg "$T/mitm.out" perl "$(dirname "$0")/mitm.pl" 127.0.0.1 "$PORT" \
		127.0.0.1 "$1" pause $((1 << 20))
	MPID=$BPID
	wait_text "$T/mitm.out" ready
}
# torn_rewrite FILE PID: once the proxy paused, rewrites FILE and lets the
# proxy go; then waits for PID (the client) and sets CRC to its exit code.
torn_rewrite() {
	wait_text "$T/mitm.out" paused
	dd if="$T/new" of="$1" bs=1M conv=notrunc status=none || fail "dd $1"
	kill -USR1 "$MPID"
	wait_for "$2" 20
	CRC=$?
	wait_for "$MPID" 10
}
# torn_landed WHAT SLOG RLOG: both ends exited 1 with the cause, nothing
# landed (SRC, RRC: the sender's and receiver's exit codes).
torn_landed() {
	[ "$SRC" = 1 ] && [ "$RRC" = 1 ] ||
		fail "$1: exit $SRC (send), $RRC (recv): $(cat "$2" "$3")"
	grep -qF "dnd: the sender's source changed while it was read; $D/dst was not written: send it again once the source is still" "$3" ||
		fail "$1: receiver: $(cat "$3")"
	no_leftovers "$D"
}
for m in rw uring vmsplice zerocopy; do
	if ! "$DND" probe --require "$m" >"$T/probe.log" 2>&1; then
		echo "note: torn source: skipping $m: $(tail -n1 "$T/probe.log")"
		continue
	fi
	random_file "$T/src" $((16 << 20))
	next_port
	start_recv "$T/r.log" "$D/dst"
	wait_listen "$PORT"
	torn_proxy "$PORT"
	bg "$T/s.log" "$DND" send -c 127.0.0.1 -p "$PORT" -m "$m" "$T/src"
	torn_rewrite "$T/src" "$BPID"
	SRC=$CRC
	wait_recv
	grep -qF "dnd: $T/src changed while it was read (mtime/ctime); nothing landed: send it again once it is still" "$T/s.log" ||
		fail "torn -m $m: sender: $(cat "$T/s.log")"
	torn_landed "torn -m $m" "$T/s.log" "$T/r.log"
done
# A dnd serve pull: the server's session is the sender.
next_port
bg "$T/serve.log" "$DND" serve --dir "$T/srv" -p "$PORT" --grace 1
wait_log "$T/serve.log" "listening on .*:$PORT" "no listening line"
random_file "$T/srv/src" $((16 << 20))
torn_proxy "$PORT"
bg "$T/r.log" "$DND" recv -c 127.0.0.1 -p "$PORT" --peer-method rw \
	--from src "$D/dst"
torn_rewrite "$T/srv/src" "$BPID"
RRC=$CRC
wait_log "$T/serve.log" "src changed while it was read (mtime/ctime); nothing landed: send it again once it is still" \
	"serve pull: no cause in the server's log"
SRC=1
torn_landed "torn serve pull" "$T/serve.log" "$T/r.log"
ok "a source rewritten while it is sent fails both ends, lands nothing"

command -v python3 >/dev/null || skip "no python3 (scripts/deps.sh adds it)"
: "${DND_HOSTILE_N:=20}" "${DND_HOSTILE_SEED:=1}" "${DND_HOSTILE_RANDOM:=1}"
: "${DND_HOSTILE_ONLY:=}" "${DND_HOSTILE_JOBS:=4}"

# Six concurrent pushes to one name on a `serve --replace`, each begun
# while the name is free: all land (replace means replace, whatever came
# meanwhile), the last rename wins, and the name holds one source whole.
# The clients read FIFOs, so all six are under way (their temporary files
# exist) before any of them ends.
mkdir "$T/rep"
next_port
bg "$T/serve.log" "$DND" serve --dir "$T/rep" --replace -p "$PORT"
SPID=$BPID
wait_listen "$PORT"
pushes=() fds=()
for i in 1 2 3 4 5 6; do
	random_file "$T/push$i" 300000
	mkfifo "$T/fifo$i"
	bg "$T/push$i.log" sh -c 'exec "$1" send -c 127.0.0.1 -p "$2" --to same - <"$3"' \
		sh "$DND" "$PORT" "$T/fifo$i"
	pushes+=("$BPID")
	exec {fd}>"$T/fifo$i"
	fds+=("$fd")
done
tmps() { find "$T/rep" -name '.same.dnd-*' | wc -l; }
for _ in $(seq 1 400); do
	[ "$(tmps)" = 6 ] && break
	sleep 0.05
done
[ "$(tmps)" = 6 ] || fail "six pushes under way: $(ls -A "$T/rep")"
for i in 0 1 2 3 4 5; do
	cat "$T/push$((i + 1))" >&"${fds[i]}"
	exec {fds[i]}>&-
done
for i in 0 1 2 3 4 5; do
	wait_for "${pushes[i]}" 30
	rc=$?
	[ $rc = 0 ] || fail "concurrent --replace push $((i + 1)) exited $rc: $(cat "$T/push$((i + 1)).log")"
done
landed=
for i in 1 2 3 4 5 6; do
	cmp -s "$T/push$i" "$T/rep/same" && landed=$i
done
[ -n "$landed" ] || fail "the landed file is none of the six sources"
[ "$(ls -A "$T/rep")" = same ] || fail "left in DIR: $(ls -A "$T/rep")"
kill "$SPID"
wait "$SPID"
ok "six concurrent serve --replace pushes to one name: all landed, the name holds push $landed"

# Without --replace, a name that appears during a push stays, and the
# client hears why by the name it asked for, not the server's own path.
next_port
bg "$T/serve.log" "$DND" serve --dir "$T/rep" -p "$PORT"
SPID=$BPID
wait_listen "$PORT"
mkfifo "$T/fifo-late"
bg "$T/late.log" sh -c 'exec "$1" send -c 127.0.0.1 -p "$2" --to late - <"$3"' \
	sh "$DND" "$PORT" "$T/fifo-late"
LPID=$BPID
exec {fd}>"$T/fifo-late"
head -c 100000 "$T/push1" >&"$fd"
for _ in $(seq 1 400); do
	[ -n "$(find "$T/rep" -name '.late.dnd-*')" ] && break
	sleep 0.05
done
[ -n "$(find "$T/rep" -name '.late.dnd-*')" ] || fail "the late push is not under way: $(ls -A "$T/rep")"
echo precious >"$T/rep/late"
tail -c +100001 "$T/push1" >&"$fd"
exec {fd}>&-
wait_for "$LPID" 30
rc=$?
[ $rc = 1 ] || fail "late push exited $rc: $(cat "$T/late.log")"
grep -qxF "dnd: the receiver failed: late appeared during the transfer (another one landed it?); use -t to replace it" "$T/late.log" ||
	fail "late push's cause: $(cat "$T/late.log")"
[ "$(cat "$T/rep/late")" = precious ] || fail "the name that appeared was replaced"
[ -z "$(find "$T/rep" -name '.late.dnd-*')" ] || fail "temporary left: $(ls -A "$T/rep")"
kill "$SPID"
wait "$SPID"
ok "a serve push whose name appeared meanwhile fails with the client's own name"

methods=
for m in rw mmap splice vmsplice null uring uring-splice tcpmmap; do
	case ${DND_HOSTILE_ONLY%%:*} in "" | "$m") ;; *) continue ;; esac
	if "$DND" probe --require "$m" >"$T/probe.log" 2>&1; then
		methods="$methods${methods:+,}$m"
	else
		echo "note: skipping $m: $(tail -n1 "$T/probe.log")"
	fi
done
[ -n "$methods" ] || skip "no receive method is usable here"

seeds=$DND_HOSTILE_SEED
if [ "$DND_HOSTILE_RANDOM" != 0 ]; then
	rseed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	seeds="$seeds,$rseed"
fi
echo "seeds: $seeds (replay one: DND_HOSTILE_SEED=N DND_HOSTILE_RANDOM=0)"

# A sanitizer build is slower to start and to move data: more slack.
slack=5
case $(nm -an "$DND" 2>/dev/null | grep -m1 -o __asan_init) in
*__asan_init*) slack=10 ;;
esac

timeout -k 5 250 python3 -B "$(dirname "$0")/hostile.py" --dnd "$DND" \
	--dir "$T" --methods "$methods" --seeds "$seeds" -n "$DND_HOSTILE_N" \
	--jobs "$DND_HOSTILE_JOBS" --slack "$slack" --only "$DND_HOSTILE_ONLY"
rc=$?
[ $rc -lt 124 ] || fail "hostile.py timed out or was killed (exit $rc)"
[ $rc != 2 ] || fail "could not capture what dnd send sends (see above)"
[ $rc = 0 ] || fail "the receiver mishandled hostile input (see above)"
ok "hostile peer: $methods"
