#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A soak of dnd serve (issue 22). One keyed server (--key, --max-sessions,
# --max-bytes, --timeout, --metrics) in one network namespace, its clients
# in another across a veth pair, and a keyless server on the first one's
# loopback for the methods a key rules out, all under a mixed load for
# SECONDS:
#   - pushes and pulls of a pool of files (0, 1 and 2 bytes, odd sizes, up
#     to SOAK_MAX_MIB MiB) with random methods at both ends, -P 1-8, some
#     read from a pipe (-P 1, with -l or without); the methods are those
#     each end accepts, found by a 0-byte transfer per method before the
#     load (keyed: rw and mmap without kernel TLS);
#   - clients SIGKILLed (by PID) in the middle of a push or a pull;
#   - every 4-10 s a round of SOAK_FLOOD connections from a third address,
#     held 2-7 s: half silent, half stalled after the 3 bytes of a TLS
#     record header (each of those costs the server a handshake process);
#   - a push or a pull with a wrong key every 2-5 s;
#   - pushes into a SOAK_FULL_MIB MiB tmpfs mounted at DIR/full, half full
#     of ballast, which overflow and must fail cleanly.
# Then, with every client gone, it checks, and lists each failure:
#   - every push and pull that exited 0 is byte-exact (xxh3 of the pool);
#   - every failure was an injected one (lost: none), and failed cleanly:
#     nothing under the target's name, and a push that filled the disk
#     told its client so (the server's reason, not only a reset);
#     a client that gave up waiting for the verdict ("the data may have
#     landed") is listed too: a failed check if its file landed other
#     bytes, a note if it landed byte-exact (slow, not lost: the client
#     failed and said the data may have landed);
#   - no temporary or partial file is left beneath DIR (land.h's
#     ".NAME.dnd-*"), nor beside a pull's target except a killed client's;
#   - each server's descriptor count is back at its starting level exactly,
#     and its RSS within SOAK_RSS_SLACK_KIB (default 512 KiB: stdio and
#     malloc keep a few pages of a busy run) of it; the starting level is
#     taken after the 0-byte transfers, so one-time allocations are in it;
#   - no real client was refused because of the flood: no session of the
#     clients' address ended before its request (closed unserved, killed,
#     cut or timed out in its handshake) but by a wrong key, and no client
#     lost while a flood round ran or in the 10 s after it;
#   - both servers stop on SIGTERM with exit 0.
# It prints what it did: sessions served, bytes moved, faults injected by
# kind, what was lost, the CPU steal time during the load.
#
# Usage: scripts/soak-serve.sh SECONDS     (as root: namespaces, a mount)
# Environment: DND (default ./dnd), SOAK_CLIENTS (4), SOAK_MAX_MIB (40),
# SOAK_FLOOD (300), SOAK_FULL_MIB (32), SOAK_RSS_SLACK_KIB (512),
# SOAK_KEEP=1 keeps the scratch directory and logs.
# Exit: 0 every check passed, 1 a check failed, 2 usage or setup error.

