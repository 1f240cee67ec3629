# SPDX-License-Identifier: MIT
# Shared helpers for the end-to-end scripts. Source it first:
#   . "$(dirname "$0")/lib.sh"
# Provides: $DND, $T (a scratch dir removed at exit), fail, skip, $PY3,
# next_port, start_recv/wait_recv, expect_exit, require_feature, setup_ns.
set -u
: "${DND:?set DND to the dnd binary}"
T=$(mktemp -d /tmp/dnd-e2e.XXXXXX)
_pids=()
_netns=()
_cleanup_hooks=()

cleanup() {
	local p n h
	for h in "${_cleanup_hooks[@]}"; do eval "$h"; done
	for p in "${_pids[@]}"; do kill "$p" 2>/dev/null; done
	for n in "${_netns[@]}"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
ok() { echo "ok - $*"; }

# A port nobody uses now (other tests may run beside us): a random base
# per script, then the next one that ss shows no socket on.  Ports stay
# below the kernel's ephemeral range, where an outgoing connection of
# another test could take one between this check and the listen.
_eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
[ "$_eph" -gt 21000 ] || _eph=32768
_port=$((20000 + RANDOM % (_eph - 20500)))
next_port() {
	local i
	for i in $(seq 1 200); do
		_port=$((_port + 1))
		[ $_port -lt "$_eph" ] || _port=20001
		ss -Htan "( sport = :$_port or dport = :$_port )" 2>/dev/null |
			grep -q . || break
	done
	PORT=$_port
}

# start_recv LOG ARGS...: dnd recv -p $PORT in the background; sets RPID.
# Returns once it listens (or has exited): a sender fails at once on a
# refused connection unless it is given --connect-timeout.
start_recv() {
	local log=$1 i; shift
	: >"$log"	# as bg()
	"$DND" recv -p "$PORT" "$@" >"$log" 2>&1 &
	RPID=$!
	_pids+=("$RPID")
	for i in $(seq 1 500); do
		grep -q "^dnd: listening on " "$log" && return 0
		kill -0 "$RPID" 2>/dev/null || return 0
		sleep 0.02
	done
	fail "dnd recv -p $PORT $* did not listen in 10 s: $(cat "$log")"
}

# start_recv_traced OUT CALLS LOG ARGS...: dnd recv -p $PORT ARGS under
# strace -f -y -e trace=CALLS (its lines in OUT, no leak check: LeakSanitizer
# cannot run under ptrace), in the background; sets RPID. Returns once it
# listens.
start_recv_traced() {
	local out=$1 calls=$2 log=$3; shift 3
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -y -e trace="$calls" -e signal=none -o "$out" \
		"$DND" recv -p "$PORT" "$@" >"$log" 2>&1 &
	RPID=$!
	_pids+=("$RPID")
	wait_listen "$PORT"
}

# wait_for PID SEC: waits for PID (a child of this shell) at most SEC
# seconds; returns its exit code, or 124 after killing it at the deadline.
wait_for() {
	local i
	for i in $(seq 1 $(($2 * 50))); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.02
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1"
		wait "$1"
		return 124
	fi
	wait "$1"
}

# wait_recv: waits for RPID, at most 20 s (a receiver whose sender never
# came would wait for ever): then it is killed and RRC is 124.
wait_recv() {
	wait_for "$RPID" 20
	RRC=$?
}

# xfer "SEND ARGS" "RECV ARGS": one transfer on $PORT (next_port first);
# logs in $T/s.log and $T/r.log, exit codes in SRC and RRC.
xfer() {
	local sargs=$1 rargs=$2
	next_port
	# shellcheck disable=SC2086
	start_recv "$T/r.log" $rargs
	# shellcheck disable=SC2086
	"$DND" send -p "$PORT" $sargs >"$T/s.log" 2>&1
	SRC=$?
	wait_recv
}

# expect_exit CODE CMD...: runs CMD; fails unless it exits with CODE
# (a death by signal is never accepted). Output is kept in $OUT.
expect_exit() {
	local want=$1 rc; shift
	OUT=$("$@" 2>&1)
	rc=$?
	[ $rc -ge 128 ] && fail "$* died by signal $((rc - 128)): $OUT"
	[ $rc -eq "$want" ] || fail "$* exited $rc, wanted $want: $OUT"
}

# expect_out TEXT: fails unless $OUT (from expect_exit) contains TEXT.
expect_out() {
	case "$OUT" in *"$1"*) ;; *) fail "expected '$1' in: $OUT" ;; esac
}

