#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A hostile peer against every receive method: real `dnd send` transfers
# (files, -P 2 and 3 streams, /dev/zero, a pipe's segments), captured, then
# replayed with bit flips, truncation, tiny writes, stalls, resets, trailing
# garbage, a withheld hash, a stream that never comes or comes twice. The
# receiver must exit 0 or 1, never report a sanitizer error, name the cause,
# and leave the disk agreeing with its exit code. Known receiver defects are
# listed in hostile.py (KNOWN) with their reason.
# DND_HOSTILE_N runs per method and seed (20), DND_HOSTILE_SEED (1) plus one
# random seed unless DND_HOSTILE_RANDOM=0, DND_HOSTILE_ONLY=method:run.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "no python3 (scripts/deps.sh adds it)"
: "${DND_HOSTILE_N:=20}" "${DND_HOSTILE_SEED:=1}" "${DND_HOSTILE_RANDOM:=1}"
: "${DND_HOSTILE_ONLY:=}" "${DND_HOSTILE_JOBS:=4}"

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

timeout -k 5 280 python3 -B "$(dirname "$0")/hostile.py" --dnd "$DND" \
	--dir "$T" --methods "$methods" --seeds "$seeds" -n "$DND_HOSTILE_N" \
	--jobs "$DND_HOSTILE_JOBS" --slack "$slack" --only "$DND_HOSTILE_ONLY"
rc=$?
[ $rc -lt 124 ] || fail "hostile.py timed out or was killed (exit $rc)"
[ $rc != 2 ] || fail "could not capture what dnd send sends (see above)"
[ $rc = 0 ] || fail "the receiver mishandled hostile input (see above)"
ok "hostile peer: $methods"
