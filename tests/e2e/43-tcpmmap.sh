#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tcpmmap (TCP_ZEROCOPY_RECEIVE) behind every send method of the core:
# byte-exact, verified, mapped + copied == received, and never a byte of
# the trailer or the next segment header taken. Loopback mostly copies, so
# mapping is reported, never asserted; a namespace whose loopback MTU makes
# segments page multiples shows the mapped case.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"

if "$DND" help | grep -q '^  probe '; then
	require_feature tcpmmap
else
	# The method is checked before listening; 192.0.2.1 is never ours.
	next_port
	expect_exit 1 "$DND" recv -m tcpmmap --bind 192.0.2.1 -p "$PORT" "$T/never"
	case $OUT in *"is not usable here"*) skip "$OUT" ;; esac
fi

SIZES="0 1 4095 65537 $((3 * 1048576 + 13))"
for size in $SIZES; do
	random_file "$T/src.$size" "$size"
done

# check SIZE WHAT: the receiver's JSON adds up for SIZE bytes.
check() {
	jq -e --argjson n "$1" '.ok and .verdict == "verified" and
		.bytes == $n and
		.zerocopy.zc_bytes + .zerocopy.copied_bytes == $n and
		.zerocopy.zc_bytes == (.syscalls.tcp_zc_recv.bytes // 0)' \
		<(json_of "$T/r.log") >/dev/null || fail "$2, $1 bytes: $(cat "$T/r.log")"
}

# pair SEND-ARGS RECV-ARGS SIZE
pair() {
	rm -f "$T/dst"
	xfer "-c 127.0.0.1 $1 $T/src.$3" "--json -m tcpmmap $2 $T/dst"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "$1 -> tcpmmap $2, $3 bytes: send $SRC recv $RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src.$3" "$T/dst" || fail "$1 -> tcpmmap $2, $3 bytes: data differs"
	check "$3" "$1 -> tcpmmap $2"
}

n=0
for sm in rw mmap sendfile splice vmsplice; do
	for size in $SIZES; do
		pair "-m $sm" "" "$size"
		n=$((n + 1))
	done
done
ok "$n transfers into tcpmmap byte-exact, verified, mapped + copied add up"

for b in 1 4095 1Mi; do
	pair "-m sendfile" "-b $b" 65537
done
pair "-m rw -b 1Mi" "-b 16Ki" $((3 * 1048576 + 13))
ok "buffer sizes 1, 4095, 16Ki, 1Mi"

# A pipe source goes as segments: each ends mid-stream, and the receiver
# must not map or read past it.
big=$((3 * 1048576 + 13))
next_port
start_recv "$T/r.log" --json -m tcpmmap "$T/dst.seg"
cat "$T/src.$big" | "$DND" send -p "$PORT" -c 127.0.0.1 -m rw - >"$T/s.log" 2>&1 ||
	fail "stdin send: $(cat "$T/s.log" "$T/r.log")"
wait_recv
[ "$RRC" = 0 ] && cmp -s "$T/src.$big" "$T/dst.seg" || fail "segments: $(cat "$T/r.log")"
check "$big" "segments"
ok "segmented stream into tcpmmap"

# A pipe that pauses makes a served tcpmmap receiver wait for pages
# (SO_RCVLOWAT raised to them); the short last segment and the trailer
# then come to a driver that must see them at once, not at the socket's
# timeout (a lowat left high made its poll wait the whole timeout: served
# pushes from a pipe stalled 60 s with the last 2379 bytes queued).
need_py3 time
mkdir "$T/srv"
next_port
bg "$T/serve.log" "$DND" serve --dir "$T/srv" -p "$PORT" --timeout 8
wait_log "$T/serve.log" "listening on 127.0.0.1:$PORT" "no listening line"
"$PY3" -c '
import os, sys, time
d = open(sys.argv[1], "rb").read()
for i in range(0, len(d) - 2339, 262144):
    os.write(1, d[i:min(i + 262144, len(d) - 2339)])
    time.sleep(0.1)	# the pause is the shape of the source, not a wait
os.write(1, d[len(d) - 2339:])
' "$T/src.$big" | timeout 60 "$DND" send -p "$PORT" -c 127.0.0.1 -m rw \
	--peer-method tcpmmap --timeout 5 --to slow --json - >"$T/s.log" 2>&1 ||
	fail "paced pipe into a served tcpmmap: $(cat "$T/s.log")"
cmp -s "$T/src.$big" "$T/srv/slow" ||
	fail "paced pipe into a served tcpmmap: the landed file differs"
kill -TERM "$BPID"
wait_for "$BPID" 20 || true
ok "a paced pipe into a served tcpmmap: byte-exact within the client's 5 s --timeout"
jq -r '"  loopback: \(.zerocopy.zc_bytes) B mapped, \(.zerocopy.copied_bytes) B copied"' <(json_of "$T/r.log")

# Page-multiple segments: loopback MTU 61492 = 61440 payload + 52 header
# bytes (IPv4 with timestamps), as the kernel's tcp_mmap selftest does.
[ "$(id -u)" = 0 ] || { echo "  (not root: no MTU case)"; exit 0; }
ns="dndt-mm-$$"
ip netns add "$ns" 2>/dev/null || { echo "  (no namespace: no MTU case)"; exit 0; }
_netns+=("$ns")
ip -n "$ns" link set lo up && ip -n "$ns" link set lo mtu 61492 || fail "lo mtu"
for sm in zerocopy rw; do
	next_port
	rm -f "$T/dst"
	ip netns exec "$ns" "$DND" recv -p "$PORT" --json -m tcpmmap "$T/dst" >"$T/r.log" 2>&1 &
	RPID=$!
	_pids+=("$RPID")
	ns_listen "$ns" "$PORT"
	ip netns exec "$ns" "$DND" send -c 127.0.0.1 -p "$PORT" -m "$sm" "$T/src.$big" >"$T/s.log" 2>&1
	SRC=$?
	wait_recv
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "mtu 61492, $sm: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src.$big" "$T/dst" || fail "mtu 61492, $sm: data differs"
	check "$big" "mtu 61492, $sm"
	jq -r --arg sm "$sm" '"  mss \(.tcp.rcv_mss_bytes), \($sm) sender: " +
		"\(.zerocopy.zc_bytes) B mapped, \(.zerocopy.copied_bytes) B copied"' <(json_of "$T/r.log")
done
ok "MTU 61492 namespace: accounting adds up"