# require_feature NAME: skips (77) unless 'dnd probe --require NAME' says yes.
require_feature() {
	"$DND" probe --require "$1" >/dev/null 2>&1
	case $? in
	0) ;;
	77) skip "this kernel lacks $1 ($("$DND" probe --require "$1" 2>&1 | tail -n1))" ;;
	*) fail "dnd probe --require $1 failed" ;;
	esac
}

# relay_modes: RELAY_MODES gets the relay's kernel paths each guarantee is
# tested on: splice, plus sockmap when `dnd probe` sees its BPF redirect work
# here (else it says why sockmap is not tested).
relay_modes() {
	RELAY_MODES=splice
	if "$DND" probe --require sockmap-redirect >/dev/null 2>&1; then
		RELAY_MODES="splice sockmap"
	else
		echo "note: -m sockmap not tested: $("$DND" probe --require sockmap-redirect 2>&1 | tail -n1)"
	fi
}

# setup_ns A B: two namespaces joined by a veth pair, 10.231.0.1 in A and
# 10.231.0.2 in B (addresses exist only inside them). Skips without root.
setup_ns() {
	[ "$(id -u)" = 0 ] || skip "network namespaces need root"
	local a="dndt-a-$$" b="dndt-b-$$"
	ip netns add "$a" 2>/dev/null || skip "cannot create a network namespace"
	_netns+=("$a")
	ip netns add "$b" || fail "second namespace"
	_netns+=("$b")
	ip link add "va-$$" netns "$a" type veth peer name "vb-$$" netns "$b" ||
		fail "veth pair"
	ip -n "$a" addr add 10.231.0.1/24 dev "va-$$"
	ip -n "$b" addr add 10.231.0.2/24 dev "vb-$$"
	ip -n "$a" link set lo up
	ip -n "$b" link set lo up
	ip -n "$a" link set "va-$$" up
	ip -n "$b" link set "vb-$$" up
	NS_A=$a NS_B=$b
}

# ns_listen NS PORT: waits (up to 10 s) until something listens in NS.
ns_listen() {
	for _ in $(seq 1 200); do
		ip netns exec "$1" ss -Htln "sport = :$2" | grep -q . && return 0
		sleep 0.05
	done
	fail "nothing listens on port $2 in $1 after 10 s"
}

# random_file PATH SIZE: SIZE bytes of random data.
random_file() { head -c "$2" /dev/urandom >"$1"; }

# no_leftovers DIR: fails if DIR holds anything (targets or temporaries).
no_leftovers() {
	local left
	left=$(ls -A "$1")
	[ -z "$left" ] || fail "left behind in $1: $left"
}

# wait_listen PORT: waits (up to 10 s) until something listens on PORT.
wait_listen() {
	local i
	for i in $(seq 1 200); do
		ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
		sleep 0.05
	done
	fail "nothing listens on port $1 after 10 s"
}

# wait_size GLOB BYTES: waits (up to 10 s) until a file matching GLOB
# holds at least BYTES, so a kill lands in the middle of a transfer.
wait_size() {
	local i f s
	for i in $(seq 1 200); do
		for f in $1; do
			[ -f "$f" ] || continue
			s=$(stat -c %s "$f")
			[ "$s" -ge "$2" ] && return 0
		done
		sleep 0.05
	done
	fail "no file $1 reached $2 bytes in 10 s"
}

# wait_log FILE PATTERN WHAT: waits (up to 10 s) until FILE has a line
# matching PATTERN (grep); else fails with WHAT and the file.
wait_log() {
	local i
	for i in $(seq 1 200); do
		grep -q "$2" "$1" && return 0
		sleep 0.05
	done
	fail "$3: $(cat "$1")"
}

