#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -C NAME sets TCP_CONGESTION on every stream, and the report names the
# algorithm each end ran, read back from its socket: -C cubic and -C bbr
# (skipped when bbr cannot be loaded), with -P 2 too, and with dnd serve
# (serve -C for its end, the client's -C for its own). Without -C the
# kernel's default runs and is named as such. An unknown name exits 2 with
# the names tcp_available_congestion_control lists.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || skip "needs jq (scripts/deps.sh)"
avail=/proc/sys/net/ipv4/tcp_available_congestion_control
[ -r "$avail" ] || skip "no $avail"

# cc_of JSON: "ALGORITHM FROM" of a report.
cc_of() { jq -r '"\(.congestion) \(.congestion_from)"' <<<"$1"; }

# pair NAME SEND-ARGS...: a one-shot transfer, -C NAME on both ends; the
# sender's and the receiver's "ALGORITHM FROM" must be "NAME -C".
pair() {
	local cc=$1 s r; shift
	next_port
	start_recv "$T/r.log" -C "$cc" -m null --json /dev/null
	expect_exit 0 "$DND" send -c 127.0.0.1 -p "$PORT" -C "$cc" --json "$@"
	s=$(cc_of "$(grep '^{' <<<"$OUT")")
	wait_recv
	[ "$RRC" = 0 ] || fail "recv -C $cc exited $RRC: $(cat "$T/r.log")"
	r=$(cc_of "$(json_of "$T/r.log")")
	[ "$s" = "$cc -C" ] && [ "$r" = "$cc -C" ] ||
		fail "-C $cc $*: the sender reported '$s', the receiver '$r'"
	ok "-C $cc $*: both ends report $cc (-C)"
}

pair cubic -l 8M /dev/zero
pair cubic -P 2 -l 8M /dev/zero
# The text report names it on the tcp line.
next_port
start_recv "$T/r.log" -m null /dev/null
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$PORT" -C cubic -l 1M /dev/zero
grep -qE '^  tcp: rtt .*, congestion cubic \(-C\)$' <<<"$OUT" ||
	fail "no congestion on the text report's tcp line: $OUT"
wait_recv
def=$(cat /proc/sys/net/ipv4/tcp_congestion_control)
grep -qE "^  tcp: rtt .*, congestion $def \\(the kernel's default\\)$" "$T/r.log" ||
	fail "recv without -C: not the kernel's default ($def): $(cat "$T/r.log")"
ok "text: 'congestion cubic (-C)' on the sender, '$def (the kernel's default)' on recv"

# bbr: root may load tcp_bbr by asking for it; otherwise skip that part.
if "$DND" send -c 127.0.0.1 -p 1 -C bbr -l 0 /dev/zero 2>&1 |
	grep -q "congestion control 'bbr'"; then
	bbr_skip="bbr is not available here and could not be loaded ($(cat "$avail"))"
	echo "# $bbr_skip"
else
	pair bbr -l 8M /dev/zero
fi

# With dnd serve: the server's end runs serve -C, the client's its own -C.
d="$T/d"; mkdir "$d"
next_port
bg "$T/serve.log" "$DND" serve --dir "$d" -p "$PORT" -C cubic
wait_log "$T/serve.log" "listening on 127.0.0.1:$PORT" "no listening line"
expect_exit 0 "$DND" recv -c 127.0.0.1 -p "$PORT" --peer-end zero \
	--peer-size 8M -C reno -m null --json /dev/null
o=$(grep '^{' <<<"$OUT")
[ "$(cc_of "$o")" = "reno -C" ] || fail "pull client: $(cc_of "$o")"
[ "$(jq -r '"\(.peer_report.congestion) \(.peer_report.congestion_from)"' <<<"$o")" = "cubic -C" ] ||
	fail "serve -C cubic: the server's report says $(jq -c .peer_report <<<"$o")"
ok "served pull: the server ran cubic (serve -C), the client reno (-C)"

# An unknown name: exit 2, the list to choose from, before connecting.
for c in "send -c 127.0.0.1 -p 1 $T/x" "recv $T/x" "serve --dir $d"; do
	# shellcheck disable=SC2086
	expect_exit 2 "$DND" $c -C nosuchcc
	want="dnd: congestion control 'nosuchcc' is not available; use one of: $(cat "$avail")"
	[ "$(head -n1 <<<"$OUT")" = "$want" ] ||
		fail "${c%% *} -C nosuchcc said: $OUT (wanted: $want)"
done
ok "-C nosuchcc: exit 2 with '$want'"
[ -n "${bbr_skip:-}" ] && skip "$bbr_skip (the rest passed)"
exit 0
