#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -m sockmap, the target first: a target that writes at once on accept,
# while the relay is still putting the flow's two sockets in the sockmap.
# Bytes that reach the target socket before the client's is in the map
# cannot be redirected; the relay must then reset the flow, never let the
# client see later bytes without the earlier ones. So each of 5 clients
# must see a prefix of the target's stream: all of it and EOF, or part of
# it and a reset.
. "$(dirname "$0")/lib.sh"

relay_modes
case $RELAY_MODES in *sockmap*) ;; *) skip "-m sockmap cannot run here" ;; esac
need_py3 selectors
command -v strace >/dev/null || skip "strace is missing (it slows the relay's pairing down)"

next_port; target=$PORT
next_port; rl=$PORT
flows=5

# race.py TARGET RELAY FLOWS: one process, non-blocking: the target side
# accepts, writes 64 KiB of 4-byte big-endian counters, 1 KiB every 10 ms
# (at once for the first 3 targets it accepts; 3 s later for the others,
# long after their flows were paired: those must arrive whole), shuts down
# writing and reads to EOF; each client connects through the relay and
# reads to EOF or a reset, checking every byte against the counters at its
# offset, then closes (a client that shut down writing before its target
# connected would be reset for that alone: a sockmap admits only
# established sockets). Prints "exact N reset M" or what went wrong.
cat >"$T/race.py" <<'EOF'
import selectors, socket, struct, sys, time
target, relay, flows = (int(a) for a in sys.argv[1:4])
pattern = b"".join(struct.pack(">I", i) for i in range(1 << 14))
deadline = time.monotonic() + 60
sel = selectors.DefaultSelector()
lis = socket.socket()
lis.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lis.bind(("127.0.0.1", target))
lis.listen(flows)
lis.setblocking(False)
sel.register(lis, selectors.EVENT_READ, ("listen", None))
# Tell the shell the target listens, then wait for the relay.
print("listening", flush=True)
sys.stdin.readline()
clients = {}
for _ in range(flows):
    c = socket.socket()
    c.connect(("127.0.0.1", relay))
    c.setblocking(False)
    clients[c] = 0
    sel.register(c, selectors.EVENT_READ, ("client", None))
exact = reset = 0
targets = {}
due = {}
accepted = 0

def write_due():
    # 1 KiB every 10 ms: bytes keep arriving all through the relay's
    # pairing of the flow.
    now = time.monotonic()
    for s in [t for t in targets if targets[t] < len(pattern) and due[t] <= now]:
        due[s] += 0.01
        try:
            targets[s] += s.send(pattern[targets[s]:targets[s] + 1024])
        except BlockingIOError:
            pass
        except OSError:
            targets[s] = len(pattern)	# reset: stop writing
        if targets[s] >= len(pattern):
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass	# the relay reset it already

while clients or targets:
    now = time.monotonic()
    if now > deadline:
        print("timed out: %d clients, %d targets left" % (len(clients), len(targets)))
        sys.exit(1)
    writing = [due[t] for t in targets if targets[t] < len(pattern)]
    wait = min([0.05] + [max(0.0, d - now) for d in writing])
    events = sel.select(wait)
    write_due()
    for key, ev in events:
        kind, _ = key.data
        s = key.fileobj
        if kind == "listen":
            try:
                t, _ = s.accept()
            except BlockingIOError:
                continue
            t.setblocking(False)
            targets[t] = 0
            due[t] = time.monotonic() + (0 if accepted < 3 else 3)
            accepted += 1
            sel.register(t, selectors.EVENT_READ, ("target", None))
            write_due()
        elif kind == "target":
            if ev & selectors.EVENT_READ:
                try:
                    b = s.recv(65536)
                except BlockingIOError:
                    continue
                except ConnectionError:
                    b = b""
                if not b:
                    sel.unregister(s)
                    s.close()
                    del targets[s]
        else:
            off = clients[s]
            try:
                b = s.recv(1 << 20)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                reset += 1
                b = None
            if b:
                if b != pattern[off:off + len(b)]:
                    print("reordered: %d bytes at offset %d are not the target's (counter %d there, not %d)" % (len(b), off, struct.unpack_from(">I", b)[0] if len(b) >= 4 else -1, off // 4))
                    sys.exit(1)
                clients[s] = off + len(b)
                continue
            if b is not None:
                if off != len(pattern):
                    print("EOF after %d of %d bytes, no reset" % (off, len(pattern)))
                    sys.exit(1)
                exact += 1
            sel.unregister(s)
            s.close()
            del clients[s]
print("exact %d reset %d" % (exact, reset))
EOF

mkfifo "$T/go"
timeout 90 "$PY3" "$T/race.py" "$target" "$rl" "$flows" <"$T/go" >"$T/race.log" 2>&1 &
race=$!
_pids+=("$race")
exec {GO}>"$T/go"
wait_text "$T/race.log" "listening"
# strace holds each of the relay's bpf() calls 50 ms, so the target's
# bytes are still arriving after the target socket went into the map and
# before the client's did: the race, every time.
# (LeakSanitizer cannot run under ptrace: no leak check in a SANITIZE build.)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
bg "$T/relay.log" strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:delay_exit=50000 \
	"$DND" relay -m sockmap -l "127.0.0.1:$rl" -t "127.0.0.1:$target" --json
spid=$BPID
wait_listen "$rl"
rpid=$(pgrep -P "$spid" | head -n1)
[ -n "$rpid" ] || fail "no relay under strace: $(cat "$T/relay.log")"
# A SIGTERM to strace at exit leaves its tracee running (and a relay
# with open flows waits out --grace): end it at once on a failure.
_cleanup_hooks+=('[ -z "$rpid" ] || kill -KILL "$rpid" 2>/dev/null')
echo go >&"$GO"
wait "$race"
rc=$?
out=$(grep -v '^listening$' "$T/race.log")
[ "$rc" = 0 ] || fail "race (exit $rc): $out"
exact=$(echo "$out" | sed -n 's/^exact \([0-9]*\) reset \([0-9]*\)$/\1/p')
resets=$(echo "$out" | sed -n 's/^exact \([0-9]*\) reset \([0-9]*\)$/\2/p')
[ -n "$exact" ] && [ $((exact + resets)) = "$flows" ] || fail "race: $out"
[ "$resets" -gt 0 ] || fail "the race did not happen (no flow reset): $out"
[ "$exact" -gt 0 ] || fail "no flow whose target wrote after pairing arrived whole: $out"
ok "target writes on accept, $flows flows: $exact byte-exact, $resets reset, none reordered"

kill -TERM "$rpid"
wait_for "$spid" 20 || fail "relay (under strace) exit $?: $(cat "$T/relay.log")"
rpid=
# The relay's own count of the flows it reset for the race agrees.
[ "$(jnum "$T/relay.log" completed)" = "$exact" ] ||
	fail "relay completed $(jnum "$T/relay.log" completed), clients saw $exact whole: $(cat "$T/relay.log")"
ok "the relay counted $exact flows completed"
