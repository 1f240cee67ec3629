#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd against the 2006 program it grew from (the 2006 thread, Jim Schutt's dnd.c):
# extracts that source from the thread's text at run time, shims it for today's glibc,
# builds it in a temp dir, and runs every send x receive pair it has, zero ->
# null and file -> file, beside dnd with the same flags, in alternating rounds.
# Usage: scripts/bench-seed.sh [-s SIZE] [-r ROUNDS] [-b BSZ] [-w WIN]
#                              [-o REGEX] [-k zero|file|both] [-t S,R]
#   -s  bytes per run (default 1Gi)     -r  rounds per pair (default 5)
#   -b  buffer (default 64Ki)           -w  TCP window (default 128Ki)
#   -o  only the pairs whose label matches REGEX, e.g. 'zero rw>rw'
#   -k  which kind of pairs (default both)
#   -t  pin every sender to CPU S and receiver to CPU R (taskset), both
#       programs alike, e.g. -t 0,1; default: the scheduler decides
# Env: DND (default ./dnd), SEEDS (folder with 000_*.txt), TMO (seconds per
# process, default 120). Medians; ratios are dnd / 2006 from this run.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
TMO=${TMO:-120}
SIZE=1Gi ROUNDS=5 BSZ=64Ki WIN=128Ki ONLY='' KIND=both PIN_S='' PIN_R=''
usage() { sed -n '7,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while getopts s:r:b:w:o:k:t:h c; do
	case $c in
	s) SIZE=$OPTARG ;; r) ROUNDS=$OPTARG ;; b) BSZ=$OPTARG ;;
	w) WIN=$OPTARG ;; o) ONLY=$OPTARG ;; k) KIND=$OPTARG ;;
	t) PIN_S=${OPTARG%,*} PIN_R=${OPTARG#*,} ;; *) usage ;;
	esac
done
[ $# -ge "$OPTIND" ] && usage
case $KIND in zero|file|both) ;; *) usage ;; esac
case $ROUNDS in ''|*[!0-9]*|0) usage ;; esac
for c in $PIN_S $PIN_R; do
	case $c in *[!0-9]*) usage ;; esac
	taskset -c "$c" true 2>/dev/null ||
		{ echo "bench-seed: cannot pin to CPU $c (taskset -c $c)" >&2; exit 2; }
done
[ -n "$PIN_S$PIN_R" ] && { [ -n "$PIN_S" ] && [ -n "$PIN_R" ] || usage; }
. "$here/scripts/bench-lib.sh"
bytes=$(bench_size "$SIZE") || exit 2
[ $((bytes % 1024)) -eq 0 ] || { echo "bench-seed: -s must be whole KiB (the 2006 program reports KiB)" >&2; exit 2; }
[ -x "$DND" ] || { echo "bench-seed: $DND missing: run make" >&2; exit 2; }
command -v gcc >/dev/null || { echo "bench-seed: gcc missing (scripts/deps.sh)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-seed: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }

# The seeds sit beside the repository (../shared/seeds); a worktree finds them
# beside the main clone.
seed=
for d in ${SEEDS:-} "$here/../shared/seeds" \
	 "$(git -C "$here" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)/../../shared/seeds"; do
	for f in "$d"/000_*.txt; do [ -f "$f" ] && seed=$f && break 2; done
done
[ -n "$seed" ] || { echo "bench-seed: the 2006 thread's text (000_*.txt: linux-kernel, 'splice/vmsplice performance test results') not found; set SEEDS=DIR to its folder" >&2; exit 2; }

W=$(mktemp -d "${TMPDIR:-/var/tmp}/dnd-seed.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the 2006 program: extract, shim, build --------------------------------
# splice.h: from its first comment to its closing #endif. dnd.c: from the
# copyright comment to the closing brace of main().
awk '/^\/\* Implement splice syscall support/ { p = 1 }
     p { print } p && /^#endif \/\* __do_splice_syscall_h__ \*\// { exit }' \
	"$seed" >"$W/splice.h"
awk '/^\/\* Copyright 2006 Sandia Corporation/ { p = 1 } !p { next }
     { print } /^int main\(/ { m = 1 } m && /^}$/ { exit }' "$seed" >"$W/dnd2006.c"
# Shims for today's glibc: RES_USE_INET6 is gone, so ask the resolver for
# AF_INET6 directly. Each must apply exactly once.
for pat in '^[[:space:]]*res_init();$' '_res\.options |= RES_USE_INET6;' \
	   'gethostbyname(opts->host_str)'; do
	[ "$(grep -c "$pat" "$W/dnd2006.c")" = 1 ] ||
		{ echo "bench-seed: the 2006 thread's text changed ($pat); fix the shims" >&2; exit 1; }
done
sed -i -e '/^[[:space:]]*res_init();$/d' -e '/_res\.options |= RES_USE_INET6;/d' \
	-e 's/gethostbyname(opts->host_str)/gethostbyname2(opts->host_str, AF_INET6)/' \
	"$W/dnd2006.c"
OLD=$W/dnd2006
gcc -O2 -D_LARGEFILE64_SOURCE -DHAVE_SPLICE_SYSCALL -I"$W" -o "$OLD" \
	"$W/dnd2006.c" 2>"$W/cc.err" ||
	{ cat "$W/cc.err" >&2; echo "bench-seed: the 2006 program did not build" >&2; exit 1; }

# --- one run ------------------------------------------------------------------
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 40000))
		[ -z "$(ss -Htan "sport = :$p" 2>/dev/null)" ] && { echo "$p"; return; }
	done
	echo "bench-seed: no free port" >&2; return 1
}

