#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# zerocopy under a tiny net.core.optmem_max: sends fail with ENOBUFS while
# notifications hold the socket's option memory; dnd must reap, retry and
# still deliver every byte, and count how often it happened. The limit is
# lowered inside a namespace of our own (the sysctl is per namespace since
# Linux 6.x); should it turn out global here, the trap puts it back.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"
[ "$(id -u)" = 0 ] || skip "lowering net.core.optmem_max needs root"
if "$DND" help | grep -q '^  probe '; then
	require_feature zerocopy
else
	next_port
	expect_exit 1 "$DND" send -m zerocopy -c 127.0.0.1 -p "$PORT" \
		--connect-timeout 0 -l 1 /dev/zero
	case $OUT in *"is not usable here"*) skip "$OUT" ;; esac
fi

OPTMEM=/proc/sys/net/core/optmem_max
saved=$(cat "$OPTMEM") || skip "cannot read $OPTMEM"
restore_optmem() {
	[ "$(cat "$OPTMEM")" = "$saved" ] || echo "$saved" >"$OPTMEM"
}
_cleanup_hooks+=(restore_optmem)

ns="dndt-zc-$$"
ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"
_netns+=("$ns")
ip -n "$ns" link set lo up || fail "lo up in $ns"

size=$((3 * 1048576 + 13))
random_file "$T/src" "$size"

# run LIMIT: one transfer in the namespace with optmem_max at LIMIT.
run() {
	ip netns exec "$ns" sh -c "echo $1 >$OPTMEM" || fail "set optmem_max $1"
	next_port
	rm -f "$T/dst"
	ip netns exec "$ns" "$DND" recv -p "$PORT" -m rw "$T/dst" >"$T/r.log" 2>&1 &
	RPID=$!
	_pids+=("$RPID")
	ns_listen "$ns" "$PORT"
	ip netns exec "$ns" "$DND" send -c 127.0.0.1 -p "$PORT" -m zerocopy \
		-b 16Ki --json "$T/src" >"$T/s.log" 2>&1
	SRC=$?
	wait_recv
}

# One notification's worth of option memory differs between kernels: take
# the smallest limit under which a send still gets through.
for limit in 1024 2048 4096; do
	run "$limit"
	grep -q 'optmem_max' "$T/s.log" || break
done
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
	fail "optmem_max $limit: send $SRC recv $RRC: $(cat "$T/s.log" "$T/r.log")"
cmp -s "$T/src" "$T/dst" || fail "data differs under optmem_max $limit"
jq -e --argjson n "$size" '.ok and .verdict == "verified" and
	.zerocopy.enobufs > 0 and
	.zerocopy.zc_bytes + .zerocopy.copied_bytes == $n and
	.zerocopy.completions == .syscalls.send.calls - .zerocopy.enobufs' \
	"$T/s.log" >/dev/null || fail "accounting under ENOBUFS: $(cat "$T/s.log")"
[ "$(cat "$OPTMEM")" = "$saved" ] || echo "  note: optmem_max is global on this kernel; restored at exit"
ok "optmem_max $limit: $(jq -r .zerocopy.enobufs "$T/s.log") ENOBUFS reaped and retried, every byte verified"

# Too little for even one notification: a clear failure, not a hang.
run 256
[ "$SRC" = 1 ] || fail "optmem_max 256: send exited $SRC: $(cat "$T/s.log")"
grep -v '^dnd: ' "$T/s.log" |
	jq -e '.ok == false and (.error | test("optmem_max"))' >/dev/null ||
	fail "optmem_max 256: $(cat "$T/s.log")"
[ "$RRC" = 1 ] || fail "receiver exited $RRC"
[ ! -e "$T/dst" ] || fail "a failed transfer left $T/dst"
ok "optmem_max 256 fails naming the limit"
