#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs each libFuzzer harness for SECONDS on a fresh copy of its seed corpus
# (tests/fuzz/corpus/<harness>/, which it never writes to) and exits 1 if
# any of them found a crash, leak, UB, timeout or out-of-memory.
# Usage: tests/fuzz/run.sh BUILD_DIR SECONDS tests/fuzz/fuzz_x.c...
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$1 secs=$2
shift 2
fail=0 names=""
for src in "$@"; do
	name=$(basename "$src" .c)
	bin=$build/tests/fuzz/$name
	work=$build/fuzz-work/$name
	rm -rf "$work"
	mkdir -p "$work/corpus" "$work/artifacts"
	if [ -d "$here/corpus/$name" ]; then
		cp -a "$here/corpus/$name/." "$work/corpus/"
	fi
	echo "FUZZ    $name for ${secs}s"
	# The outer timeout only catches a harness that ignores its own limit.
	if timeout --kill-after=10 $((secs + 120)) "$bin" \
		-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/" \
		"$work/corpus" >"$work/log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
		echo "PASS    $name (${runs:-?} runs, corpus $(ls "$work/corpus" | wc -l))"
	else
		fail=1
		names="$names $name"
		echo "FAIL    $name: log $work/log, inputs in $work/artifacts/"
		grep -m1 -E 'ERROR|runtime error|deadly signal' "$work/log"
		tail -n 30 "$work/log" | sed 's/^/    /'
	fi
done
[ $fail -eq 0 ] && echo "fuzz: all clean" || echo "fuzz: findings in$names"
exit $fail
