#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd relay under faults and limits: a target that is down (its clients are
# reset, uploads included), no pipes left (--max-pipes 1), an idle timeout,
# too many connections for the fd limit, and usage errors.
. "$(dirname "$0")/lib.sh"

# usage_err ARGS... TEXT: exit 2 and TEXT on stderr.
usage_err() {
	local text=${*: -1}
	expect_exit 2 "$DND" relay "${@:1:$#-1}"
	expect_out "$text"
}
usage_err -t 127.0.0.1:1 "relay needs -l [ADDR:]PORT"
usage_err -l 1 "relay needs -t HOST:PORT"
usage_err -l 1 -t 127.0.0.1 "give HOST:PORT"
usage_err -l 1 -t ::1:80 "write an IPv6 address as [ADDR]:PORT"
usage_err -l 70000 -t 127.0.0.1:1 "the port must be a number from 1 to 65535"
usage_err -l 1 -t 127.0.0.1:1 -m sendfile "the relay's methods are splice, rw and sockmap"
usage_err -l 1 -t 127.0.0.1:1 --max-conn 0 "--max-conn '0': too small"
usage_err -l 1 -t 127.0.0.1:1 --pipe-size 12x "--pipe-size '12x': not a size"
usage_err -l 1 -t 127.0.0.1:1 -m rw --pipe-size 1Mi "--pipe-size is for -m splice"
usage_err -l 1 -t 127.0.0.1:1 -m sockmap --pipe-size 1Mi "-m sockmap uses no pipes"
ok "usage errors exit 2 and name the fix"

# -m sockmap where it cannot run (here: no CAP_BPF, CAP_NET_ADMIN) exits 2
# and names the cause.
relay_modes
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ "$RELAY_MODES" != splice ]; then
	next_port
	expect_exit 2 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$DND" relay -m sockmap -l "127.0.0.1:$PORT" -t 127.0.0.1:1
	expect_out "dnd: relay: -m sockmap needs CAP_BPF and CAP_NET_ADMIN"
	ok "-m sockmap without CAP_BPF: exit 2 and the reason"
fi

next_port
expect_exit 1 "$DND" relay -l "127.0.0.1:$PORT" -t 127.0.0.1:1 --max-conn 1000000
expect_out "--max-conn 1000000 needs 2000064 file descriptors"
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || expect_out "allows $hard (ulimit -Hn), enough for $(((hard - 64) / 2)) flows"
ok "too many connections for RLIMIT_NOFILE: a clear start-up error that says how many fit"

# upload PORT BYTES: sends BYTES to 127.0.0.1:PORT, shuts down writing and
# reads to the end; prints how it ended: "EOF after N" (a clean close: the
# client must believe its N bytes went through), or "ECONNRESET after N",
# "EPIPE after N" (the first error of any call). connect() itself may
# give ECONNRESET: the relay can accept, find the target down and reset
# the flow before the client is scheduled again, and connect() then
# reports the reset that closed its socket [__inet_stream_connect()].
upload() {
	timeout 20 perl -MSocket -MErrno -e '
		my ($port, $len) = @ARGV;
		$SIG{PIPE} = "IGNORE";
		sub why { $!{ECONNRESET} ? "ECONNRESET" : $!{EPIPE} ? "EPIPE" : "$!" }
		socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
		if (!connect($s, sockaddr_in($port, inet_aton("127.0.0.1")))) {
			die "connect: $!" unless $!{ECONNRESET};
			print "ECONNRESET after 0\n";
			exit 0;
		}
		my $d = "u" x 65536; my ($o, $end) = (0, "");
		while ($o < $len) {
			my $n = syswrite($s, $d, $len - $o < 65536 ? $len - $o : 65536);
			if (!defined $n) { $end = why(); last; }
			$o += $n;
		}
		if (!$end) {
			shutdown($s, 1); my ($b, $n);
			1 while ($n = sysread($s, $b, 65536));
			$end = defined $n ? "EOF" : why();
		}
		print "$end after $o\n";
	' "$1" "$2"
}

# Target down: each client is reset (its bytes went nowhere, so it must not
# see a clean end), counted, and the relay goes on serving once the target
# is up.
relay_modes
for m in $RELAY_MODES; do
	next_port; sink=$PORT
	next_port; rl=$PORT
	bg "$T/relay.log" "$DND" relay -m "$m" -l "127.0.0.1:$rl" -t "127.0.0.1:$sink" --json
	rpid=$BPID
	wait_listen "$rl"
	expect_exit 1 "$DND" bench relay --client -t "127.0.0.1:$rl" --flows 5 --bytes 0 --reply 1Mi
	echo "$OUT" | grep -qE "Connection reset by peer|Broken pipe" || fail "no reset: $OUT"
	expect_out "0 flows ok, 5 failed"
	for n in 1 100000 8000000; do
		got=$(upload "$rl" $n)
		case $got in
		ECONNRESET*|EPIPE*) ;;
		*) fail "an upload of $n bytes to a refused target ended with '$got', not a reset" ;;
		esac
	done
	grep -q "relay: cannot connect to 127.0.0.1:$sink: Connection refused; the client is reset" "$T/relay.log" ||
		fail "cause not logged: $(cat "$T/relay.log")"
	bg "$T/sink.log" "$DND" bench relay --sink -l "127.0.0.1:$sink" --count 3
	spid=$BPID
	wait_listen "$sink"
	expect_exit 0 "$DND" bench relay --client -t "127.0.0.1:$rl" --flows 3 --bytes 3Mi --reply 3Mi
	wait "$spid" || fail "sink: $(cat "$T/sink.log")"
	kill -TERM "$rpid"
	wait "$rpid" || fail "relay exit $?"
	[ "$(jnum "$T/relay.log" failed)" = 8 ] && [ "$(jnum "$T/relay.log" completed)" = 3 ] ||
		fail "relay stats: $(tail -n1 "$T/relay.log")"
	ok "$m relay, target down: uploading clients reset, not closed, and counted (failed 8), then 3 flows served"