# be64 N: N as 8 big-endian bytes, for hand-made protocol messages.
be64() { printf "$(printf '%016x' "$1" | sed 's/../\\x&/g')"; }

# wait_text FILE TEXT: waits (up to 10 s) for TEXT to appear in FILE.
wait_text() {
	for _ in $(seq 1 200); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "no '$2' in $1 after 10 s: $(cat "$1")"
}

# STAMP: a basic regular expression (grep, sed) for the RFC 3339 time at
# the start of each line of dnd serve's text log: UTC, milliseconds.
STAMP='[0-9]\{4\}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]\{3\}Z'

# json_of LOG: the JSON lines of a log that also holds stderr ("dnd:
# listening on ..." and messages).
json_of() { grep '^{' "$1"; }

# recv_kind METHOD [P]: how a verifying receiver of -m METHOD over P streams
# says it verified (dnd(1), --verify received): as received where the method
# holds the bytes in memory (over P > 1 streams, each stream's range against
# the sender's hash of it); else by reading the landed file back.
recv_kind() {
	case $1:${2:-1} in
	rw:1 | uring:1 | vmsplice:1 | mmap:1 | tcpmmap:1 | splice:1) echo "as received" ;;
	uring-splice:* | *:1) echo "by reading back the landed file" ;;
	*) echo "as received, each of $2 ranges against the sender's" ;;
	esac
}

# Hand-made protocol messages (src/core/proto.h), in one place:
# msg_hdr LEN [IDENT]: the opening of a one-stream transfer of LEN payload
# bytes from a source of identity IDENT (default 0: none, as a pipe's)
# (header, plan from 0, stream 0's join; the receiver's accept is left
# unread); msg_hdr_seg: the same for segments; msg_trl BYTES HASH [FLAGS]:
# a trailer, FLAGS 1 (default) carries the hash.
be16() { printf "$(printf '%04x' "$1" | sed 's/../\\x&/g')"; }
msg_open() { # msg_open VERSION FLAGS LEN [IDENT]
	printf 'DNDH'; be16 "$1"; be16 "$2"; be64 "$3"; be64 7; be64 "${4:-0}"
	be16 1; head -c 14 /dev/zero
	printf 'DNDP'; head -c 20 /dev/zero
	printf 'DNDJ'; be16 0; be16 1; be64 7; be64 0; be64 "$3"
}
msg_hdr() { msg_open 6 0 "$1" "${2:-0}"; }
msg_hdr_seg() { msg_open 6 1 0; }
msg_trl() { printf "DNDT\\x00\\x00\\x00\\x$(printf %02x "${3:-1}")"; be64 "$1"; be64 "$2"; }

# xxh3 FILE: the file's XXH3-64 as 0x<hex> (for msg_trl).
xxh3() { echo "0x$(xxhsum -H3 "$1" 2>/dev/null | grep -oE '[0-9a-f]{16}' | head -n1)"; }

# perl_peer PORT MODE < BYTES: connects to 127.0.0.1:PORT, sends stdin and
# then, by MODE: "fin" shuts down writing and reads until the peer closes;
# "rst" closes at once with a reset (SO_LINGER 0); "stall" keeps the
# connection open 5 s without sending more. Bounded by timeout.
perl_peer() {
	timeout 20 perl -MSocket -e '
		my ($port, $mode) = @ARGV;
		socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
		connect($s, sockaddr_in($port, inet_aton("127.0.0.1")))
			or die "connect: $!";
		binmode STDIN; local $/; my $d = <STDIN>;
		my $o = 0;
		while ($o < length $d) {
			my $n = syswrite($s, $d, length($d) - $o, $o);
			defined $n or exit 0; $o += $n;
		}
		if ($mode eq "rst") {
			setsockopt($s, SOL_SOCKET, SO_LINGER, pack("ii", 1, 0));
			close $s; exit 0;
		}
		if ($mode eq "stall") { sleep 5; exit 0; }
		shutdown($s, 1); my $b; 1 while sysread($s, $b, 65536);
	' "$1" "$2"
}

