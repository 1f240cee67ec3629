#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 23's targets, measured in one run against references taken beside
# them, as the time a user waits for each command to be done:
#  (1) --direct: fio --direct=1 --ioengine=libaio --bs=1M --iodepth=16
#      --end_fsync=1 writes SIZE into DIR (its write runtime), against dnd
#      rw -> rw file -> loopback -> file with --direct on the receiver;
#      target: dnd >= 0.8x fio's rate;
#  (2) buffered: dd if=SRC of=DIR/x bs=1M conv=fdatasync (the seconds dd
#      reports), against dnd rw -> rw file -> file; target >= 1.0x dd;
#  (3) verification: dnd verified (the default) against --no-verify on both
#      ends, rw -> rw file -> file and zero -> null; target: verified at
#      most 5% slower.
# dnd's time is the sender's total_seconds: from the payload's start to the
# receiver's verified confirmation. Every figure is a median over ROUNDS
# rounds; in each round the two sides of each comparison run back to back,
# which first alternating from round to round. The source is hot, and
# memory is warmed before every run that fills the page cache (bench_warm
# in bench-lib.sh says why). Each figure carries the median steal of its
# runs (/proc/stat, % of all CPUs) and of the CPU others took meanwhile
# (the machine's busy ticks less the run's own CPU: other programs, and
# kernel threads such as writeback that no process is charged for); the
# verdicts are on ratios of medians.
# Usage: scripts/bench-wait.sh [SIZE=1Gi] [ROUNDS=5] [DIR=/var/tmp]
# Env: ARGS, more options for both dnd ends (default none: dnd's defaults);
# PIN=S,R pins the dnd senders to CPU S and receivers to CPU R; DND.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
SIZE=${1:-1Gi}
ROUNDS=${2:-5}
DIR=${3:-/var/tmp}
. "$here/scripts/bench-lib.sh"
bytes=$(bench_size "$SIZE") || exit 2
case $ROUNDS in '' | *[!0-9]* | 0) echo "bench-wait: ROUNDS is a count, not '$ROUNDS'" >&2; exit 2 ;; esac
command -v fio >/dev/null || "$here/scripts/deps.sh" refs
command -v jq >/dev/null || { echo "bench-wait: jq missing (scripts/deps.sh)" >&2; exit 2; }
bench_pin
W=$(mktemp -d "$DIR/dnd-wait.XXXXXX")
rpid=
trap '[ -z "$rpid" ] || kill "$rpid" 2>/dev/null; rm -rf "$W"' EXIT
head -c "$bytes" /dev/urandom >"$W/src"
port=$((20000 + RANDOM % 30000))

# Each run sets SECS, its time, or "failed" with why on stderr.
# ref_fio: fio's write runtime, which its end_fsync is part of.
# shellcheck disable=SC2015 # a run whose report jq cannot read failed too
ref_fio() {
	fio --name=dev --filename="$W/fio" --rw=write --direct=1 \
		--ioengine=libaio --bs=1M --iodepth=16 --size="$bytes" \
		--end_fsync=1 --output-format=json >"$W/fio.json" 2>"$W/fio.err" &&
		SECS=$(jq '.jobs[0].write.runtime / 1000' "$W/fio.json") ||
		{ echo "bench-wait: fio failed: $(head -n 2 "$W/fio.err" | tr '\n' ' ')" >&2; SECS=failed; }
	rm -f "$W/fio"
}

# ref_dd: the seconds dd reports, its fdatasync included.
# shellcheck disable=SC2015 # a run whose report awk cannot read failed too
ref_dd() {
	LC_ALL=C dd if="$W/src" of="$W/dd" bs=1M conv=fdatasync 2>"$W/dd.err" &&
		SECS=$(awk '/copied/ { sub(/ s,.*/, ""); sub(/.*, /, ""); print }' "$W/dd.err") ||
		{ echo "bench-wait: dd failed: $(tail -n 1 "$W/dd.err")" >&2; SECS=failed; }
	rm -f "$W/dd"
}

# run_dnd KIND SEND-ARGS RECV-ARGS: KIND file lands the hot source in DIR,
# zero moves SIZE from /dev/zero to /dev/null.
run_dnd() {
	local src=$W/src dst=$W/dst lim=()
	[ "$1" = zero ] && src=/dev/zero dst=/dev/null lim=(-l "$bytes")
	port=$((port + 1))
	# shellcheck disable=SC2086
	"${R[@]}" timeout 600 "$DND" recv -p "$port" --json ${ARGS:-} $3 "$dst" \
		>"$W/r.json" 2>"$W/r.err" &
	rpid=$!
	bench_listening "$port" || true
	# shellcheck disable=SC2086
	"${S[@]}" timeout 600 "$DND" send -c 127.0.0.1 -p "$port" --connect-timeout 10 \
		"${lim[@]}" --json ${ARGS:-} $2 "$src" >"$W/s.json" 2>"$W/s.err" || true
	wait "$rpid" || true
	rpid=
	if jq -e .ok "$W/r.json" >/dev/null 2>&1 && jq -e .ok "$W/s.json" >/dev/null 2>&1; then
		SECS=$(jq .total_seconds "$W/s.json")
	else
		echo "bench-wait: dnd $1 $2 / $3 failed: $(head -n 2 "$W/s.err" "$W/r.err" | tr '\n' ' ')" >&2
		SECS=failed
	fi
	rm -f "$W/dst"
}