# All of it in one group, read before it runs: an edit of this file while
# a soak runs cannot change what that soak does.
{
set -uo pipefail

secs=${1:-}
case $secs in '' | *[!0-9]*) echo "usage: $0 SECONDS" >&2; exit 2 ;; esac
[ "$secs" -gt 0 ] || { echo "usage: $0 SECONDS (at least 1)" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
CLIENTS=${SOAK_CLIENTS:-4}
MAX_MIB=${SOAK_MAX_MIB:-40}
FLOOD=${SOAK_FLOOD:-300}
FULL_MIB=${SOAK_FULL_MIB:-32}
RSS_SLACK_KIB=${SOAK_RSS_SLACK_KIB:-512}
CLIENT_TMO=90		# timeout(1) on every client; dnd's own --timeout 30
[ "$(id -u)" = 0 ] || { echo "$0: needs root (namespaces, a tmpfs)" >&2; exit 2; }
[ -x "$DND" ] || { echo "$0: no dnd at $DND (make, or set DND)" >&2; exit 2; }
for t in jq xxhsum perl curl ss timeout; do
	command -v "$t" >/dev/null ||
		{ echo "$0: needs $t (scripts/deps.sh installs it)" >&2; exit 2; }
done

# shellcheck disable=SC2034	# netns_cleanup kills $pids: none, see below
pids=()
jobs_=()	# the load's process groups (set -m)
spid='' kpid='' mounted='' NS_A='' NS_B=''
. "$here/scripts/netns.sh"

now() { date +%s.%N; }
# wait_until SEC CMD...: true once CMD succeeds, polled; false after SEC.
wait_until() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.05
	done
}
soak_cleanup() {
	local j p
	# (bash's "Killed" line for each job goes where the group's stderr does)
	{ for j in "${jobs_[@]}"; do kill -KILL -- "-$j"; wait "$j"; done; } 2>/dev/null
	# SIGTERM first: a server then ends its sessions (their own groups).
	for p in $spid $kpid; do
		kill -TERM "$p" 2>/dev/null
		wait_until 10 eval "! kill -0 $p 2>/dev/null" || kill -KILL "$p"
	done
	wait 2>/dev/null
	[ -z "$mounted" ] || umount "$srv/full" 2>/dev/null
	if [ "${SOAK_KEEP:-}" = 1 ]; then
		echo "soak: kept $dir" >&2
		dir=
	fi
	netns_cleanup
}
dir=$(mktemp -d /tmp/dnd-soak.XXXXXX)
srv=$dir/srv cli=$dir/cli
trap soak_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# A copy: a rebuild of ./dnd during the soak must not change the binary.
cp "$DND" "$dir/dnd" && DND=$dir/dnd
netns_pair 10.234.0
trap soak_cleanup EXIT		# netns_pair set its own
ip -n "$NS_B" link show "$VETH_B" >/dev/null 2>&1 ||
	{ echo "$0: cannot make the network namespaces" >&2; exit 2; }
A=(ip netns exec "$NS_A") B=(ip netns exec "$NS_B")
ip_s=10.234.0.1 ip_c=10.234.0.2 ip_f=10.234.0.3
ip -n "$NS_B" addr add "$ip_f/24" dev "$VETH_B"
kport=13931 lport=13932 mport=13933	# the namespaces are ours alone