# start LABEL CMD...: runs CMD bounded by $TMO, CPU to $W/LABEL.cpu;
# label s or r is pinned to its CPU with -t.
start() {
	local l=$1 cpu; shift
	cpu=$([ "$l" = s ] && echo "$PIN_S" || echo "$PIN_R")
	[ -n "$cpu" ] && set -- taskset -c "$cpu" "$@"
	timeout -k 5 "$TMO" /usr/bin/time -f '%U %S' -o "$W/$l.cpu" "$@" \
		>"$W/$l.out" 2>"$W/$l.err" &
	pids+=($!)
	last=$!
}

finish() { # finish PID: waits, drops it from pids; the child's status
	local p=$1 rc=0 q keep=()
	wait "$p" || rc=$?
	for q in "${pids[@]}"; do [ "$q" = "$p" ] || keep+=("$q"); done
	pids=("${keep[@]}")
	return "$rc"
}

# run PROG SEND RECV SRC DST: prints "MB/s wall_s cpu_s steal_%" or
# "fail: why"
run() {
	local prog=$1 sm=$2 rm=$3 src=$4 dst=$5 port rp sp t0 t1 k0 k1 lim='' _
	local -a rx tx
	port=$(free_port) || return 1
	[ "$src" = /dev/zero ] && lim="-l $bytes"
	# A landing fills the page cache: from warm pages for every program
	# alike (bench_warm says why).
	[ "$dst" = /dev/null ] || { rm -f "$dst"; bench_warm "$bytes"; }
	case $prog in
	2006)	# the 2006 program opens its file O_EXCL unless -o or -t: -o for /dev/null
		rx=("$OLD" -p "$port" -b "$BSZ" -w "$WIN" -m "$rm")
		[ "$dst" = /dev/null ] && rx+=(-o)
		# shellcheck disable=SC2206
		tx=("$OLD" -c ::1 -p "$port" -b "$BSZ" -w "$WIN" -m "$sm" $lim) ;;
	dnd|nv)
		rx=("$DND" recv -p "$port" -b "$BSZ" -w "$WIN" -m "$rm")
		# shellcheck disable=SC2206
		tx=("$DND" send -c ::1 -p "$port" --connect-timeout 10 -b "$BSZ" -w "$WIN" -m "$sm" $lim)
		[ "$prog" = nv ] && rx+=(--no-verify) && tx+=(--no-verify) ;;
	esac
	start r "${rx[@]}" "$dst"
	rp=$last
	for _ in $(seq 100); do	# the 2006 sender does not retry connect
		[ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] && break
		kill -0 "$rp" 2>/dev/null || break
		sleep 0.05
	done
	k0=$(bench_ticks)
	t0=$(date +%s.%N)
	start s "${tx[@]}" "$src"
	sp=$last
	finish "$sp" || { finish "$rp" || true; echo "fail: sender: $(head -c 160 "$W/s.err" | tr '\n' ' ')"; return; }
	finish "$rp" || { echo "fail: receiver: $(head -c 160 "$W/r.err" | tr '\n' ' ')"; return; }
	t1=$(date +%s.%N)
	k1=$(bench_ticks)
	[ "$dst" = /dev/null ] || rm -f "$dst"
	# The receiver's clock, first byte received to last byte synced, in
	# both programs: the 2006 "Received N KiB in T sec: R MB/s", dnd
	# recv's "receiver: N bytes in T s: R MB/s".
	awk -v b="$bytes" -v w="$t1" -v w0="$t0" -v st="$(bench_steal_pct "$k0" "$k1")" \
	    -v cr="$(cat "$W/r.cpu")" -v cs="$(cat "$W/s.cpu")" '
		/^Received [0-9]+ KiB in / { n = $2 * 1024; r = $7 }
		/^receiver: [0-9]+ bytes in / { n = $2; r = $7 }
		END {
			split(cr, a, " "); split(cs, c, " ")
			if (n != b) { print "fail: received " n " bytes"; exit }
			printf "%s %.3f %.3f %s\n", r, w - w0, a[1] + a[2] + c[1] + c[2], st
		}' "$W/r.out"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "-"; exit }
	m = int((NR + 1) / 2); print (NR % 2) ? v[m] : (v[m] + v[NR / 2 + 1]) / 2 }'; }

