#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# A man in the middle for dnd's tests (dnd serve, one-shot): accepts one
# client on LADDR:LPORT, relays it to TADDR:TPORT, and by MODE
#   flip SIZE  flips one bit of the trailer's hash (the 24-byte "DNDT"
#              message for SIZE bytes, in whichever direction it goes)
#   stranger SRC  when the server answers, finds the session's streams
#              port (ss) and first connects two strangers there (junk
#              from address SRC, and a plain join without TLS), then
#              lets the client on
#   flipat OFF flips the byte at offset OFF of the direction that gets
#              there first (inside a TLS record once keyed)
#   pause SIZE once SIZE bytes went one way, stops reading that way until
#              SIGUSR1 (small socket buffers: the writer soon blocks), so
#              a test can act in the middle of a transfer
#   swap FROM TO  replaces the first FROM on the way with TO, as long (a
#              keyless request is not MACed: the server sees TO)
#   swaphex FROM TO  swap, the bytes given as hex (binary fields)
#   reset SIZE once it has passed SIZE bytes from the client on, resets
#              both connections (SO_LINGER 0), as a middlebox may
# Exits when both directions have ended, or after 30 s. Prints "flipped",
# "strangers", "paused", "swapped" or "reset" on stdout when it did.
use strict;
use warnings;
use Socket;
use IO::Select;

my ($la, $lp, $ta, $tp, $mode, $size, $to) = @ARGV;
($mode, $size, $to) = ('swap', pack('H*', $size), pack('H*', $to))
	if $mode eq 'swaphex';
alarm 30;
$| = 1;
my ($paused, $resume, %went) = (undef, 0);
$SIG{USR1} = sub { $resume = 1 };
socket(my $l, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
setsockopt($l, SOL_SOCKET, SO_REUSEADDR, 1);
# A fixed buffer also stops the kernel's autotuning from growing it.
setsockopt($l, SOL_SOCKET, SO_RCVBUF, 65536) if $mode eq 'pause';
bind($l, sockaddr_in($lp, inet_aton($la))) or die "bind: $!";
listen($l, 4) or die "listen: $!";
print "ready\n";
accept(my $c, $l) or die "accept: $!";
socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
setsockopt($s, SOL_SOCKET, SO_RCVBUF, 65536) if $mode eq 'pause';
connect($s, sockaddr_in($tp, inet_aton($ta))) or die "connect: $!";

my $want = $mode eq 'flip' ? "DNDT\0\0\0\x01" . pack('Q>', $size) :
	   $mode eq 'swap' ? $size : undef;
my $span = $mode eq 'flip' ? 24 : defined $want ? length $want : 0;
my (%pend, %peer, %open, @keep);
$pend{$c} = $pend{$s} = '';
$peer{$c} = $s; $peer{$s} = $c;
$open{$c} = $open{$s} = 1;
my $done = 0;

sub out {
	my ($to, $d) = @_;
	my $o = 0;
	while ($o < length $d) {
		my $n = syswrite($to, $d, length($d) - $o, $o);
		return unless defined $n;
		$o += $n;
	}
}

# Flips the trailer's hash, or swaps FROM, once whole in the pending bytes.
sub flip {
	my ($r) = @_;
	return if $done || !defined $want;
	my $at = index($$r, $want);
	return if $at < 0 || $at + $span > length $$r;
	$done = 1;
	if ($mode eq 'swap') {
		substr($$r, $at, $span) = $to;
		print "swapped\n";
		return;
	}
	substr($$r, $at + 16, 1) = chr(ord(substr($$r, $at + 16, 1)) ^ 1);
	print "flipped\n";
}

sub strangers {
	my ($d) = @_;
	return if $done || $mode ne 'stranger';
	# The streams message travels inside TLS: the session's own
	# listener, found beside the server's (an IPv6 socket shows the
	# address as [::ffff:ADDR]).
	my ($port) = grep { $_ != $tp && $_ != $lp }
		map { /[ :\[]\Q$ta\E\]?:(\d+)\s/ ? $1 : () } `ss -ltnH 2>/dev/null`;
	return unless $port;
	for my $junk ("x" x 64, "DNDJ" . pack('nnQ>Q>Q>', 1, 2, 7, 0, 0) .
		      "\0" x 32) {
		socket(my $x, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
		bind($x, sockaddr_in(0, inet_aton($size))) or die "bind: $!"
			if $junk =~ /^x/;
		connect($x, sockaddr_in($port, inet_aton($ta))) or die "connect: $!";
		out($x, $junk);
		push @keep, $x;
	}
	select(undef, undef, undef, 0.3);
	$done = 1;
	print "strangers\n";
}

# flipat: flips the byte at offset SIZE of whichever direction reaches it.
my %seen;
sub flipat {
	my ($h, $r, $n) = @_;
	return if $done || $mode ne 'flipat';
	my $at = $size - ($seen{$h} // 0);
	$seen{$h} += $n;
	return if $at < 0 || $at >= $n;
	substr($$r, $at, 1) = chr(ord(substr($$r, $at, 1)) ^ 1);
	$done = 1;
	print "flipped\n";
}

# Cuts both connections with a reset each, once SIZE bytes went on.
my $passed = 0;
sub cut {
	my ($h, $n) = @_;
	return if $mode ne 'reset' || $h != $c;
	$passed += $n;
	return if $passed < $size;
	for my $x ($c, $s) {
		setsockopt($x, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
		close($x);
	}
	print "reset\n";
	exit 0;
}

my $sel = IO::Select->new($c, $s);

# Stops reading $h once SIZE bytes came from it.
sub pause {
	my ($h, $n) = @_;
	return if $done || $mode ne 'pause';
	$went{$h} += $n;
	return if $went{$h} < $size;
	$sel->remove($h);
	($paused, $done) = ($h, 1);
	print "paused\n";
}

while ($open{$c} || $open{$s}) {
	if ($paused && $resume) {
		$sel->add($paused);
		$paused = undef;
	}
	my @r = $sel->can_read(0.05);
	if (!@r) {
		for my $h ($c, $s) {
			next unless length $pend{$h};
			flip(\$pend{$h});
			out($peer{$h}, $pend{$h});
			$pend{$h} = '';
		}
		next;
	}
	for my $h (@r) {
		my $n = sysread($h, my $d, 65536);
		if (!$n) {
			flip(\$pend{$h});
			out($peer{$h}, $pend{$h});
			$pend{$h} = '';
			shutdown($peer{$h}, 1);
			$sel->remove($h);
			$open{$h} = 0;
			next;
		}
		strangers($d) if $h == $s;
		flipat($h, \$d, $n);
		pause($h, $n);
		$pend{$h} .= $d;
		flip(\$pend{$h});
		my $keep = $span ? $span - 1 : 0;
		my $go = length($pend{$h}) - $keep;
		next if $go <= 0;
		out($peer{$h}, substr($pend{$h}, 0, $go));
		$pend{$h} = substr($pend{$h}, $go);
		cut($h, $go);
	}
}
