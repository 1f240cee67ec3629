#!/bin/bash
# SPDX-License-Identifier: MIT
# What a stranger gets from dnd serve before it proves the key, and what a
# session process holds. Two source addresses on loopback: 127.0.0.2 floods,
# 127.0.0.1 is the real client.
#  - keyed: 300 connections from 127.0.0.2 that send half a preamble and
#    stall get no process; 127.0.0.2 keeps at most --max-pending-per-source
#    of them, its oldest closed for each newer one, and pushes from
#    127.0.0.1 land byte-exact meanwhile;
#  - keyless: the first-byte rule forks, but 127.0.0.2's pending children
#    stay within the same limit;
#  - /metrics refuses a scraper outside --allow;
#  - a session process holds its connection, its log pipe and files, not
#    the listeners, other clients' connections or other sessions' pipes.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip "curl is not installed (scripts/deps.sh)"
timeout 5 perl -MSocket -e 'socket(my $s, PF_INET, SOCK_STREAM, 0) or die;
	bind($s, sockaddr_in(0, inet_aton("127.0.0.2"))) or die;' 2>/dev/null ||
	skip "127.0.0.2 cannot be a source address here"

(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
random_file "$T/src" 2000000
LIMIT=16

# serve ARGS...: dnd serve on a fresh port with DIR $T/d; sets SPID, PORT.
serve() {
	rm -rf "$T/d"; mkdir "$T/d"
	next_port
	bg "$T/serve.log" "$DND" serve --dir "$T/d" -p "$PORT" --grace 1 \
		--max-pending-per-source "$LIMIT" --log-burst 0 "$@"
	SPID=$BPID
	wait_log "$T/serve.log" "listening on .*:$PORT" "serve did not start"
}
stop() {
	kill "$SPID" 2>/dev/null
	wait_for "$SPID" 20 >/dev/null
}
# flood N BYTES: N connections from 127.0.0.2 that each send BYTES (printf
# format) and stall; prints how many connected to $T/flood.out once all
# did, then holds them until killed (60 s at most). Sets FPID.
flood() {
	: >"$T/flood.out"
	timeout 60 perl -MSocket -e '
		my ($port, $n, $bytes) = @ARGV; my @s;
		for (1..$n) {
			socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
			bind($s, sockaddr_in(0, inet_aton("127.0.0.2"))) or die "bind: $!";
			connect($s, sockaddr_in($port, inet_aton("127.0.0.1"))) or last;
			syswrite($s, $bytes);
			push @s, $s;
		}
		$| = 1; print scalar(@s), "\n"; sleep 60;' "$PORT" "$1" "$(printf "$2")" >"$T/flood.out" &
	FPID=$!
	_pids+=("$FPID")
	for _ in $(seq 1 400); do [ -s "$T/flood.out" ] && break; sleep 0.05; done
	[ "$(cat "$T/flood.out")" = "$1" ] || fail "the flood opened '$(cat "$T/flood.out")' of $1 connections"
}
# count_log PATTERN N WHAT: waits (10 s at most) until the server's log has
# N lines matching PATTERN, then fails unless it has exactly N.
count_log() {
	local c
	for _ in $(seq 1 200); do
		c=$(grep -c "$1" "$T/serve.log")
		[ "$c" -ge "$2" ] && break
		sleep 0.05
	done
	[ "$c" = "$2" ] || fail "$3: $c lines, not $2: $(tail -n3 "$T/serve.log")"
}
push() { # push NAME [ARGS...]: from 127.0.0.1, must land byte-exact
	local name=$1; shift
	expect_exit 0 "$DND" send -c 127.0.0.1 -p "$PORT" "$@" --to "$name" "$T/src"
	cmp -s "$T/src" "$T/d/$name" || fail "push $name differs"
}

# --- keyed: no process before the proof, and a limit per address.
serve --key "$T/key"
flood 300 'DNDa'
kids=$(pgrep -c -P "$SPID" || true)
[ "$kids" = 0 ] || fail "300 connections that have not proven the key hold $kids processes"
count_log "session 127\.0\.0\.2:[0-9]*: closed before its handshake ended: its address has $LIMIT handshakes pending (--max-pending-per-source)" \
	$((300 - LIMIT)) "127.0.0.2's connections closed past its limit"
kids=$(pgrep -c -P "$SPID" || true)
[ "$kids" = 0 ] || fail "300 connections that have not proven the key hold $kids processes"
for i in 1 2 3; do push "k$i" --key "$T/key"; done
grep -q "session 127\.0\.0\.2:[0-9]*.* bytes in .*" "$T/serve.log" &&
	fail "a flooding connection got a session: $(grep "session 127.0.0.2:[0-9]*.* bytes in" "$T/serve.log" | head -n1)"
grep -q "session 127\.0\.0\.1:[0-9]*: closed before" "$T/serve.log" &&
	fail "a real client's connection was closed for the flood"
kill "$FPID" 2>/dev/null
ok "keyed: 300 stalled connections from one address get no process, $LIMIT pending at most; 127.0.0.1 is served"

stop

# --- keyless: no proof, the first byte forks; the limit holds the children.
serve
flood 300 'D'
# Each one past the limit costs 127.0.0.2 its oldest: a child killed, or a
# connection closed that was not forked yet.
count_log "session 127\.0\.0\.2:[0-9]*: \(the session process was killed by Killed\|closed before its handshake ended: its address has $LIMIT handshakes pending\)" \
	$((300 - LIMIT)) "127.0.0.2's pending ones closed past its limit"
kids=$(pgrep -c -P "$SPID" || true)
[ "$kids" -le "$LIMIT" ] || fail "127.0.0.2 holds $kids processes, more than --max-pending-per-source $LIMIT"
for i in 1 2; do push "n$i"; done
kill "$FPID" 2>/dev/null
ok "keyless: 300 connections from one address hold $kids processes at most $LIMIT; 127.0.0.1 is served"
stop

# --- /metrics honours --allow, and what a session process holds.
next_port
MPORT=$PORT
serve --key "$T/key" --allow 127.0.0.1/32 --metrics "127.0.0.1:$MPORT"
wait_log "$T/serve.log" "metrics on http://" "no metrics line"
url=$(grep -o 'http://[0-9.:]*/metrics' "$T/serve.log" | head -n1)
[ -n "$url" ] || fail "no metrics line: $(cat "$T/serve.log")"
curl -s --max-time 5 "$url" | grep -q '^dnd_serve_connections_total ' ||
	fail "/metrics from 127.0.0.1 (inside --allow): $(curl -sS --max-time 5 "$url" 2>&1)"
body=$(curl -s --max-time 5 --interface 127.0.0.2 "$url")
rc=$?
[ "$rc" != 0 ] && [ -z "$body" ] || fail "/metrics from 127.0.0.2 (outside --allow): curl exit $rc, '$body'"
ok "--metrics: a scraper inside --allow is answered, one outside is not"

# hold NAME: a keyed push of NAME held until the test closes fd $HFD.
hold() {
	hold_push "$T/d" "$1" "$DND" send --key "$T/key" -c 127.0.0.1 -p "$PORT" --to "$1" -
}
hold first
h1=$HPID f1=$HFD
# Two silent connections wait in the parent meanwhile.
exec {s1}<>/dev/tcp/127.0.0.1/"$PORT" {s2}<>/dev/tcp/127.0.0.1/"$PORT"
hold second
h2=$HPID f2=$HFD
kid=$(pgrep -n -P "$SPID")
[ -n "$kid" ] || fail "no session process for the held push"
# Past stdin, stdout and stderr (the server's own).
kinds=$(for f in /proc/"$kid"/fd/*; do
	[ "${f##*/}" -gt 2 ] || continue
	l=$(readlink "$f") || continue
	case $l in
	socket:*) echo socket ;;
	pipe:*) echo pipe ;;
	anon_inode:*) echo "$l" ;;
	esac