# pair KIND SEND RECV: ROUNDS alternating rounds of 2006, dnd, dnd --no-verify
pair() {
	local kind=$1 sm=$2 rm=$3 label="$1 $2>$3" src dst r p order out
	[ -z "$ONLY" ] || [[ $label =~ $ONLY ]] || return 0
	if [ "$kind" = zero ]; then src=/dev/zero dst=/dev/null
	else
		src=$W/src dst=$W/dst
		# page cache idle for a minute may be dropped (DAMON pageout
		# on some VMs): every pair starts from a warm source
		cat "$src" >/dev/null
	fi
	: >"$W/res.2006"; : >"$W/res.dnd"; : >"$W/res.nv"
	for r in $(seq "$ROUNDS"); do
		order="2006 dnd nv"
		[ $((r % 2)) = 0 ] && order="nv dnd 2006"
		for p in $order; do
			# not in $(...): the children must stay in this
			# shell's pids, where the EXIT trap ends them
			run "$p" "$sm" "$rm" "$src" "$dst" >"$W/one"
			out=$(cat "$W/one")
			case $out in
			fail*) echo "| $label | $p $out | | | | | | | |"; return ;;
			esac
			echo "$out" >>"$W/res.$p"
		done
	done
	col() { awk -v c="$2" '{ print $c }' "$W/res.$1" | median; }
	awk -v l="$label" -v o="$(col 2006 1)" -v d="$(col dnd 1)" \
	    -v n="$(col nv 1)" -v co="$(col 2006 3)" -v cd="$(col dnd 3)" \
	    -v cn="$(col nv 3)" \
	    -v wo="$(col 2006 2)" -v wd="$(col dnd 2)" -v wn="$(col nv 2)" \
	    -v so="$(col 2006 4)" -v sd="$(col dnd 4)" -v sn="$(col nv 4)" 'BEGIN {
		printf "| %s | %.0f | %.0f | %.2fx | %.0f | %.2fx | %.2f / %.2f / %.2f | %.2f / %.2f / %.2f | %.1f / %.1f / %.1f |\n",
			l, o, d, d / o, n, n / o, co, cd, cn, wo, wd, wn, so, sd, sn }'
}

echo "# dnd vs the 2006 dnd (Jim Schutt's, linux-kernel), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo "# $SIZE per run, -b $BSZ -w $WIN, ::1, $ROUNDS alternating rounds, medians${PIN_S:+; sender on CPU $PIN_S, receiver on CPU $PIN_R};"
echo "# MB/s on each receiver's own clock (first byte in .. last byte synced); before each file run, memory is warmed (bench_warm in bench-lib.sh);"
echo "# CPU: user+sys of both processes, whole run; wall: sender start .. both exited;"
echo "# steal: the host's share of all CPUs over the same wall time (/proc/stat), median: a program that ran with more steal ran slower than its code"
echo
echo "| pair | 2006 MB/s | dnd MB/s | dnd/2006 | dnd no-verify MB/s | nv/2006 | CPU s 2006 / dnd / nv | wall s 2006 / dnd / nv | steal % 2006 / dnd / nv |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
# The 2006 program cannot mmap-send /dev/zero (size 0: it sends nothing) nor
# mmap-receive into /dev/null (ftruncate fails): those pairs are not run.
if [ "$KIND" != file ]; then
	for sm in rw sendfile splice; do
		for rm in rw vmsplice; do pair zero "$sm" "$rm"; done
	done
fi
if [ "$KIND" != zero ]; then
	head -c "$bytes" /dev/urandom >"$W/src"
	cat "$W/src" >/dev/null
	for sm in rw mmap sendfile splice; do
		for rm in rw mmap vmsplice; do pair file "$sm" "$rm"; done
	done
fi
echo
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg) (a shared machine: read ratios with the CPU column)"
