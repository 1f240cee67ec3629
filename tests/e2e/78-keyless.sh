#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Keyless dnd serve stays on loopback: it listens on 127.0.0.1 unless
# --bind says otherwise (then it warns), refuses peers off loopback, and a
# keyless client refuses a server off loopback without --insecure.
. "$(dirname "$0")/lib.sh"

setup_ns
d="$T/d"; mkdir "$d"
random_file "$T/src" 300000
lo_msg="is not loopback and no --key is given: anyone on the path can read and change the data; use --key FILE, or --insecure to accept that"

next_port
bg "$T/serve.log" ip netns exec "$NS_A" "$DND" serve --dir "$d" -p "$PORT"
spid=$BPID SPORT=$PORT
ns_listen "$NS_A" "$PORT"
wait_log "$T/serve.log" "listening on 127.0.0.1:$PORT" "not on 127.0.0.1"
socks=$(ip netns exec "$NS_A" ss -Htln "sport = :$PORT" | awk '{print $4}' | tr '\n' ' ')
[ "$socks" = "127.0.0.1:$PORT " ] || fail "keyless serve listens on: $socks"
ok "keyless serve listens on 127.0.0.1 only"

# The client refuses before it connects (exit 2), both ways.
expect_exit 2 timeout 20 ip netns exec "$NS_B" "$DND" send -c 10.231.0.1 -p "$PORT" --to r1 "$T/src"
[ "$(echo "$OUT" | head -1)" = "dnd: 10.231.0.1 $lo_msg" ] || fail "send: $OUT"
expect_exit 2 timeout 20 ip netns exec "$NS_B" "$DND" recv -c 10.231.0.1 -p "$PORT" --from r1 "$T/back"
[ "$(echo "$OUT" | head -1)" = "dnd: 10.231.0.1 $lo_msg" ] || fail "recv: $OUT"
expect_exit 2 timeout 20 ip netns exec "$NS_B" "$DND" recv -c 10.231.0.1 -p "$PORT" --peer-end zero --peer-size 1M /dev/null
expect_out "dnd: 10.231.0.1 $lo_msg"
[ ! -e "$T/back" ] && [ ! -e "$d/r1" ] || fail "a refused transfer left a file"
expect_exit 2 "$DND" send -c 127.0.0.1 -p "$PORT" --key "$T/none" --insecure --to r1 "$T/src"
expect_out "dnd: --insecure lets a keyless transfer with dnd serve (--to, --from, --peer-end) reach a server off loopback; with --key it is TLS already: drop --insecure"
ok "a keyless client refuses a server off loopback (exit 2, the risk and the fix)"

# --insecure through a forward on the server's host: the server sees a
# loopback peer, and the transfer runs.
next_port; FPORT=$PORT
bg "$T/fwd.out" ip netns exec "$NS_A" perl "$(dirname "$0")/mitm.pl" 10.231.0.1 "$FPORT" 127.0.0.1 "$SPORT" swap QQQQ QQQQ
wait_text "$T/fwd.out" ready
expect_exit 0 timeout 20 ip netns exec "$NS_B" "$DND" send -c 10.231.0.1 -p "$FPORT" --insecure --to f1 "$T/src"
cmp -s "$T/src" "$d/f1" || fail "the forwarded push differs"
ok "--insecure: a keyless push through a forward on the server's loopback lands"
kill -TERM "$spid"; wait "$spid" || fail "serve exited $?"

# --bind: allowed, with a warning; a peer off loopback is still refused.
next_port
bg "$T/serve2.log" ip netns exec "$NS_A" "$DND" serve --dir "$d" -p "$PORT" --bind 0.0.0.0 --json
spid=$BPID
ns_listen "$NS_A" "$PORT"
wait_log "$T/serve2.log" "listening on 0.0.0.0:$PORT" "no listening line"
grep -qxF "dnd: warning: --bind 0.0.0.0 without --key: the port is open to whoever reaches 0.0.0.0; peers off loopback are refused, but every local user and anything that forwards from loopback (ssh -L, socat, a relay) may push and pull files beneath $d, in clear text; give the server --key FILE" "$T/serve2.log" ||
	fail "no --bind warning: $(cat "$T/serve2.log")"
expect_exit 1 timeout 20 ip netns exec "$NS_B" "$DND" send --insecure -c 10.231.0.1 -p "$PORT" --to r2 "$T/src"
expect_out "it refuses this client (a server without --key serves loopback peers only"
[ ! -e "$d/r2" ] || fail "r2 written by a keyless server for a remote peer"
# The refusing session logs once its client has gone; a SIGTERM before
# that would cut it.
wait_log "$T/serve2.log" '"peer":"10.231.0.2:[0-9]*"' "the remote refusal is not logged"
kill -TERM "$spid"; wait "$spid" || fail "serve exited $?"
grep -q '"peer":"10.231.0.2:[0-9]*".*"verdict":"failed","error":"keyless mode serves loopback only' "$T/serve2.log" ||
	fail "remote keyless refusal not logged: $(cat "$T/serve2.log")"
ok "keyless --bind 0.0.0.0: warned of, a remote peer still refused and logged"