# pause MS: a random pause of 0..MS ms (load shaping, not synchronisation).
pause() { sleep "$(printf '0.%03d' $((RANDOM % ($1 + 1))))"; }
# pick ARRAY: a random element in REPLY.
pick() { local -n _a=$1; REPLY=${_a[RANDOM % ${#_a[@]}]}; }
hash_of() { xxhsum -H3 <"$1" | sed 's/.* = //'; }
fail_note() { printf '%s\n' "$*" >>"$dir/fail.txt"; }
slow_note() { printf '%s\n' "$*" >>"$dir/slow.txt"; }
last_err() { grep -m1 '^dnd: ' "$1" | cut -c1-300; }

# The pool: hard links beneath DIR for pulls, the originals for pushes.
mkdir -p "$srv/pool" "$srv/in" "$srv/full" "$cli/pool" "$cli/out" "$dir/rec" "$dir/log"
: >"$dir/fail.txt"
: >"$dir/slow.txt"
: >"$dir/unused.txt"
max=$((MAX_MIB << 20))
sizes=(0 1 2 4095 4097 65537 1000003 3145735)
for _ in 1 2 3 4; do sizes+=($((SRANDOM % max + 1))); done
for _ in 1 2; do sizes+=($((max / 2 + SRANDOM % (max / 2) + 1))); done
declare -A psize phash
pool=() big=()
for i in "${!sizes[@]}"; do
	f=p$i
	head -c "${sizes[$i]}" /dev/urandom >"$cli/pool/$f"
	ln "$cli/pool/$f" "$srv/pool/$f"
	psize[$f]=${sizes[$i]} phash[$f]=$(hash_of "$cli/pool/$f")
	pool+=("$f")
	[ "${sizes[$i]}" -lt $((8 << 20)) ] || big+=("$f")
done
[ ${#big[@]} -gt 0 ] || big=("${pool[@]}")
mount -t tmpfs -o "size=${FULL_MIB}m" dnd-soak "$srv/full" ||
	{ echo "$0: cannot mount a tmpfs at $srv/full" >&2; exit 2; }
mounted=1
head -c $((FULL_MIB << 19)) /dev/zero >"$srv/full/ballast"

(umask 077 && "$DND" serve --new-key "$dir/key" 2>/dev/null &&
	"$DND" serve --new-key "$dir/wrong" 2>/dev/null) ||
	{ echo "$0: dnd serve --new-key failed" >&2; exit 2; }
"${A[@]}" "$DND" serve --dir "$srv" -p "$kport" --key "$dir/key" \
	--max-sessions 16 --max-bytes $((MAX_MIB + 8))Mi --timeout 30 \
	--grace 3 --json --metrics 127.0.0.1:$mport >"$dir/serve-key.log" 2>&1 &
spid=$!
"${A[@]}" "$DND" serve --dir "$srv" -p "$lport" --bind 127.0.0.1 \
	--max-sessions 8 --timeout 30 --grace 3 --json \
	>"$dir/serve-loop.log" 2>&1 &
kpid=$!
listens() { "${A[@]}" ss -Htln "sport = :$1" | grep -q .; }
for p in $kport $lport; do
	wait_until 20 listens "$p" ||
		{ echo "$0: no server listens on $p: $(cat "$dir"/serve-*.log)" >&2; exit 2; }
done
wait_until 20 grep -q "metrics on http://" "$dir/serve-key.log" ||
	{ echo "$0: no metrics address: $(cat "$dir/serve-key.log")" >&2; exit 2; }
murl=$(grep -o 'http://[^ ]*/metrics' "$dir/serve-key.log" | head -n1)
metric() { "${A[@]}" curl -s --max-time 5 "$murl" | awk -v k="$1" '$1 == k { print $2 }'; }

# Where a client reaches each server, and as whom.
K_ARGS=(-c "$ip_s" -p "$kport" --key "$dir/key" --timeout 30)
L_ARGS=(-c 127.0.0.1 -p "$lport" --timeout 30)
# cl NS ARGS...: one client, bounded (--foreground: in its job's process
# group, which the cleanup kills); its exit code.
cl() {
	local ns=$1
	shift
	ip netns exec "$ns" timeout --foreground -s KILL "$CLIENT_TMO" "$DND" "$@"
}

# The methods each end takes, keyed and keyless: every one dnd probe calls
# usable, kept if a 0-byte push (send) or pull (recv) with it succeeds, and
# for a push from a pipe a 1-byte one (pipe; -l 1 to the keyed server,
# whose --max-bytes wants the length); a usage refusal (exit 2: a key needs
# kernel TLS, null lands nothing, mmap cannot map a pipe) drops it, anything
# else is a failure.
readarray -t probe_send < <("$DND" probe --json | jq -r '.methods[] | select(.usable and .send) | .name')
readarray -t probe_recv < <("$DND" probe --json | jq -r '.methods[] | select(.usable and .recv) | .name')
KS=() KR=() LS=() LR=() KP=() LP=()
discover() { # discover keyed|loop send|recv|pipe METHOD
	local log="$dir/disc-$1-$2-$3.log" ns=$NS_B rc
	local -a args=("${K_ARGS[@]}")
	[ "$1" = loop ] && ns=$NS_A args=("${L_ARGS[@]}")
	case $2 in
	send) cl "$ns" send "${args[@]}" -m "$3" --to "in/d-$1-$3" "$cli/pool/p0" ;;
	pipe) [ "$1" = loop ] || args+=(-l 1)
		cat "$cli/pool/p1" | cl "$ns" send "${args[@]}" -m "$3" --to "in/d-$1-$3" - ;;
	recv) cl "$ns" recv "${args[@]}" -m "$3" --from pool/p0 "$cli/out/d-$1-$3" ;;
	esac >"$log" 2>&1
	rc=$?
	rm -f "$srv/in/d-$1-$3" "$cli/out/d-$1-$3"
	case $rc in
	0) return 0 ;;
	2) echo "$1 $2 -m $3: $(last_err "$log")" >>"$dir/unused.txt" ;;
	*) fail_note "discovery: $1 $2 -m $3 exited $rc: $(last_err "$log")" ;;
	esac
	return 1
}
for m in "${probe_send[@]}"; do
	discover keyed send "$m" && KS+=("$m")
	discover loop send "$m" && LS+=("$m")
	discover keyed pipe "$m" && KP+=("$m")
	discover loop pipe "$m" && LP+=("$m")
