#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd serve between two network namespaces (two hosts): push (send --to)
# and pull (recv --from) with every method pair, byte-exact, each client's
# report carrying the server's side; plus the keyless server on loopback.
. "$(dirname "$0")/lib.sh"

setup_ns
d="$T/d"; mkdir "$d"
(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
[ "$(stat -c %a "$T/key")" = 600 ] || fail "key mode $(stat -c %a "$T/key")"
random_file "$T/src" 3000000
next_port
bg "$T/serve.log" ip netns exec "$NS_A" "$DND" serve --dir "$d" -p "$PORT" --key "$T/key" --grace 1
spid=$BPID
ns_listen "$NS_A" "$PORT"
# The socket listens a moment before the line is written.
wait_log "$T/serve.log" "listening on .*:$PORT" "no listening line"

usable() { "$DND" probe --require "$1" >/dev/null 2>&1; }
cli() { timeout 20 ip netns exec "$NS_B" "$DND" "$@" -c 10.231.0.1 -p "$PORT" --key "$T/key"; }
# Keyless, on loopback inside the server's namespace.
lo() { timeout 20 ip netns exec "$NS_A" "$DND" "$@" -c 127.0.0.1 -p "$PORT"; }

# pairs CLIENT TAG SENDERS RECEIVERS: every usable pair, push and pull,
# byte-exact, each report with the server's numbers.
pairs() {
	local c=$1 tag=$2 senders=$3 receivers=$4 n=0 cm sm
	for cm in $senders; do
		usable "$cm" || { echo "# $cm not usable here: skipped"; continue; }
		for sm in $receivers; do
			usable "$sm" || continue
			expect_exit 0 $c send -m "$cm" --peer-method "$sm" --to "$tag-$cm-$sm" "$T/src"
			expect_out "the server's side:"
			cmp -s "$T/src" "$d/$tag-$cm-$sm" || fail "$tag push $cm -> $sm differs"
			n=$((n + 1))
		done
	done
	ok "$tag push: $n method pairs byte-exact, the server's numbers in each report"
	n=0
	for sm in $senders; do
		usable "$sm" || continue
		for cm in $receivers; do
			usable "$cm" || continue
			rm -f "$T/back"
			expect_exit 0 $c recv -m "$cm" --peer-method "$sm" --from "$tag-rw-rw" "$T/back"
			cmp -s "$T/src" "$T/back" || fail "$tag pull $sm -> $cm differs"
			n=$((n + 1))
		done
	done
	ok "$tag pull: $n method pairs byte-exact"
}

# Keyed (TLS 1.3): the methods whose socket bytes pass through user memory,
# and without kernel TLS the others refused by the server with the reason.
pairs cli k "rw mmap" "rw mmap"
if ! "$DND" probe --require ktls >/dev/null 2>&1; then
	expect_exit 1 cli send --peer-method splice --to k-refused "$T/src"
	expect_out "dnd: server refused: --peer-method splice with --key needs kernel TLS (this kernel has no CONFIG_TLS); use -m rw or -m mmap"
	[ ! -e "$d/k-refused" ] || fail "a refused push landed"
	expect_exit 1 cli recv --peer-method sendfile --from k-rw-rw "$T/back2"
	expect_out "dnd: server refused: --peer-method sendfile with --key needs kernel TLS (this kernel has no CONFIG_TLS); use -m rw or -m mmap"
	[ ! -e "$T/back2" ] || fail "a refused pull landed"
	ok "keyed: --peer-method splice and sendfile refused with the reason"
fi

expect_exit 0 cli send --json --to j1 "$T/src"
echo "$OUT" | grep '^{' >"$T/j"
grep -q '"peer_report":{"schema":1,"type":"report".*"role":"recv".*"verdict":"verified".*"syscalls"' "$T/j" ||
	fail "no server report in the JSON: $(cat "$T/j")"
ok "--json: the server's report under peer_report"
# The server's total, the time the client waited on its side: to the
# verified file's rename and directory fsync, in both report forms.
jq -e '.peer_report.role == "recv" and .peer_report.seconds > 0 and
	.peer_report.total_seconds >= .peer_report.seconds' "$T/j" >/dev/null ||
	fail "no server total_seconds >= seconds in peer_report: $(cat "$T/j")"
expect_exit 0 cli send --to t1 "$T/src"
cmp -s "$T/src" "$d/t1" || fail "push t1 differs"
echo "$OUT" | grep -q "^    total: [0-9.]* s from the first byte to the rename and directory fsync: [0-9.]* MB/s$" ||
	fail "no total: line in the server's side: $OUT"
ok "the server's total under peer_report and in its side of the text report"

kill -TERM "$spid"
wait "$spid" || fail "serve exited $? after SIGTERM"
grep -q "session 10.231.0.2:[0-9]* push k-rw-mmap -m mmap: 3000000 bytes in [0-9.]* s, verified" "$T/serve.log" ||
	fail "no push log line: $(cat "$T/serve.log")"
grep -q "session 10.231.0.2:[0-9]* pull k-rw-rw -m mmap: 3000000 bytes in [0-9.]* s, verified" "$T/serve.log" ||
	fail "no pull log line"
ok "one log line per session"

next_port
bg "$T/serve2.log" ip netns exec "$NS_A" "$DND" serve --dir "$d" -p "$PORT" --json
spid=$BPID
ns_listen "$NS_A" "$PORT"
wait_log "$T/serve2.log" "no --key: only loopback peers are served" "keyless not said"
expect_exit 0 timeout 20 ip netns exec "$NS_A" "$DND" send -c 127.0.0.1 -p "$PORT" --to lo1 "$T/src"
cmp -s "$T/src" "$d/lo1" || fail "keyless loopback push differs"
pairs lo l "rw mmap sendfile splice vmsplice zerocopy uring uring-splice" "rw mmap splice vmsplice uring uring-splice tcpmmap"
kill -TERM "$spid"; wait "$spid" || fail "serve exited $?"
grep -q '"type":"serve_session".*"peer":"127.0.0.1:[0-9]*","direction":"push","name":"lo1","method":"rw","bytes":3000000,.*"verdict":"verified","error":null' "$T/serve2.log" ||
	fail "no JSON log line: $(cat "$T/serve2.log")"
ok "keyless: loopback served, JSON Lines (78-keyless: remote peers)"
