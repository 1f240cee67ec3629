#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --mptcp across two namespaces joined by two veth pairs (two subnets): the
# client's second address is an MPTCP "subflow" endpoint, so the kernel's
# path manager opens a second subflow; the transfer must be byte-exact and
# the sender's report must show two subflows that both carried bytes. Then
# a peer without --mptcp: the kernel falls back to TCP, byte-exact, and
# each end that asked says so. Then MPTCP turned off in a namespace: exit
# 2 naming the sysctl.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
[ -e /proc/sys/net/mptcp/enabled ] || skip "this kernel has no MPTCP (no /proc/sys/net/mptcp)"
ip mptcp limits show >/dev/null 2>&1 || skip "ip(8) here cannot set MPTCP endpoints (iproute2 without 'ip mptcp')"

a="dndt-mptcp-a-$$" b="dndt-mptcp-b-$$"
ip netns add "$a" 2>/dev/null || skip "cannot create a network namespace"
_netns+=("$a")
ip netns add "$b" || fail "second namespace"
_netns+=("$b")
for n in 1 2; do
	ip link add "ma$n-$$" netns "$a" type veth peer name "mb$n-$$" netns "$b" ||
		fail "veth pair $n"
	ip -n "$a" addr add "10.241.$n.1/24" dev "ma$n-$$"
	ip -n "$b" addr add "10.241.$n.2/24" dev "mb$n-$$"
	ip -n "$a" link set "ma$n-$$" up
	ip -n "$b" link set "mb$n-$$" up
done
for n in "$a" "$b"; do
	ip -n "$n" link set lo up
	ip netns exec "$n" sysctl -qw net.mptcp.enabled=1 ||
		skip "cannot turn MPTCP on in a namespace"
	ip -n "$n" mptcp limits set subflow 2 add_addr_accepted 2 ||
		fail "ip mptcp limits set in $n"
done
# dnd probe reads the limits of its own namespace from the kernel.
ip netns exec "$a" "$DND" probe --json | jq -e '.features.mptcp |
	.present and .enabled == 1 and .active == 1 and .subflows_max == 2 and
	.add_addr_accepted_max == 2' >/dev/null ||
	fail "dnd probe in $a: $(ip netns exec "$a" "$DND" probe --json | jq -c .features.mptcp)"
# The client's second address opens a subflow of its own to the server.
ip -n "$a" mptcp endpoint add 10.241.2.1 dev "ma2-$$" subflow ||
	fail "ip mptcp endpoint add"

size=$((48 * 1048576 + 7))
random_file "$T/src" "$size"

# run "SEND ARGS" "RECV ARGS": B receives into $T/dst, A sends $T/src to
# 10.241.1.2 with --json; logs $T/s.log and $T/r.log, codes SRC and RRC.
run() {
	next_port
	rm -f "$T/dst"
	: >"$T/r.log"	# as start_recv: no old "listening" line to see
	# shellcheck disable=SC2086
	ip netns exec "$b" "$DND" recv -p "$PORT" --json $2 "$T/dst" >"$T/r.log" 2>&1 &
	RPID=$!
	_pids+=("$RPID")
	wait_text "$T/r.log" "^dnd: listening on "
	# shellcheck disable=SC2086
	ip netns exec "$a" "$DND" send -c 10.241.1.2 -p "$PORT" --json $1 \
		"$T/src" >"$T/s.log" 2>&1
	SRC=$?
	wait_recv
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] ||
		fail "send $1 ($SRC) / recv $2 ($RRC): $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src" "$T/dst" || fail "send $1 / recv $2: the data differs"
}

# Both ends MPTCP: two subflows, on the two links, both carried bytes.
run "--mptcp" "--mptcp"
jq -e --argjson n "$size" '.ok and .verdict == "verified" and
	.mptcp.fallback_streams == 0 and .mptcp.subflows_total == 2 and
	(.mptcp.subflows | length) == 2 and
	([.mptcp.subflows[].local | split(":")[0]] | sort) ==
		["10.241.1.1", "10.241.2.1"] and
	all(.mptcp.subflows[]; .sent_bytes > 65536) and
	([.mptcp.subflows[].sent_bytes] | add) >= $n' "$T/s.log" >/dev/null ||
	fail "the sender's subflows: $(cat "$T/s.log")"
grep -v '^dnd: ' "$T/r.log" | jq -e --argjson n "$size" '.ok and
	.mptcp.fallback_streams == 0 and (.mptcp.subflows | length) == 2 and
	([.mptcp.subflows[].received_bytes] | add) >= $n' >/dev/null ||
	fail "the receiver's subflows: $(cat "$T/r.log")"
ok "--mptcp: $(jq -c '[.mptcp.subflows[] | {local, sent_bytes}]' "$T/s.log")"

# -P 2: every stream is an MPTCP connection of its own, with subflows
# (how many each gets is the path manager's; the subflow's join may still
# be under way when a stream ends).
run "--mptcp -P 2" "--mptcp"
jq -e '.ok and .mptcp.fallback_streams == 0 and
	([.mptcp.subflows[].stream] | unique) == [0, 1] and
	.mptcp.subflows_total == (.mptcp.subflows | length)' "$T/s.log" \
	>/dev/null || fail "-P 2 subflows: $(cat "$T/s.log")"
ok "--mptcp -P 2: $(jq -c '[.mptcp.subflows[] | {stream, local}]' "$T/s.log")"

# A peer without MPTCP: plain TCP, byte-exact, and the end that asked
# says it fell back; the other end, which did not ask, shows nothing.
run "--mptcp" ""
jq -e '.ok and .mptcp.fallback_streams == 1 and .mptcp.subflows == []' \
	"$T/s.log" >/dev/null || fail "sender's fallback: $(cat "$T/s.log")"
