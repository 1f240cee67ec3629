#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd serve with -P N between two namespaces: push and pull over 1, 2 and 4
# streams on awkward sizes, keyed and keyless; strangers on a session's
# streams port dropped; a client killed mid-transfer; and a man in the
# middle who changes a byte inside a TLS record, caught by TLS.
. "$(dirname "$0")/lib.sh"

setup_ns
d="$T/d"; mkdir "$d"
"$DND" serve --new-key "$T/key" 2>/dev/null || fail "--new-key"
: >"$T/s0"
head -c 1 /dev/urandom >"$T/s1"
random_file "$T/s64" $((64 * 1048576 + 13))

# serve ARGS...: a server in A on a fresh port; sets SPID.
serve() {
	next_port
	bg "$T/serve.log" ip netns exec "$NS_A" "$DND" serve --dir "$d" -p "$PORT" --grace 1 "$@"
	SPID=$BPID
	ns_listen "$NS_A" "$PORT"
}
stop() { kill -TERM "$SPID"; wait "$SPID" || fail "serve exited $? after SIGTERM: $(cat "$T/serve.log")"; }
# only: DIR holds exactly these names (sorted, space-separated).
only() {
	local left
	left=$(ls -A "$d" | sort | tr '\n' ' ')
	[ "$left" = "$1" ] || fail "in DIR: '$left', wanted '$1'"
}
# pairs NS HOST KEYARGS...: push and pull at -P 1, 2, 4 for every size.
pairs() {
	local ns=$1 host=$2 sz p; shift 2
	for sz in 0 1 64; do
		for p in 1 2 4; do
			expect_exit 0 timeout 60 ip netns exec "$ns" "$DND" send -c "$host" -p "$PORT" "$@" -P "$p" --to "f$sz-$p" "$T/s$sz"
			expect_out "verified"
			cmp -s "$T/s$sz" "$d/f$sz-$p" || fail "push $sz -P $p differs"
			rm -f "$T/back"
			expect_exit 0 timeout 60 ip netns exec "$ns" "$DND" recv -c "$host" -p "$PORT" "$@" -P "$p" --from "f$sz-$p" "$T/back"
			expect_out "verified"
			cmp -s "$T/s$sz" "$T/back" || fail "pull $sz -P $p differs"
			rm -f "$d/f$sz-$p"
		done
	done
	only ""
}

serve --key "$T/key"
pairs "$NS_B" 10.231.0.1 --key "$T/key"
ok "keyed, across namespaces: push and pull at -P 1/2/4, 0, 1 and 64 MiB + 13 bytes, byte-exact and verified"
stop

serve
pairs "$NS_A" 127.0.0.1
ok "keyless, on loopback: push and pull at -P 1/2/4, byte-exact and verified"
stop

# Strangers on the session's streams port (a junk join from outside
# --allow, a join with no valid tag from inside) are dropped; the
# client's own streams still come.
ip -n "$NS_A" addr add 10.231.0.3/24 dev "va-$$"
serve --key "$T/key" --allow 10.231.0.1/32,10.231.0.2/32
PORT0=$PORT; next_port
mitm() { # mitm MODE [SIZE]: a proxy in A on $PORT to the server; sets MPID
	bg "$T/mitm.out" ip netns exec "$NS_A" perl "$(dirname "$0")/mitm.pl" 10.231.0.1 "$PORT" 10.231.0.1 "$PORT0" "$@"
	MPID=$BPID
	for _ in $(seq 1 100); do grep -q ready "$T/mitm.out" && return; sleep 0.05; done
	fail "the proxy did not start: $(cat "$T/mitm.out")"
}
mitm stranger 10.231.0.3
expect_exit 0 timeout 60 ip netns exec "$NS_B" "$DND" send -c 10.231.0.1 -p "$PORT" --key "$T/key" -P 4 --to st "$T/s64"
expect_out "verified"
expect_out "warning: dropped 1 connection(s) to the streams port from outside --allow and 1 without the key or of another session"
wait "$MPID"
grep -q strangers "$T/mitm.out" || fail "no strangers connected: $(cat "$T/mitm.out")"
cmp -s "$T/s64" "$d/st" || fail "the push with strangers differs"
rm -f "$d/st"
only ""
ok "strangers on the streams port are dropped, the transfer completes"

# A man in the middle flips a bit near the end (TLS records): TLS catches
# it both ways, the message says so, nothing lands.
random_file "$T/s3" 3000000
mitm flipat 2000000
expect_exit 1 timeout 60 ip netns exec "$NS_B" "$DND" send -c 10.231.0.1 -p "$PORT" --key "$T/key" --to mitm "$T/s3"
expect_out "(bad record mac): the data was changed on the way"
wait "$MPID"
grep -q flipped "$T/mitm.out" || fail "the proxy flipped nothing"
only ""
cp "$T/s3" "$d/pullme"
mitm flipat 2000000
rm -f "$T/back"
expect_exit 1 timeout 60 ip netns exec "$NS_B" "$DND" recv -c 10.231.0.1 -p "$PORT" --key "$T/key" --from pullme "$T/back"
expect_out "dnd: a TLS record failed its check (bad record mac): the data was changed on the way"
wait "$MPID"
grep -q flipped "$T/mitm.out" || fail "the proxy flipped nothing"
[ ! -e "$T/back" ] || fail "a pull with a changed trailer landed"
ls -A "$T" | grep -q '^\.back' && fail "a pull with a changed trailer left $(ls -A "$T" | grep back)"
rm -f "$d/pullme"
grep -q "push mitm -m rw: .*failed: a TLS record failed its check (bad record mac): the data was changed on the way" "$T/serve.log" ||
	fail "the server's log: $(cat "$T/serve.log")"
ok "a changed record fails TLS both ways: 'changed on the way', nothing lands"
stop

# A client killed mid-transfer over 4 streams leaves nothing; the next
# client over 4 streams is served.
serve --key "$T/key"
len=$(($(df --output=avail -B1 "$d" | tail -n1) / 2))
[ "$len" -le 4000000000 ] || len=4000000000
bg "$T/killed.log" ip netns exec "$NS_B" "$DND" send --key "$T/key" -c 10.231.0.1 -p "$PORT" -P 4 --to killed -l "$len" /dev/zero
kpid=$BPID
wait_size "$d/.killed.dnd-*" 20000000
kill -KILL "$kpid"
wait_log "$T/serve.log" "push killed .*failed" "no failed session logged"
wait "$kpid" 2>/dev/null
only ""
expect_exit 0 timeout 60 ip netns exec "$NS_B" "$DND" send --key "$T/key" -c 10.231.0.1 -p "$PORT" -P 4 --to after "$T/s64"
cmp -s "$T/s64" "$d/after" || fail "the next client's file differs"
rm -f "$d/after"
ok "a client killed mid-transfer at -P 4 leaves nothing; the next is served"
stop