# bg LOG CMD...: runs CMD in the background (killed at exit); sets BPID.
bg() {
	local log=$1; shift
	# Emptied here, not only in the child: a wait on LOG that starts at
	# once must not read an earlier run's lines.
	: >"$log"
	"$@" >"$log" 2>&1 &
	BPID=$!
	_pids+=("$BPID")
}

# jnum LOG KEY: the number after "KEY": in the last JSON line of LOG, the
# whole JSON number: json_f64 prints %.6g, so 7.4e-05 s of CPU is "7.4e-05"
# and a match that stopped at the "e" would read 7.4.
jnum() { tail -n1 "$1" | grep -oE "\"$2\":-?[0-9.]+([eE][-+]?[0-9]+)?" | cut -d: -f2; }

# Debian's python3, which scripts/deps.sh installs with python3-jsonschema;
# a pyenv or venv python3 earlier in PATH may lack that package.
PY3=/usr/bin/python3
# need_py3 [MODULE]: skips (77) unless $PY3 runs and imports MODULE.
need_py3() {
	"$PY3" -c "import ${1:-csv}" 2>/dev/null ||
		skip "$PY3 ${1:+with $1 }is missing; scripts/deps.sh installs python3 and python3-jsonschema"
}

# hold_push DIR NAME CMD...: runs CMD, a push of NAME that reads its stdin,
# from a FIFO held open for writing on fd $HFD until the test closes it
# ('exec {HFD}>&-'); returns once NAME's temporary file is in DIR. Output in
# $T/NAME.log; sets HPID and HFD.
hold_push() {
	local dir=$1 name=$2; shift 2
	mkfifo "$T/$name.fifo"
	"$@" <"$T/$name.fifo" >"$T/$name.log" 2>&1 &
	HPID=$!
	_pids+=("$HPID")
	exec {HFD}>"$T/$name.fifo"
	for _ in $(seq 1 200); do
		ls -A "$dir" | grep -q "^\.$name\.dnd-" && return 0
		sleep 0.05
	done
	fail "the held push $name did not start: $(cat "$T/$name.log")"
}

# freeze_transfer SRC DIR [RECV ARGS]: starts a transfer of SRC (over 100
# MiB, so it is still running) to DIR/dst, logs in $T/r.log and $T/s.log,
# and freezes the receiver (SIGSTOP) once data flows. Sets RPID and SPID.
# The sender takes $SEND_ARGS too (e.g. --key FILE).
freeze_transfer() {
	local src=$1 dir=$2; shift 2
	next_port
	start_recv "$T/r.log" -b 4Ki "$@" "$dir/dst"
	wait_listen "$PORT"
	# shellcheck disable=SC2086
	"$DND" send -c 127.0.0.1 -p "$PORT" ${SEND_ARGS:-} "$src" >"$T/s.log" 2>&1 &
	SPID=$!
	_pids+=("$SPID")
	wait_size "$dir/.dst.dnd-*" $((4 << 20))
	kill -STOP "$RPID"
}

# cut_transfer SRC DIR [RECV ARGS]: freeze_transfer, then the sender is
# killed and the receiver thawed; it takes what was in flight and fails.
# Sets KEPT from the record a --resume receiver keeps (empty without one).
cut_transfer() {
	freeze_transfer "$@"
	kill -9 "$SPID"
	kill -CONT "$RPID"
	wait_recv
	[ "$RRC" = 1 ] || fail "interrupted receiver exited $RRC: $(cat "$T/r.log")"
	# Under SANITIZE a leak report does not change the exit code.
	! grep -q "ERROR: [A-Za-z]*Sanitizer" "$T/r.log" ||
		fail "the receiver's sanitizer report: $(cat "$T/r.log")"
	KEPT=$(sed -n 's/^prefix //p' "$2/.dst.dnd-partial.info" 2>/dev/null)
}