done
for m in "${probe_recv[@]}"; do
	discover keyed recv "$m" && KR+=("$m")
	discover loop recv "$m" && LR+=("$m")
done
if [ ${#KS[@]} = 0 ] || [ ${#KR[@]} = 0 ] || [ ${#KP[@]} = 0 ] ||
	[ ${#LS[@]} = 0 ] || [ ${#LR[@]} = 0 ] || [ ${#LP[@]} = 0 ]; then
	echo "$0: a list of methods is empty: $(cat "$dir/fail.txt")" >&2
	exit 1
fi
echo "soak: $(wc -l <"$dir/unused.txt") method uses refused (exit 2) and left out: $(cut -d: -f1 "$dir/unused.txt" | paste -sd, | sed 's/,/, /g')"
echo "soak: keyed: send ${KS[*]}; from a pipe ${KP[*]}; recv ${KR[*]}"
echo "soak: keyless: send ${LS[*]}; from a pipe ${LP[*]}; recv ${LR[*]}"

# quiet PID PORT: the server has no session process and holds no client
# connection; for the keyed one its metrics agree.
quiet() {
	! pgrep -P "$1" >/dev/null || return 1
	! "${A[@]}" ss -Htanp "sport = :$2" | awk '$1 != "LISTEN"' |
		grep -q "pid=$1," || return 1
	if [ "$1" = "$spid" ]; then
		[ "$(metric dnd_serve_waiting)" = 0 ] && [ "$(metric dnd_serve_children)" = 0 ]
	fi
}
fds() { ls "/proc/$1/fd" | wc -l; }
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
for p in "$spid:$kport" "$kpid:$lport"; do
	wait_until 30 quiet "${p%:*}" "${p#*:}" ||
		{ echo "$0: server ${p%:*} not quiet before the load" >&2; exit 1; }
done
fd0_k=$(fds "$spid") rss0_k=$(rss "$spid") fd0_l=$(fds "$kpid") rss0_l=$(rss "$kpid")
ls -l "/proc/$spid/fd" "/proc/$kpid/fd" >"$dir/fds-start.txt"

# One transfer and its verdict, recorded in $dir/rec/WORKER as
# "id kind outcome bytes t0 t1 what"; outcome is ok, expected (an injected
# fault that failed as it must), killed, lost or bad.
# xfer ID KIND SRV DIR SRC FEED SUB [KEY]: KIND normal|full|wrongkey|kill,
# SRV keyed|loop, DIR push|pull, SRC a pool file, FEED file|pipe|decl
# (a pipe with -l), SUB the push's directory beneath DIR (in or full).
xfer() {
	local id=$1 kind=$2 s=$3 d=$4 f=$5 feed=$6 sub=$7 key=${8:-$dir/key}
	local log="$dir/log/$id.log" ns=$NS_B m pm n rc t0 t1 out what tpid cpid
	local -a args=("${K_ARGS[@]}") cmd
	local snd=KS rcv=KR pip=KP
	args[5]=$key
	[ "$s" = keyed ] || ns=$NS_A args=("${L_ARGS[@]}") snd=LS rcv=LR pip=LP
	[ "$feed" != decl ] || [ "${psize[$f]}" != 0 ] || feed='file'
	[ "$feed" = file ] || snd=$pip
	n=$((1 + RANDOM % 8))
	if [ "$d" = push ]; then
		pick $snd; m=$REPLY; pick $rcv; pm=$REPLY
		out="$srv/$sub/$id"
		[ "$feed" = file ] || n=1	# a pipe is read once: one stream
		cmd=(send "${args[@]}" -m "$m" --peer-method "$pm" -P "$n" --to "$sub/$id")
		case $feed in
		file) cmd+=("$cli/pool/$f") ;;
		pipe) cmd+=(-) ;;
		decl) cmd+=(-l "${psize[$f]}" -) ;;
		esac
	else
		pick $rcv; m=$REPLY; pick $snd; pm=$REPLY
		out="$cli/out/$id"
		cmd=(recv "${args[@]}" -m "$m" --peer-method "$pm" -P "$n" --from "pool/$f" "$out")
	fi
	what="$s $d $f (${psize[$f]} B) -m $m --peer-method $pm -P $n $feed"
	t0=$(now)
	if [ "$kind" = kill ]; then
		# Not through cl: $! is then timeout itself, the client its child.
		ip netns exec "$ns" timeout --foreground -s KILL "$CLIENT_TMO" \
			"$DND" "${cmd[@]}" >"$log" 2>&1 &
		tpid=$!
		cpid=
		# The client (timeout's child) once its transfer is under way: its
		# temporary file is there.
		under_way() {
			cpid=$(pgrep -P "$tpid") || { ! kill -0 "$tpid" 2>/dev/null; return; }
			compgen -G "$(dirname "$out")/.$id.dnd-*" >/dev/null
		}
		wait_until 30 under_way
		pause 300
		if [ -n "$cpid" ] && kill -KILL "$cpid" 2>/dev/null; then
			{ wait "$tpid"; } 2>/dev/null	# no "Killed" line
			t1=$(now)
			echo "$id kill killed 0 $t0 $t1 $what" >>"$dir/rec/$W"
			echo "$id $out $f" >>"$dir/killed-$W"
			return
		fi
		wait "$tpid"
		rc=$?
		kind=normal
	elif [ "$feed" = file ]; then
		cl "$ns" "${cmd[@]}" >"$log" 2>&1
		rc=$?
	else
		cat "$cli/pool/$f" | cl "$ns" "${cmd[@]}" >"$log" 2>&1
		rc=${PIPESTATUS[1]}
	fi
	t1=$(now)
	judge "$id" "$kind" "$rc" "$out" "$f" "$t0 $t1 $what"
}

# judge ID KIND RC OUT SRC REST: the verdict of a finished transfer.
judge() {
	local id=$1 kind=$2 rc=$3 out=$4 f=$5 rest=$6 err outcome=ok bytes=0 what
	err=$(last_err "$dir/log/$id.log")
	if [ "$rc" = 0 ] && [ "$kind" = wrongkey ]; then
		outcome=bad
		fail_note "$id: a wrong key was accepted ($rest)"
	elif [ "$rc" = 0 ]; then
		if [ ! -f "$out" ]; then
			outcome=bad
			fail_note "$id: exited 0 but nothing landed at $out ($rest)"
		elif [ "$(hash_of "$out")" != "${phash[$f]}" ]; then
			outcome=bad
			fail_note "$id: exited 0 but $out differs from $f ($rest)"
		else
			bytes=${psize[$f]}
		fi
		rm -f "$out"
	else
		if [ -e "$out" ] && grep -q "the data may have landed" "$dir/log/$id.log"; then
			# The client gave up waiting for the verdict, and said so.
			outcome=unconfirmed
			if [ "$(hash_of "$out")" = "${phash[$f]}" ]; then
				slow_note "$id: the client gave up waiting for the server's verdict (exit $rc: $err); the file landed byte-exact ($rest)"
			else
				fail_note "$id: the client gave up waiting for the server's verdict (exit $rc: $err), and the file had landed, DIFFERENT from $f ($rest)"
			fi
		else
			case "$kind:$rc:$err" in
			wrongkey:1:*"authentication failed"*) outcome=expected ;;
			full:1:*"disk full"* | full:1:*"No space left"* | full:1:*"does not fit"*)
				outcome=expected ;;
			full:1:*handshake*) outcome=lost ;;	# not as far as the disk
			full:1:*)	# clean, but did the client hear why? (below)
				outcome=unnamed
				echo "$id $err" >>"$dir/unnamed" ;;
			*) outcome=lost ;;
			esac
			if [ "$outcome" = lost ]; then
				[ "$rc" = 137 ] && err="hung: killed by timeout after $CLIENT_TMO s"
				fail_note "$id: lost: exited $rc: $err ($rest)"
			fi
			if [ -e "$out" ]; then
				outcome=bad
				fail_note "$id: failed (exit $rc) but left $out ($rest)"
			fi
		fi
		rm -f "$out"
		case $out in "$cli"/*) ! compgen -G "$cli/out/.$id.dnd-*" >/dev/null ||
			fail_note "$id: failed (exit $rc) and left $(compgen -G "$cli/out/.$id.dnd-*")" ;;
		esac
	fi
	echo "$id $kind $outcome $bytes $rest${err:+ | $err}" >>"$dir/rec/$W"
}

end=$(($(date +%s) + secs))
running() { [ "$(date +%s)" -lt "$end" ]; }

worker() {
	local n=0 id r s d feed
	while running; do
		n=$((n + 1)) id=$W-$n r=$((RANDOM % 100))
		s=keyed d=push feed=file
		[ $((RANDOM % 2)) = 0 ] || d=pull
		if [ $r -lt 55 ]; then			# keyed pushes and pulls
			[ $((RANDOM % 4)) != 0 ] || feed=decl
			pick pool
			xfer "$id" normal keyed $d "$REPLY" $feed in
		elif [ $r -lt 73 ]; then		# keyless: every method
			[ $((RANDOM % 3)) != 0 ] || feed=pipe
			pick pool
			xfer "$id" normal loop $d "$REPLY" $feed in
		elif [ $r -lt 85 ]; then		# into the small tmpfs
			pick pool
			if [ $((RANDOM % 2)) = 0 ]; then
				xfer "$id" full keyed push "$REPLY" file full
			else
				xfer "$id" full loop push "$REPLY" pipe full
			fi
		else					# killed mid-transfer
			[ $((RANDOM % 3)) != 0 ] || s=loop
			pick big
			xfer "$id" kill $s $d "$REPLY" file in
		fi
		pause 200
	done
}

wrong_keys() {
	local n=0 d
	while running; do
		sleep $((2 + RANDOM % 4))
		running || break
		n=$((n + 1)) d=push
		[ $((RANDOM % 2)) = 0 ] || d=pull
		pick pool
		xfer "wk-$n" wrongkey keyed $d "$REPLY" file in "$dir/wrong"
	done
}

# One flood round: FLOOD connections from ip_f, the first half stalled
# after 3 bytes, held HOLD s; prints "opened stalled".
flood_round() {
	timeout --foreground 60 "${B[@]}" perl -MSocket -e '
		my ($ip, $port, $src, $n, $hold) = @ARGV;
		my (@s, $stalled);
		for my $i (1 .. $n) {
			socket(my $s, PF_INET, SOCK_STREAM, 0) or last;
			bind($s, sockaddr_in(0, inet_aton($src))) or last;
			connect($s, sockaddr_in($port, inet_aton($ip))) or next;
			if ($i <= $n / 2) { syswrite($s, "\x16\x03\x01"); $stalled++ }
			push @s, $s;
		}
		sleep $hold;
		print scalar(@s), " ", $stalled || 0, "\n";' \
		"$ip_s" "$kport" "$ip_f" "$FLOOD" "$1"
}
flood() {
	local t0 r
	while running; do
		sleep $((4 + RANDOM % 7))
		running || break
		t0=$(now)
		r=$(flood_round $((2 + RANDOM % 6)))
		echo "$t0 $(now) ${r:-0 0}" >>"$dir/flood.tsv"
	done
}

cpu0=$(head -n1 /proc/stat)
set -m		# each job its own process group, for the cleanup
for w in $(seq 1 "$CLIENTS"); do
	W=w$w worker &
	jobs_+=($!)
done
W=wk wrong_keys &
jobs_+=($!)
[ "$FLOOD" -gt 0 ] && { flood & jobs_+=($!); }
for j in "${jobs_[@]}"; do wait "$j"; done
jobs_=()
set +m
cpu1=$(head -n1 /proc/stat)

# The clients are gone: the servers settle (the flood's last connections
# time out after the 5 s handshake deadline), then the checks.
failed=()
check() { failed+=("$*"); }
for p in "$spid:$kport:keyed" "$kpid:$lport:keyless"; do
	IFS=: read -r pp port name <<<"$p"
	wait_until 60 quiet "$pp" "$port" ||
		check "the $name server still has sessions or connections 60 s after the last client: $(pgrep -P "$pp" | tr '\n' ' ')"
done
# Killed clients: a push's target or a pull's landing is absent or
# exact; a killed pull's own temporary file is the client's, not litter.
kill_left=0
for k in "$dir"/killed-*; do
	[ -e "$k" ] || continue
	while read -r id out f; do
		if [ -e "$out" ] && [ "$(hash_of "$out")" != "${phash[$f]}" ]; then
			check "$id: a killed client's $out differs from $f"
		fi
		rm -f "$out"
		case $out in "$cli"/*)
			for t in "$cli/out/.$id".dnd-*; do
				[ -e "$t" ] && { rm -f "$t"; kill_left=$((kill_left + 1)); }
			done ;;
		esac
	done <"$k"
done
litter=$(cd "$srv" && find . -name '.*.dnd-*' | sort | tr '\n' ' ')
[ -z "$litter" ] || check "temporary or partial files left beneath DIR: $litter"
left=$(cd "$srv" && find in full ! -name ballast -type f | sort | tr '\n' ' ')
[ -z "$left" ] || check "files beneath DIR that no verified push explains: $left"
left=$(ls -A "$cli/out" | tr '\n' ' ')
[ -z "$left" ] || check "files beside the pulls' targets: $left"

fds_back() { [ "$(fds "$1")" -le "$2" ]; }
for p in "$spid:$fd0_k:$rss0_k:keyed:k" "$kpid:$fd0_l:$rss0_l:keyless:l"; do
	IFS=: read -r pp fd0 rss0 name v <<<"$p"
	wait_until 10 fds_back "$pp" "$fd0"
	fd1=$(fds "$pp") rss1=$(rss "$pp")
	printf -v "fd1_$v" %s "$fd1"
	printf -v "rss1_$v" %s "$rss1"
	[ "$fd1" = "$fd0" ] ||
		check "the $name server holds $fd1 descriptors, $fd0 before the load: $(ls -l "/proc/$pp/fd" | tail -n +2 | awk '{ print $NF }' | sort | tr '\n' ' ')"
	[ "$rss1" -le $((rss0 + RSS_SLACK_KIB)) ] ||
		check "the $name server's RSS is $rss1 KiB, $rss0 KiB before the load (slack $RSS_SLACK_KIB KiB)"
done
ls -l "/proc/$spid/fd" "/proc/$kpid/fd" >"$dir/fds-end.txt"
m_sessions=$("${A[@]}" curl -s --max-time 5 "$murl" | awk '/^dnd_serve_sessions_total/ { s += $2 } END { print s + 0 }')

# Real clients the flood pushed out: the server's word for it (sessions of
# the clients' address that ended before their request other than by a
# wrong key: closed unserved, killed, timed out), and any client lost
# while a round ran or in the 10 s after it (the server's 5 s handshake
# deadline twice: its last flood connections are still being closed).
evicted=$(grep '^{' "$dir/serve-key.log" | jq -r --arg a "$ip_c:" '
	select(.type == "serve_session" and (.peer | startswith($a)) and
	       .direction == null and
	       ((.error // "") | test("authentication failed") | not))
	| "\(.time) \(.peer): \(.error)"' | paste -sd ';' | sed 's/;/; /g')
[ -z "$evicted" ] || check "sessions of real clients that ended before their request, in the server's log: $evicted"
if [ -s "$dir/flood.tsv" ]; then
	during=$(cat "$dir"/rec/* | awk '$3 == "lost"' |
		awk 'NR == FNR { a[NR] = $1; b[NR] = $2; n = NR; next }
		     { for (i = 1; i <= n; i++) if ($5 < b[i] + 10 && $6 > a[i]) { print $1; next } }' \
			"$dir/flood.tsv" - | tr '\n' ' ')
	[ -z "$during" ] || check "clients lost while a flood round ran: $during"
fi

stop_server() { # stop_server PID NAME: SIGTERM; exit 0 within 20 s
	local rc
	kill -TERM "$1"
	wait_until 20 eval "! kill -0 $1 2>/dev/null" || {
		check "the $2 server did not stop 20 s after SIGTERM"
		kill -KILL "$1"
	}
	wait "$1"
	rc=$?
	[ "$rc" = 0 ] || check "the $2 server exited $rc after SIGTERM"
}
stop_server "$spid" keyed
stop_server "$kpid" keyless
spid='' kpid=''
grep -h "Sanitizer" "$dir"/serve-*.log >/dev/null &&
	check "a sanitizer report in the servers' logs: $(grep -h -m3 Sanitizer "$dir"/serve-*.log)"
while read -r l; do check "$l"; done <"$dir/fail.txt"
# A push that failed on the full disk must say so: the server's reason.
if [ -e "$dir/unnamed" ]; then
	while read -r id err; do
		said=$(grep -h "\"name\":\"full/$id\"" "$dir"/serve-*.log | jq -r .error)
		check "$id: a push into the full tmpfs failed cleanly, but the client said only '$err'; the server's reason: '$said'"
	done <"$dir/unnamed"
fi

# The summary.
recs() { cat "$dir"/rec/*; }
count() { recs | awk -v k="$1" -v o="$2" '($2 == k || k == "") && ($3 == o || o == "") { n++ } END { print n + 0 }'; }
sessions() { # sessions LOG: "N served (ok K, failed F), B bytes"
	grep '^{' "$1" | jq -rs '[.[] | select(.type == "serve_session" and .direction != null)]
		| "\(length) served (\([.[] | select(.verdict != "failed")] | length) ok, \([.[] | select(.verdict == "failed")] | length) failed), \([.[] | select(.verdict != "failed") | .bytes] | add // 0) bytes"'
}
read -r -a c0 <<<"$cpu0"
read -r -a c1 <<<"$cpu1"
tot=0
for i in 1 2 3 4 5 6 7 8; do tot=$((tot + c1[i] - c0[i])); done
steal=$((c1[8] - c0[8]))
hz=$(getconf CLK_TCK)
fr=0 fc=0 fs=0
[ -s "$dir/flood.tsv" ] && read -r fr fc fs < <(awk '{ r++; c += $3; s += $4 } END { print r, c, s }' "$dir/flood.tsv")
echo
echo "soak-serve: $secs s, $CLIENTS clients, pool of ${#pool[@]} files (0 B to $(printf '%s\n' "${sizes[@]}" | sort -n | tail -n1) B)"
echo "  transfers: $(count "" "") ($(count normal ok) verified, $(count full ok) verified into the full tmpfs)"
echo "  verified bytes: $(recs | awk '{ s += $4 } END { printf "%.1f MiB", s / 1048576 }')"
echo "  keyed server: $(sessions "$dir/serve-key.log"); metrics dnd_serve_sessions_total $m_sessions"
echo "  keyless server: $(sessions "$dir/serve-loop.log")"
echo "  faults: $(count kill killed) clients killed; $fr flood rounds, $fc connections ($fs stalled);"
echo "          $(count wrongkey expected) wrong keys refused; $(count full expected) pushes failed on the full disk"
echo "          ($kill_left killed pulls' own temporary files removed)"
echo "  lost: $(count "" lost); bad: $(count "" bad); failed without the cause: $(count "" unnamed); landed after the client gave up: $(count "" unconfirmed)"
echo "  steal: $(awk -v s="$steal" -v t="$tot" -v h="$hz" 'BEGIN { printf "%.1f%% of CPU time (%.1f s)", t ? 100 * s / t : 0, s / h }')"
# shellcheck disable=SC2154	# fd1_* and rss1_*: printf -v above
echo "  keyed server: fds $fd0_k -> $fd1_k, RSS $rss0_k -> $rss1_k KiB; keyless: fds $fd0_l -> $fd1_l, RSS $rss0_l -> $rss1_l KiB (slack $RSS_SLACK_KIB KiB)"
if [ -s "$dir/slow.txt" ]; then
	echo "slow, not lost ($(wc -l <"$dir/slow.txt")):"
	sed 's/^/  - /' "$dir/slow.txt"
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED checks (${#failed[@]}):"
	printf '  - %s\n' "${failed[@]}"
	[ "${SOAK_KEEP:-}" = 1 ] || echo "  (SOAK_KEEP=1 keeps the logs)"
	exit 1
fi
echo "PASS: every check"
exit 0
}
