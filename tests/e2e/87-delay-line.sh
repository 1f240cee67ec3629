#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Through the delay line (tests/tools/delayline, scripts/delayline.sh;
# issue 25) at a 20 ms round trip and 400 Mbit/s: a transfer with window
# autotuning (send and recv's default) lands byte-exact, is not slower than
# the same transfer at -w 128Ki (medians of 3 alternating rounds; the gap is
# structural: 128 KiB per 20 ms is a few MB/s, the line carries 50), and
# the kernel saw the round trip; the line carried every byte, as GSO
# super-packets (its ceiling). At 1% loss a transfer still lands byte-exact,
# the line says it dropped packets, and it forwarded no super-packet (loss
# is per packet, so it asks the kernel to segment first).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
[ -c /dev/net/tun ] || skip "no /dev/net/tun (this kernel lacks TUN)"
DELAYLINE=$(dirname "$DND")/tests/tools/delayline
[ -x "$DELAYLINE" ] || fail "no $DELAYLINE: make test builds it (make tools)"
export DELAYLINE
# shellcheck source=../../scripts/delayline.sh
. "$(dirname "$0")/../../scripts/delayline.sh"
_cleanup_hooks+=("delayline_down >/dev/null")

SIZE=$((32 << 20))
random_file "$T/src" "$SIZE"

# field NAME FILE: a number from a one-line JSON report.
field() { grep -o "\"$1\":[0-9.]*" "$2" | head -n1 | cut -d: -f2; }

# over WINDOW SRC: one transfer from A to B at -w WINDOW on both ends
# (default: no -w, and both reports must say the window is the default),
# landed byte-exact in $T/dst; MBS gets the receiver's MB/s, RTT the
# sender's smoothed round trip (us).
over() {
	local w=$1 src=$2 rc wopt=()
	[ "$w" = default ] || wopt=(-w "$w")
	rm -f "$T/dst"
	next_port
	ip netns exec "$DL_NS_B" "$DND" recv -p "$PORT" "${wopt[@]}" --json \
		"$T/dst" >"$T/r.json" 2>"$T/r.err" &
	RPID=$!
	_pids+=("$RPID")
	ns_listen "$DL_NS_B" "$PORT"
	ip netns exec "$DL_NS_A" "$DND" send -c "$DL_B" -p "$PORT" \
		"${wopt[@]}" --json "$src" >"$T/s.json" 2>"$T/s.err"
	rc=$?
	[ $rc -eq 0 ] || fail "send -w $w exited $rc: $(cat "$T/s.err" "$T/s.json")"
	wait_recv
	[ "$RRC" -eq 0 ] || fail "recv -w $w exited $RRC: $(cat "$T/r.err" "$T/r.json")"
	cmp -s "$src" "$T/dst" || fail "-w $w through the line: not byte-exact"
	MBS=$(field mb_per_s "$T/r.json")
	RTT=$(field rtt_us "$T/s.json")
	[ -n "$MBS" ] && [ -n "$RTT" ] || fail "no mb_per_s or rtt_us: $(cat "$T/r.json" "$T/s.json")"
	if [ "$w" = default ]; then
		grep -q '"window_from":"default"' "$T/s.json" &&
			grep -q '"window_from":"default"' "$T/r.json" ||
			fail "no -w: a report does not say the window is the default: $(cat "$T/s.json" "$T/r.json")"
	fi
}

median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }

delayline_up --delay 20 --rate 400mbit --mtu 9000 --seconds 300 ||
	fail "the delay line did not come up"
auto=() fixed=()
for _ in 1 2 3; do
	over default "$T/src"
	auto+=("$MBS")
	[ "${RTT%.*}" -ge 20000 ] || fail "rtt $RTT us through a 20 ms line"
	over 128Ki "$T/src"
	fixed+=("$MBS")
done
ma=$(median3 "${auto[@]}") mf=$(median3 "${fixed[@]}")
awk -v a="$ma" -v f="$mf" 'BEGIN { exit !(a >= 0.9 * f) }' ||
	fail "the default window at $ma MB/s (${auto[*]}) is slower than -w 128Ki at $mf MB/s (${fixed[*]})"
delayline_down >"$T/dl.out"
out=$(cat "$T/dl.out")
! grep -qv '^delayline: ' "$T/dl.out" || fail "the line's forwarder said more than its counters: $out"
carried=$(sed -n 's/^delayline: a>b forwarded [0-9]* packets \([0-9]*\) bytes.*/\1/p' <<<"$out")
[ -n "$carried" ] && [ "$carried" -ge $((6 * SIZE)) ] ||
	fail "the line carried ${carried:-no} bytes a>b, not the 6 transfers: $out"
# super DIRECTION: the GSO super-packets the line forwarded that way
super() { sed -n "s/^delayline: $1 .*, super-packets \([0-9]*\)\$/\1/p" <<<"$out"; }
sp=$(super 'a>b')
[ -n "$sp" ] && [ "$sp" -gt 0 ] ||
	fail "the line forwarded ${sp:-no} GSO super-packets a>b: the kernel segmented for it: $out"
ok "20 ms, 400 Mbit/s: default window median $ma MB/s (${auto[*]}) >= 0.9 x -w 128Ki median $mf MB/s (${fixed[*]}), byte-exact, rtt >= 20 ms, $sp super-packets a>b"

head -c $((8 << 20)) "$T/src" >"$T/src8"
delayline_up --delay 20 --rate 400mbit --mtu 9000 --loss 1 --seed 25 \
	--seconds 300 || fail "the lossy line did not come up"
over default "$T/src8"
delayline_down >"$T/dl.out"
out=$(cat "$T/dl.out")
! grep -qv '^delayline: ' "$T/dl.out" || fail "the line's forwarder said more than its counters: $out"
lost=$(sed -n 's/^delayline: a>b .*, lost \([0-9]*\),.*/\1/p' <<<"$out")
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "1% loss dropped ${lost:-no} packets a>b: $out"
[ "$(super 'a>b')" = 0 ] ||
	fail "with --loss the line forwarded super-packets: one loss would drop many segments: $out"
ok "1% loss: byte-exact at $MBS MB/s, the line dropped $lost packets a>b"
