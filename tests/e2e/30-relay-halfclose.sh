#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Half-close through dnd relay: the client sends, shuts down its write side,
# and only then does the far end answer; the whole answer must come back.
. "$(dirname "$0")/lib.sh"

# relay_done N: the relay ($rpid) stops on SIGTERM (exit 0) having
# completed N flows, none failed or reset.
relay_done() {
	kill -TERM "$rpid"
	wait "$rpid" || fail "relay exit $?: $(cat "$T/relay.log")"
	grep -q "completed $1, failed 0, resets 0" "$T/relay.log" ||
		fail "relay stats: $(cat "$T/relay.log")"
}

relay_modes
for m in $RELAY_MODES rw; do
	for flows in 1 20; do
		next_port; sink=$PORT
		next_port; rl=$PORT
		bg "$T/sink.log" "$DND" bench relay --sink -l "127.0.0.1:$sink" --count "$flows"
		spid=$BPID
		bg "$T/relay.log" "$DND" relay -m "$m" -l "127.0.0.1:$rl" -t "127.0.0.1:$sink"
		rpid=$BPID
		wait_listen "$sink"
		wait_listen "$rl"
		expect_exit 0 "$DND" bench relay --client -t "127.0.0.1:$rl" --flows "$flows" --bytes 8Mi --reply 24Mi --half-close
		expect_out "peer client: $flows flows ok, 0 failed; sent 8388608 B, received 25165824 B"
		wait "$spid" || fail "sink: $(cat "$T/sink.log")"
		relay_done "$flows"
		ok "$m relay, $flows flows: request, FIN, then the whole reply"
	done
done

# The other way round: the target answers and shuts down its write side
# first; the client sees the whole answer, then EOF, and only then sends
# its own bytes and FIN, which the target must get in full before its EOF.
# tfirst PORT ROLE N: ROLE "target" listens on PORT, sends N bytes, shuts
# down writing, reads to EOF; "client" connects, reads to EOF, sends N
# bytes, shuts down writing, reads to EOF. Each prints "got M then EOF" (or
# the error that ended it).
tfirst() {
	timeout 30 perl -MSocket -e '
		my ($port, $role, $n) = @ARGV;
		$SIG{PIPE} = "IGNORE";
		socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
		if ($role eq "target") {
			setsockopt($s, SOL_SOCKET, SO_REUSEADDR, 1);
			bind($s, sockaddr_in($port, inet_aton("127.0.0.1"))) or die "bind: $!";
			listen($s, 1) or die "listen: $!";
			print STDERR "listening\n";
			accept(my $c, $s) or die "accept: $!"; $s = $c;
		} else {
			connect($s, sockaddr_in($port, inet_aton("127.0.0.1"))) or die "connect: $!";
		}
		my $d = "h" x 65536;
		my $send = sub { my $o = 0; while ($o < $n) {
			my $k = syswrite($s, $d, $n - $o < 65536 ? $n - $o : 65536);
			defined $k or die "send: $!"; $o += $k; } shutdown($s, 1); };
		my $read = sub { my ($t, $b, $k) = (0); $t += $k while ($k = sysread($s, $b, 65536));
			defined $k or die "read: $! after $t"; $t };
		if ($role eq "target") { $send->(); print "got ", $read->(), " then EOF\n"; }
		else { my $t = $read->(); $send->(); my $e = $read->(); print "got $t then EOF, then $e\n"; }
	' "$@"
}
for m in $RELAY_MODES rw; do
	next_port; tp=$PORT
	next_port; rl=$PORT
	bg "$T/target.log" tfirst "$tp" target 3000000
	tpid=$BPID
	wait_text "$T/target.log" listening
	bg "$T/relay.log" "$DND" relay -m "$m" -l "127.0.0.1:$rl" -t "127.0.0.1:$tp"
	rpid=$BPID
	wait_listen "$rl"
	got=$(tfirst "$rl" client 5000000 2>&1)
	[ "$got" = "got 3000000 then EOF, then 0" ] || fail "$m: client: $got; relay: $(cat "$T/relay.log")"
	wait "$tpid" || fail "$m: target: $(cat "$T/target.log")"
	grep -q "^got 5000000 then EOF$" "$T/target.log" || fail "$m: target: $(cat "$T/target.log")"
	relay_done 1
	ok "$m relay: the target's answer and FIN first, then the client's bytes and FIN, each whole"
done
