#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd serve's guarantees between two namespaces: wrong and missing keys and
# bad names refused with nothing written, 20 concurrent clients, a killed
# client, --max-sessions, an idle-connection flood, --allow, --max-bytes and
# free space, and a SIGTERM that leaves nothing behind.
. "$(dirname "$0")/lib.sh"

setup_ns
d="$T/d"; mkdir "$d" "$d/sub"
"$DND" serve --new-key "$T/key" 2>/dev/null || fail "--new-key"
"$DND" serve --new-key "$T/other" 2>/dev/null || fail "--new-key"
random_file "$T/src" 1000000
ln -s /etc "$d/link"
echo old >"$d/exists"

# serve ARGS...: a server in A on a fresh port; sets SPID.
serve() {
	next_port
	bg "$T/serve.log" ip netns exec "$NS_A" "$DND" serve --dir "$d" -p "$PORT" "$@"
	SPID=$BPID
	ns_listen "$NS_A" "$PORT"
}
cli() { timeout 20 ip netns exec "$NS_B" "$DND" "$@" -c 10.231.0.1 -p "$PORT"; }
# stop: SIGTERM, which must exit 0.
stop() { kill -TERM "$SPID"; wait "$SPID" || fail "serve exited $? after SIGTERM: $(cat "$T/serve.log")"; }
# only_known: DIR holds exactly what the test put there and landed.
only_known() {
	local left
	left=$(cd "$d" && find . -mindepth 1 | sort | tr '\n' ' ')
	[ "$left" = "$1" ] || fail "in DIR: '$left', wanted '$1'"
}
base=". ./exists ./link ./sub "
base=${base#. }

serve --key "$T/key" --max-bytes 2M --grace 1
expect_exit 1 cli send --key "$T/other" --to w1 "$T/src"
expect_out "dnd: authentication failed"
expect_exit 1 cli send --insecure --to w2 "$T/src"
expect_out "authentication failed: the server requires a key"
expect_exit 1 cli recv --key "$T/other" --from exists "$T/pulled"
expect_out "dnd: authentication failed"
[ ! -e "$T/pulled" ] || fail "a pull with a wrong key wrote $T/pulled"
chmod 644 "$T/other"
expect_exit 2 cli send --key "$T/other" --to w3 "$T/src"
expect_out "chmod 600"
only_known "$base"
ok "wrong key, missing key, readable key file: refused, nothing written"

long=$(printf 'n%.0s' $(seq 1 300))
for name in ../x /etc/x sub/../x link/x exists nodir/x sub/ .; do
	expect_exit 1 cli send --key "$T/key" --to "$name" "$T/src"
	expect_out "server refused: "
done
expect_exit 2 cli send --key "$T/key" --to "sub/$long" "$T/src"
expect_out "dnd: --to: a file name of 300 bytes is too long"
expect_exit 1 cli recv --key "$T/key" --from ../../etc/passwd "$T/pulled"
expect_out "server refused: "
expect_exit 1 cli send --key "$T/key" --to big -l 3M /dev/zero
expect_out "server refused: 3000000 bytes is above the server's --max-bytes 2000000"
only_known "$base"
ok "bad names, an existing name, --max-bytes: refused before any payload"

# 20 clients at once, all verified.
pids=()
for i in $(seq 1 20); do
	cli send --key "$T/key" --to "sub/c$i" "$T/src" >"$T/c$i.log" 2>&1 &
	pids+=($!)
done
for i in $(seq 1 20); do
	wait "${pids[$((i - 1))]}" || fail "client $i: $(cat "$T/c$i.log")"
	cmp -s "$T/src" "$d/sub/c$i" || fail "client $i's file differs"
done
rm -f "$d"/sub/c*
ok "20 concurrent clients, all verified"

# A client killed mid-transfer leaves nothing; the next one is served.
stop; serve --key "$T/key" --grace 1
# ($! of a pipeline is its last process: ip netns exec becomes dnd.)
cat /dev/zero 2>/dev/null | ip netns exec "$NS_B" "$DND" send --key "$T/key" -c 10.231.0.1 -p "$PORT" --to killed - >/dev/null 2>&1 &
kpid=$!
_pids+=("$kpid")
wait_size "$d/.killed.dnd-*" 20000000
kill -KILL "$kpid"
wait_log "$T/serve.log" "push killed .*failed" "no failed session logged"
wait "$kpid" 2>/dev/null
only_known "$base"
expect_exit 0 cli send --key "$T/key" --to after "$T/src"
cmp -s "$T/src" "$d/after" || fail "the next client's file differs"
rm -f "$d/after"
ok "a killed client leaves nothing and the next client is served"

# A session process killed (SIGKILL) never stops the server: it logs the
# death and serves the next client; nothing appears under the name, and
# the parent removes the temporary file the session could not.
cat /dev/zero 2>/dev/null | ip netns exec "$NS_B" "$DND" send --key "$T/key" -c 10.231.0.1 -p "$PORT" --to victim - >/dev/null 2>&1 &
vpid=$!
_pids+=("$vpid")
wait_size "$d/.victim.dnd-*" 20000000
child=$(pgrep -P "$SPID")
[ -n "$child" ] && [ "$(echo "$child" | wc -l)" = 1 ] || fail "session process: '$child'"
kill -KILL "$child"
wait "$vpid" 2>/dev/null
for _ in $(seq 1 200); do
	grep -q "the session process was killed by Killed" "$T/serve.log" && break
	sleep 0.05
done
grep -q "session 10.231.0.2:[0-9]*: the session process was killed by Killed; its temporary file is removed" "$T/serve.log" ||
	fail "the killed session is not logged: $(tail -n2 "$T/serve.log")"
[ ! -e "$d/victim" ] || fail "the killed session left its target"
only_known "$base"
expect_exit 0 cli send --key "$T/key" --to after2 "$T/src"
cmp -s "$T/src" "$d/after2" || fail "the client after a killed session differs"
rm -f "$d/after2"
ok "a SIGKILLed session process: logged, the server goes on"

# --max-sessions 1: a second client is told the server is busy.
stop; serve --key "$T/key" --max-sessions 1 --grace 1
# hold NAME: a push of NAME held until the test closes fd $HFD (hold_push).
hold() {
	hold_push "$d" "$1" ip netns exec "$NS_B" "$DND" send --key "$T/key" -c 10.231.0.1 -p "$PORT" --to "$1" -
}
hold held
hpid=$HPID
expect_exit 1 cli send --key "$T/key" --to second "$T/src"
expect_out "server refused: server busy: 1 sessions are running (--max-sessions)"
exec {HFD}>&-
wait "$hpid" || fail "the held client failed: $(cat "$T/held.log")"
[ -f "$d/held" ] && [ ! -s "$d/held" ] || fail "the held session did not land"
rm -f "$d/held"
only_known "$base"
ok "--max-sessions: one more client is told 'server busy', the other is unaffected"

# 1000 idle connections do not keep a real client out. (A fresh server:
# the failures it logs are those of the flood alone.)
stop; serve --key "$T/key" --max-sessions 1 --grace 1
timeout 30 ip netns exec "$NS_B" perl -MSocket -e '
	my @s;
	for (1..1000) {
		socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
		connect($s, sockaddr_in($ARGV[0], inet_aton("10.231.0.1"))) or last;
		push @s, $s;
	}
	print scalar(@s), "\n"; close STDOUT; sleep 8;' "$PORT" >"$T/flood.out" &
fpid=$!
_pids+=("$fpid")
for _ in $(seq 1 200); do [ -s "$T/flood.out" ] && break; sleep 0.05; done
[ "$(cat "$T/flood.out")" = 1000 ] || fail "flood opened $(cat "$T/flood.out") connections"
# A connection costs a process only once its client has sent a byte.
kids=$(pgrep -c -P "$SPID" || true)
[ "$kids" = 0 ] || fail "1000 silent connections hold $kids session processes"
# A session forked meanwhile holds its own connection and none of theirs.
hold held2
h2=$HPID
kid=$(pgrep -P "$SPID" | head -n1)
[ -n "$kid" ] || fail "no session process for the held client: $(cat "$T/held2.log")"
owned=$(ip netns exec "$NS_A" ss -Htnp state established "( sport = :$PORT )" | grep -c "pid=$kid," || true)
[ "$owned" = 1 ] || fail "the session process holds $owned client connections, not its own alone"
exec {HFD}>&-
wait "$h2" || fail "the held client failed: $(cat "$T/held2.log")"
# Its session slot is free once the server has reaped it.
wait_log "$T/serve.log" "push held2 " "the held2 session did not end"
rm -f "$d/held2"
t0=$(date +%s)
expect_exit 0 cli send --key "$T/key" --to real "$T/src"
waited=$(($(date +%s) - t0))
[ "$waited" -le 8 ] || fail "the real client waited $waited s"
cmp -s "$T/src" "$d/real" || fail "the real client's file differs"
rm -f "$d/real"
# Each silent connection is closed after the handshake's 5 s, or for a
# newer one past --max-pending-per-source (32), and logged: the first 10 of
# a 10 s window of the source with a line each, the others counted in one
# line once the window ends.
gone="^$STAMP dnd: session 10.231.0.2:[0-9]*: \(handshake timed out at the client's hello\|closed before its handshake ended: its address has 32 handshakes pending (--max-pending-per-source)\)$"
more="more refused or failed connections from 10.231.0.2 in the last 10 s (not shown)"
for _ in $(seq 1 300); do
	shown=$(grep -c "$gone" "$T/serve.log")
	hidden=$(sed -n "s/^$STAMP dnd: \([0-9]*\) $more$/\1/p" "$T/serve.log")
	sum=$(echo "$hidden" | awk '{ s += $1 } END { print s + 0 }')
	[ $((shown + sum)) -ge 1000 ] && break
	sleep 0.1
done
windows=$(echo "$hidden" | grep -c .)
[ $((shown + sum)) = 1000 ] && [ "$windows" -ge 1 ] && [ "$shown" -le $((10 * windows + 10)) ] ||
	fail "1000 silent connections logged as $shown lines and '$hidden' more: $(tail -n3 "$T/serve.log")"
[ "$(grep -c "^$STAMP dnd: session 10.231.0.2:[0-9]*: handshake timed out at the client's hello$" "$T/serve.log")" -le 32 ] ||
	fail "more than --max-pending-per-source silent connections waited 5 s"
kill "$fpid" 2>/dev/null
ok "1000 idle connections: no process for them, a real client still served (in $waited s), each closed after 5 s or for a newer one: $shown lines and a count of $sum more"

# Connections that end before their first byte are closed by the server
# itself, with the cause; one still silent at a SIGTERM is closed too.
ns_conn() { # MODE: "fin" closes at once, "rst" resets, "hold" stays 20 s
	timeout 25 ip netns exec "$NS_B" perl -MSocket -e '
		socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
		connect($s, sockaddr_in($ARGV[0], inet_aton("10.231.0.1"))) or die "connect: $!";
		setsockopt($s, SOL_SOCKET, SO_LINGER, pack("ii", 1, 0)) if $ARGV[1] eq "rst";
		sleep 20 if $ARGV[1] eq "hold";
		close $s;' "$PORT" "$1"
}
ns_conn fin
wait_log "$T/serve.log" "session 10.231.0.2:[0-9]*: the peer closed the connection before the client's hello" \
	"a connection closed before its hello is not logged"
ns_conn rst
wait_log "$T/serve.log" "session 10.231.0.2:[0-9]*: handshake client's hello: Connection reset by peer" \
	"a connection reset before its hello is not logged"
bg "$T/hold.log" ns_conn hold
for _ in $(seq 1 100); do
	# Once accepted, the server's own fd holds the connection.
	ip netns exec "$NS_A" ss -Htnp state established "( sport = :$PORT )" | grep -q "pid=$SPID," && break
	sleep 0.05
done
stop
grep -q "session 10.231.0.2:[0-9]*: the server stopped before the client's hello" "$T/serve.log" ||
	fail "a silent connection at SIGTERM is not logged: $(tail -n3 "$T/serve.log")"
grep -q "the session process" "$T/serve.log" &&
	fail "a connection without a byte got a process: $(grep "the session process" "$T/serve.log")"
ok "a connection closed, reset or still silent before its first byte: closed by the server, with the cause"
serve --key "$T/key"

# --allow: a peer outside the prefixes is closed at once, and logged.
stop; serve --key "$T/key" --allow 10.9.0.0/16,127.0.0.1
expect_exit 1 cli send --key "$T/key" --to denied "$T/src"
grep -q "session 10.231.0.2:[0-9]*: refused: not in --allow" "$T/serve.log" || fail "--allow not logged"
stop; serve --key "$T/key" --allow 10.231.0.0/24 --grace 0.5
expect_exit 0 cli send --key "$T/key" --to allowed "$T/src"
rm -f "$d/allowed"
only_known "$base"
ok "--allow: outside refused, inside served"

# A declared length above the free space is refused with both figures.
expect_exit 1 cli send --key "$T/key" --to huge -l 1000000000000000 /dev/zero
expect_out "server refused: "
expect_out "1000000000000000"
ok "free space checked up front"

# --replace: an existing name is replaced atomically.
stop; serve --key "$T/key" --replace --grace 0.5
expect_exit 0 cli send --key "$T/key" --to exists "$T/src"
cmp -s "$T/src" "$d/exists" || fail "--replace did not replace"
echo old >"$d/exists"

# SIGTERM in the middle of a transfer: exit 0 within the grace, nothing left.
(cat /dev/zero | ip netns exec "$NS_B" "$DND" send --key "$T/key" -c 10.231.0.1 -p "$PORT" --to cut - >/dev/null 2>&1) &
cpid=$!
_pids+=("$cpid")
wait_size "$d/.cut.dnd-*" 20000000
t0=$(date +%s)
stop
[ $(($(date +%s) - t0)) -le 5 ] || fail "SIGTERM took $(($(date +%s) - t0)) s"
wait "$cpid" 2>/dev/null
only_known "$base"
grep -q "session 10.231.0.2:[0-9]* push cut -m rw: .*failed: interrupted by" "$T/serve.log" ||
	fail "the cut session is not logged: $(tail -n3 "$T/serve.log")"
ok "SIGTERM: exit 0 after the grace, the running session cut, nothing left"