done

# One pipe for twenty flows. A direction holds a pipe only while its data
# is stuck (the destination is full), so the sink stops reading until the
# relay reports fallbacks; then every byte must still arrive. 8 MiB a flow
# is more than the relay's send buffer (tcp_wmem max, 4 MiB) plus the sink's
# receive buffer can hold, so some flow must block with data in its pipe.
next_port; sink=$PORT
next_port; rl=$PORT
bg "$T/sink.log" "$DND" bench relay --sink -l "127.0.0.1:$sink" --count 20 --pause
spid=$BPID
bg "$T/relay.log" "$DND" relay -l "127.0.0.1:$rl" -t "127.0.0.1:$sink" --max-pipes 1 --json
rpid=$BPID
wait_listen "$sink"
wait_listen "$rl"
bg "$T/client.log" "$DND" bench relay --client -t "127.0.0.1:$rl" --flows 20 --bytes 160Mi --reply 20Mi
cpid=$BPID
for _ in $(seq 1 100); do
	kill -USR1 "$rpid"
	sleep 0.1
	fb=$(jnum "$T/relay.log" fallbacks)
	[ "${fb:-0}" -ge 1 ] && break
done
[ "${fb:-0}" -ge 1 ] || fail "no fallback with one pipe: $(tail -n1 "$T/relay.log")"
kill -USR1 "$spid"
wait "$cpid" || fail "client: $(cat "$T/client.log")"
grep -q "20 flows ok, 0 failed" "$T/client.log" || fail "client: $(cat "$T/client.log")"
wait "$spid" || fail "sink: $(cat "$T/sink.log")"
kill -TERM "$rpid"
wait "$rpid" || fail "relay exit $?"
fb=$(jnum "$T/relay.log" fallbacks)
[ "$fb" -ge 1 ] && [ "$(jnum "$T/relay.log" pipes_created)" = 1 ] &&
	[ "$(jnum "$T/relay.log" completed)" = 20 ] &&
	[ "$(jnum "$T/relay.log" read_calls)" -gt 0 ] || fail "relay stats: $(tail -n1 "$T/relay.log")"
ok "--max-pipes 1, 20 flows: all verified, $fb flows fell back to copying (counted)"

# An idle flow is reset (never closed with a FIN that would look complete).
for m in $RELAY_MODES; do
	next_port; sink=$PORT
	next_port; rl=$PORT
	bg "$T/sink.log" "$DND" bench relay --sink -l "127.0.0.1:$sink" --count 2
	spid=$BPID
	bg "$T/relay.log" "$DND" relay -m "$m" -l "127.0.0.1:$rl" -t "127.0.0.1:$sink" --idle-timeout 0.3 --json
	rpid=$BPID
	wait_listen "$sink"
	wait_listen "$rl"
	expect_exit 1 "$DND" bench relay --client -t "127.0.0.1:$rl" --flows 2 --bytes 2Mi --reply 1Mi --half-close --pause
	expect_out "Connection reset by peer"
	wait "$spid" && fail "the sink took a cut flow for complete: $(cat "$T/sink.log")"
	kill -TERM "$rpid"
	wait "$rpid" || fail "relay exit $?"
	[ "$(jnum "$T/relay.log" idle_closed)" = 2 ] || fail "relay stats: $(tail -n1 "$T/relay.log")"
	ok "$m relay, --idle-timeout: idle flows reset on both sides and counted"
done

# Out of file descriptors (the limit lowered under the running relay):
# accept fails with EMFILE, the listener rests instead of spinning, and
# every flow is served as others close.
command -v prlimit >/dev/null || skip "prlimit (util-linux) is missing"
next_port; sink=$PORT
next_port; rl=$PORT
bg "$T/sink.log" "$DND" bench relay --sink -l "127.0.0.1:$sink" --count 30
spid=$BPID
bg "$T/relay.log" "$DND" relay -l "127.0.0.1:$rl" -t "127.0.0.1:$sink" --json
rpid=$BPID
wait_listen "$sink"
wait_listen "$rl"
prlimit --pid "$rpid" --nofile=16:16 || fail "prlimit on the relay"
expect_exit 0 "$DND" bench relay --client -t "127.0.0.1:$rl" --flows 30 --bytes 30Mi --reply 3Mi
wait "$spid" || fail "sink: $(cat "$T/sink.log")"
kill -TERM "$rpid"
wait "$rpid" || fail "relay exit $?"
grep -q "relay: Too many open files; new connections wait" "$T/relay.log" ||
	fail "EMFILE not reported: $(cat "$T/relay.log")"
[ "$(jnum "$T/relay.log" accept_errors)" -ge 1 ] && [ "$(jnum "$T/relay.log" listener_pauses)" -ge 1 ] &&
	[ "$(jnum "$T/relay.log" completed)" = 30 ] || fail "relay stats: $(tail -n1 "$T/relay.log")"
ok "EMFILE on accept: listener paused, all 30 flows served"