# The figures: a name each, its runs' seconds, steal and others' CPU in
# T_<i>, P_<i> and O_<i>.
names=("fio O_DIRECT write" "dnd rw>rw, recv --direct"
	"dd bs=1M conv=fdatasync" "dnd rw>rw buffered"
	"dnd file rw>rw verified" "dnd file rw>rw --no-verify"
	"dnd zero>null verified" "dnd zero>null --no-verify")
for i in "${!names[@]}"; do declare -a "T_$i=()" "P_$i=()" "O_$i=()"; done
# child_cpu VAR: sets VAR to the CPU seconds of this shell's finished
# children so far (bash's times, run in this shell: in $(...) it would
# count the subshell's children only).
child_cpu() {
	times >"$W/times"
	printf -v "$1" '%s' "$(awk 'NR == 2 { for (i = 1; i <= 2; i++) {
		split($i, x, /[ms]/); t += x[1] * 60 + x[2] } printf "%.3f", t }' \
		"$W/times")"
}

# one I: runs figure I once and records its seconds, the steal and the
# CPU the other programs took meanwhile (bench_other_pct: this host
# reports no steal, but it is shared). Every run but zero -> null reads
# the hot source or fills the page cache: the source is read again and
# memory warmed before it, untimed.
one() {
	local a b c0 c1
	[ "$1" -ge 6 ] || { cat "$W/src" >/dev/null; bench_warm "$bytes"; }
	child_cpu c0
	a=$(bench_ticks)
	case $1 in
	0) ref_fio ;;
	1) run_dnd file "-m rw" "-m rw --direct" ;;
	2) ref_dd ;;
	3) run_dnd file "-m rw" "-m rw" ;;
	4) run_dnd file "-m rw" "-m rw" ;;
	5) run_dnd file "-m rw --no-verify" "-m rw --no-verify" ;;
	6) run_dnd zero "-m rw" "-m rw" ;;
	7) run_dnd zero "-m rw --no-verify" "-m rw --no-verify" ;;
	esac
	b=$(bench_ticks)
	child_cpu c1
	local -n t=T_$1 p=P_$1 o=O_$1
	t+=("$SECS") p+=("$(bench_steal_pct "$a" "$b")")
	o+=("$(bench_other_pct "$a" "$b" "$(echo "$c1 - $c0" | bc)")")
	printf '  %s: %s s (steal %s%%, others %s%%)' "${names[$1]}" "$SECS" \
		"${p[-1]}" "${o[-1]}" >&2
}

echo "# issue 23's targets: $SIZE, $ROUNDS alternating rounds, hot source -> loopback -> $DIR ($(df --output=source "$DIR" | tail -1)), $(uname -r), $(nproc) CPUs"
echo "# dnd: ${ARGS:-(defaults)}; CPUs: ${PIN:-unpinned}; seconds: fio's write runtime, dd's own, dnd sender's total_seconds"
[ "$ROUNDS" -ge 5 ] || echo "# fewer than the 5 rounds the targets are stated for"
for r in $(seq "$ROUNDS"); do
	printf 'round %s:' "$r" >&2
	for pair in "0 1" "2 3" "4 5" "6 7"; do
		# shellcheck disable=SC2086
		set -- $pair
		if [ $((r % 2)) = 1 ]; then one "$1"; one "$2"; else one "$2"; one "$1"; fi
	done
	echo >&2
done

# med I: "seconds steal% others%" medians of figure I.
med() {
	local -n ts=T_$1 ps=P_$1 os=O_$1
	echo "$(bench_median "${ts[@]}") $(bench_median "${ps[@]}") $(bench_median "${os[@]}")"
}
echo
echo "| figure | median s | MB/s | steal % | others' CPU % |"
echo "| --- | --- | --- | --- | --- |"
for i in "${!names[@]}"; do
	read -r s p o < <(med "$i")
	m=-
	[ "$s" = failed ] || read -r s m < <(awk -v s="$s" -v b="$bytes" \
		'BEGIN { printf "%.3f %.0f\n", s, b / s / 1e6 }')
	echo "| ${names[$i]} | $s | $m | $p | $o |"
done
echo

# verdict WHAT REF DND OP TARGET: the ratio REF/DND seconds (dnd's speed
# over the reference's) for >=, or DND/REF - 1 (verification's cost) for
# <=, against TARGET, with PASS or FAIL.
verdict() {
	local a b
	read -r a _ < <(med "$2")
	read -r b _ < <(med "$3")
	if [ "$a" = failed ] || [ "$b" = failed ]; then
		echo "$1: not measured (a run failed): FAIL"
	elif [ "$4" = ">=" ]; then
		awk -v w="$1" -v a="$a" -v b="$b" -v t="$5" 'BEGIN {
			x = a / b; printf "%s: %.2fx (target >= %.1fx): %s\n", w, x, t,
				(x >= t ? "PASS" : "FAIL") }'
	else
		awk -v w="$1" -v a="$a" -v b="$b" -v t="$5" 'BEGIN {
			x = 100 * (b / a - 1); printf "%s: %+.1f%% (target <= %d%%): %s\n", w, x, t,
				(x <= t ? "PASS" : "FAIL") }'
	fi
}
verdict "(1) dnd rw>rw recv --direct over fio O_DIRECT" 0 1 ">=" 0.8
verdict "(2) dnd rw>rw buffered over dd conv=fdatasync" 2 3 ">=" 1.0
verdict "(3) verification's cost, rw>rw file -> file" 5 4 "<=" 5
verdict "(3) verification's cost, rw>rw zero -> null" 7 6 "<=" 5
