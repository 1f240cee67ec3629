#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd bench --netns: the quick set over a veth pair between two namespaces
# that bench makes itself, then nothing of them left: after a normal run,
# after a refused --netem, and after Ctrl-C.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed (make deps)"

leftovers() {
	local l
	l=$( (ip netns list; ip -o link show) 2>/dev/null | grep -E 'dndb(-[0-9]+-[sr]|[sr][0-9]+)')
	[ -z "$l" ] || fail "left behind after $1: $l"
}

if [ "$(id -u)" != 0 ]; then
	expect_exit 2 "$DND" bench --netns --quick
	expect_out "needs root"
	skip "bench --netns needs root (the refusal was checked)"
fi
probe="dndt-probe-$$"
ip netns add "$probe" 2>/dev/null || skip "cannot create a network namespace here"
ip netns del "$probe"
leftovers "nothing yet"

J=$T/n.jsonl
expect_exit 0 "$DND" bench --netns --quick --dir "$T" --json="$J"
expect_out "veth between two network namespaces"
leftovers "a --netns run"
bad=$(jq -r 'select(.kind == "cell") | select(.status == "failed" or
	(.status == "ok" and .verdict != (if .sink == "file" then "verified"
	else "counted" end))) | "\(.send)->\(.recv) \(.status) \(.reason)"' "$J")
[ -z "$bad" ] || fail "cells not right: $bad"
jq -s -e '[.[] | select(.kind == "cell")] | length > 0 and
	all(.netns and .mtu_bytes == 1500)' "$J" >/dev/null ||
	fail "cells do not record the namespace path"
ok "quick set over veth, $(jq -s '[.[] | select(.status == "ok")] | length' "$J") cells verified or counted, nothing left"

# tbf and an MTU; netem only where the kernel has it, else a plain refusal.
expect_exit 0 "$DND" bench --netns --quick --dir "$T" --mtu 9000 \
	--rate 2gbit --src zero --sink null --send rw --recv null --no-best-path
expect_out "MTU 9000, tbf 2gbit"
leftovers "--rate"
"$DND" bench --netns --quick --dir "$T" --netem "delay 1ms" --src zero \
	--sink null --send rw --recv null --no-best-path >"$T/netem.out" 2>&1
rc=$?
case $rc in
0) ok "netem present: ran with delay 1ms" ;;
2) grep -q "sch_netem" "$T/netem.out" || fail "netem refusal unclear: $(cat "$T/netem.out")"
   ok "netem absent: refused with exit 2" ;;
*) fail "--netem exit $rc: $(tail -n3 "$T/netem.out")" ;;
esac
leftovers "--netem"

# Ctrl-C in the middle: exit 130, namespaces and scratch files gone. It
# lands as soon as the first namespace exists, while ip still builds the
# veth pair: the setup finishes, then the run stops as at any other time.
"$DND" bench --netns --dir "$T" >"$T/int.out" 2>&1 &
bp=$!
_pids+=("$bp")
for _ in $(seq 1 100); do
	ip netns list | grep -q "dndb-$bp-" && break
	sleep 0.1
done
ip netns list | grep -q "dndb-$bp-" || fail "bench made no namespace: $(cat "$T/int.out")"
kill -INT "$bp"
rc=0
wait "$bp" || rc=$?
[ $rc -eq 130 ] || fail "SIGINT: exit $rc, wanted 130: $(tail -n3 "$T/int.out")"
grep -q "removed the scratch files and the network namespaces" "$T/int.out" ||
	fail "no cleanup message: $(tail -n3 "$T/int.out")"
leftovers "SIGINT"
ls -d "$T"/dnd-bench.* 2>/dev/null && fail "scratch directory left after SIGINT"
ok "SIGINT: exit 130, namespaces and scratch files removed"