done | sort | uniq -c | awk '{ printf "%s %s;", $1, $2 }')
[ "$kinds" = "1 pipe;1 socket;" ] ||
	fail "the session process holds '$kinds', not its connection and its log pipe alone: $(ls -l /proc/"$kid"/fd/)"
ss -Htanp 2>/dev/null | grep "pid=$kid," | grep -q '^ESTAB' ||
	fail "the session's one socket is not its connection: $(ss -Htanp | grep "pid=$kid,")"
exec {f1}>&- {f2}>&- {s1}>&- {s2}>&-
wait "$h1" || fail "the first held push failed: $(cat "$T/first.log")"
wait "$h2" || fail "the second held push failed: $(cat "$T/second.log")"
ok "a session process holds its connection and log pipe, not the listeners or other clients' descriptors"
stop

# --- the -P streams port: silent connections there do not hold the real
# streams. The client's third connect (stream 0, the kernel TLS check after
# its handshake, then stream 1) is held 5 s by strace, so that three silent
# connections reach the session's streams port first; with --timeout 12 a
# port that gave each of them its 5 s in turn would never see the real
# streams.
command -v strace >/dev/null || skip "strace is not installed (the streams part needs its delay injection)"
serve --key "$T/key" --timeout 12
# LeakSanitizer cannot run under ptrace: without leak checks there.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
strace -f -o "$T/p4.strace" -e trace=connect -e inject=connect:delay_enter=5000000:when=3 \
	"$DND" send --key "$T/key" -c 127.0.0.1 -p "$PORT" -P 4 --to p4 "$T/src" >"$T/p4.log" 2>&1 &
cpid=$!
_pids+=("$cpid")
sport=
for _ in $(seq 1 200); do
	for kid in $(pgrep -P "$SPID"); do
		sport=$(ss -Htlnp 2>/dev/null | grep "pid=$kid," | awk '{ print $4 }' | sed 's/.*://' | head -n1)
		[ -n "$sport" ] && break 2
	done
	sleep 0.05
done
[ -n "$sport" ] || fail "no streams port came up: $(cat "$T/serve.log" "$T/p4.log")"
exec {q1}<>/dev/tcp/127.0.0.1/"$sport" {q2}<>/dev/tcp/127.0.0.1/"$sport" {q3}<>/dev/tcp/127.0.0.1/"$sport"
wait "$cpid" || fail "-P 4 beside 3 silent connections on the streams port: $(cat "$T/p4.log")"
cmp -s "$T/src" "$T/d/p4" || fail "-P 4 push differs"
grep "DELAYED" "$T/p4.strace" | grep -q "htons($sport)" ||
	fail "the connect held was not stream 1's: $(grep DELAYED "$T/p4.strace")"
exec {q1}>&- {q2}>&- {q3}>&-
ok "-P 4: three silent connections to the streams port do not hold the real streams"
stop
