#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the unit programs and the end-to-end scripts, each under a timeout,
# and tallies them. Exit codes: 0 pass, 77 skip, anything else fail.
# Usage: DND=path/to/dnd UNIT_DIR=build/tests/unit tests/run.sh [pattern...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${DND:=$here/../dnd}"
: "${UNIT_DIR:=$here/../build/tests/unit}"
: "${TEST_TIMEOUT:=300}"
export DND

logdir=$(mktemp -d /tmp/dnd-tests.XXXXXX)
pass=0 fail=0 skip=0
failed=()

selected() {
	local t=$1; shift
	[ $# -eq 0 ] && return 0
	for p in "$@"; do case "$t" in *"$p"*) return 0 ;; esac; done
	return 1
}

run_one() {
	local name=$1; shift
	local log="$logdir/$(basename "$name").log" rc t0 t1
	t0=$(date +%s.%N)
	timeout --kill-after=10 "$TEST_TIMEOUT" "$@" >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	local secs
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	case $rc in
	0) pass=$((pass + 1)); echo "PASS    $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP    $name: $(grep -m1 -i 'skip' "$log" || tail -n1 "$log")" ;;
	124|137) fail=$((fail + 1)); failed+=("$name"); echo "TIMEOUT $name after ${TEST_TIMEOUT}s"; tail -n 20 "$log" | sed 's/^/    /' ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL    $name (exit $rc)"; tail -n 30 "$log" | sed 's/^/    /' ;;
	esac
}

for t in "$UNIT_DIR"/test_*; do
	[ -x "$t" ] && [ "${t%.d}" = "$t" ] || continue
	selected "$(basename "$t")" "$@" || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in "$here"/e2e/[0-9]*.sh; do
	[ -f "$t" ] || continue
	selected "$(basename "$t")" "$@" || continue
	run_one "e2e/$(basename "$t")" bash "$t"
done

if [ -r /dev/kmsg ] && dmesg 2>/dev/null | tail -n 200 | grep -qE 'WARNING:|BUG:'; then
	echo "note: the kernel log holds a WARNING or BUG (dmesg | tail)"
fi
[ $fail -eq 0 ] && rm -rf "$logdir" || echo "logs: $logdir (failed: ${failed[*]})"
echo "tests: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