grep -v '^dnd: ' "$T/r.log" | jq -e '.ok and (has("mptcp") | not)' \
	>/dev/null || fail "a receiver without --mptcp: $(cat "$T/r.log")"
# The receiver's text report, from a plain sender.
next_port
rm -f "$T/dst"
: >"$T/r.log"
ip netns exec "$b" "$DND" recv -p "$PORT" --mptcp "$T/dst" >"$T/r.log" 2>&1 &
RPID=$!
_pids+=("$RPID")
wait_text "$T/r.log" "^dnd: listening on "
ip netns exec "$a" "$DND" send -c 10.241.1.2 -p "$PORT" "$T/src" >"$T/s.log" 2>&1 ||
	fail "plain send to an MPTCP receiver: $(cat "$T/s.log")"
wait_recv
[ "$RRC" = 0 ] || fail "recv --mptcp from a plain sender exited $RRC"
cmp -s "$T/src" "$T/dst" || fail "plain to --mptcp: the data differs"
grep -q "mptcp: fell back to plain TCP on 1 of 1 stream: the peer did not answer in MPTCP (give it --mptcp" \
	"$T/r.log" || fail "the text report does not say it fell back: $(cat "$T/r.log")"
ok "a peer without MPTCP: plain TCP, byte-exact, and the report says so"

# dnd serve --mptcp in B (keyed: off loopback), a push and a pull with
# --mptcp from A: byte-exact, both reports show the subflows; a client
# without --mptcp gets plain TCP and the server's report says it fell back.
(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
mkdir "$T/srv"
next_port
bg "$T/serve.log" ip netns exec "$b" "$DND" serve --dir "$T/srv" -p "$PORT" \
	--key "$T/key" --mptcp
wait_text "$T/serve.log" "listening on .*:$PORT"
cli() { ip netns exec "$a" "$DND" "$@" -c 10.241.1.2 -p "$PORT" --key "$T/key" --json; }
cli send --mptcp --to pushed "$T/src" >"$T/s.log" 2>&1 ||
	fail "push to serve --mptcp: $(cat "$T/s.log")"
cmp -s "$T/src" "$T/srv/pushed" || fail "push to serve --mptcp: the data differs"
jq -e '.ok and (.mptcp.subflows | length) == 2 and
	all(.mptcp.subflows[]; .sent_bytes > 65536) and
	.peer_report.mptcp.fallback_streams == 0 and
	(.peer_report.mptcp.subflows | length) >= 1' "$T/s.log" >/dev/null ||
	fail "push to serve --mptcp: $(cat "$T/s.log")"
rm -f "$T/dst"
cli recv --mptcp -P 2 --from pushed "$T/dst" >"$T/r.log" 2>&1 ||
	fail "pull from serve --mptcp: $(cat "$T/r.log")"
cmp -s "$T/src" "$T/dst" || fail "pull from serve --mptcp: the data differs"
grep -v '^dnd: ' "$T/r.log" | jq -e '.ok and .mptcp.fallback_streams == 0 and
	([.mptcp.subflows[].stream] | unique) == [0, 1] and
	.peer_report.mptcp.fallback_streams == 0' >/dev/null ||
	fail "pull -P 2 from serve --mptcp: $(cat "$T/r.log")"
# A server method MPTCP sockets refuse: refused before a byte moves.
expect_exit 1 cli recv --mptcp --from pushed --peer-method zerocopy "$T/dstz"
expect_out "dnd: server refused: --peer-method zerocopy cannot send on an MPTCP socket: MPTCP sockets refuse SO_ZEROCOPY; use --peer-method sendfile or --peer-method rw"
[ ! -e "$T/dstz" ] || fail "a refused pull left $T/dstz"
cli send --to plain "$T/src" >"$T/s.log" 2>&1 ||
	fail "plain push to serve --mptcp: $(cat "$T/s.log")"
cmp -s "$T/src" "$T/srv/plain" || fail "plain push to serve --mptcp: the data differs"
jq -e '.ok and (has("mptcp") | not) and
	.peer_report.mptcp.fallback_streams == 1' "$T/s.log" >/dev/null ||
	fail "plain push to serve --mptcp: $(cat "$T/s.log")"
ok "serve --mptcp: push and pull -P 2 over MPTCP with both reports' subflows; a plain client falls back"

# A method MPTCP sockets refuse: said before anything runs.
expect_exit 2 ip netns exec "$a" "$DND" send --mptcp -m zerocopy \
	-c 10.241.1.2 -p "$PORT" "$T/src"
expect_out "dnd: -m zerocopy cannot send on an MPTCP socket: MPTCP sockets refuse SO_ZEROCOPY; use -m sendfile or -m rw"
ok "--mptcp -m zerocopy: exit 2 naming a method that works"

# MPTCP off in the namespace: a usage error naming the sysctl, no file.
ip netns exec "$a" sysctl -qw net.mptcp.enabled=0 || fail "net.mptcp.enabled=0"
next_port
rm -f "$T/dst"
expect_exit 2 ip netns exec "$a" "$DND" recv -p "$PORT" --mptcp "$T/dst"
expect_out "dnd: --mptcp: MPTCP is off in this network namespace (net.mptcp.enabled = 0); turn it on with 'sysctl -w net.mptcp.enabled=1', or drop --mptcp"
[ ! -e "$T/dst" ] || fail "a refused recv left $T/dst"
expect_exit 77 ip netns exec "$a" "$DND" probe --require mptcp
expect_out "net.mptcp.enabled = 0"
ok "net.mptcp.enabled=0: exit 2 naming the sysctl"
