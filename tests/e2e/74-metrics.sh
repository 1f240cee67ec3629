#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --metrics: Prometheus counters at /metrics of the long-running commands,
# scraped with curl while traffic flows; every name starts with dnd_ and
# the counters move; idle connections do not lock the scraper out.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip "curl is not installed (scripts/deps.sh)"
need_py3

# scrape URL NAME{LABELS}: the value of one sample.
scrape() {
	curl -s --max-time 5 "$1" | awk -v k="$2" '$1 == k { print $2 }'
}

# --- dnd serve ---------------------------------------------------------------
mkdir "$T/srv"
next_port
sport=$PORT
next_port
mport=$PORT
"$DND" serve --dir "$T/srv" -p "$sport" --metrics "127.0.0.1:$mport" \
	>"$T/serve.log" 2>&1 &
spid=$!
_pids+=("$spid")
wait_listen "$mport"
wait_listen "$sport"
url=http://127.0.0.1:$mport/metrics
# The metrics port listens a moment before the first counters are in.
for i in $(seq 1 200); do
	[ -n "$(scrape "$url" dnd_serve_connections_total)" ] && break
	sleep 0.1
done
curl -s --max-time 5 "$url" >"$T/m0" || fail "no /metrics: $(cat "$T/serve.log")"
grep -v '^#' "$T/m0" | grep -qv '^dnd_' && fail "a name without dnd_: $(cat "$T/m0")"
[ "$(scrape "$url" dnd_serve_connections_total)" = 0 ] || fail "$(cat "$T/m0")"
random_file "$T/f" 3000000
"$DND" send -c 127.0.0.1 -p "$sport" --to f "$T/f" >"$T/s.log" 2>&1 ||
	fail "push: $(cat "$T/s.log" "$T/serve.log")"
"$DND" send -c 127.0.0.1 -p "$sport" --to ../escape "$T/f" >/dev/null 2>&1
# Each session is counted when the server reaps its process, in any order.
serve_counted() {
	[ "$(scrape "$url" dnd_serve_connections_total)" = 2 ] &&
	[ "$(scrape "$url" 'dnd_serve_sessions_total{outcome="ok"}')" = 1 ] &&
	[ "$(scrape "$url" 'dnd_serve_sessions_total{outcome="failed"}')" = 1 ] &&
	[ "$(scrape "$url" 'dnd_serve_bytes_total{direction="push"}')" = 3000000 ]
}
for i in $(seq 1 200); do
	serve_counted && break
	sleep 0.1
done
serve_counted || fail "serve counters did not move: $(curl -s "$url")"
# A connection that has not sent a byte waits, counted, without a process.
exec 7<>"/dev/tcp/127.0.0.1/$sport"
for i in $(seq 1 200); do
	[ "$(scrape "$url" dnd_serve_waiting)" = 1 ] && break
	sleep 0.1
done
[ "$(scrape "$url" dnd_serve_waiting)" = 1 ] && [ "$(scrape "$url" dnd_serve_children)" = 0 ] ||
	fail "a silent connection: $(curl -s "$url")"
exec 7>&-
# 100 idle connections held on the metrics port (one helper, killed by
# PID) must not lock the scraper out: libmicrohttpd took 16 at a time,
# each for 10 s, with 17 more in the backlog.
cat >"$T/hold.py" <<'PY'
import select, socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
socks = []
for _ in range(n):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    socks.append(s)
pending, held, end = set(socks), 0, time.monotonic() + 8
while pending and time.monotonic() < end:
    _, w, _ = select.select([], list(pending), [], 0.2)
    for s in w:
        pending.discard(s)
        held += s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
print("held %d" % held, flush=True)
time.sleep(60)
PY
"$PY3" "$T/hold.py" "$mport" 100 >"$T/hold.log" 2>&1 &
hpid=$!
_pids+=("$hpid")
wait_text "$T/hold.log" "^held"
grep -qx "held 100" "$T/hold.log" ||
	fail "100 idle connections to /metrics: $(cat "$T/hold.log")"
# The server has taken them all off the listen queue (ss: Recv-Q 0).
for i in $(seq 1 200); do
	[ "$(ss -Htln "sport = :$mport" | awk '{ print $2 }')" = 0 ] && break
	sleep 0.1
done
[ "$(ss -Htln "sport = :$mport" | awk '{ print $2 }')" = 0 ] ||
	fail "idle connections wait in the listen queue: $(ss -Htln "sport = :$mport")"
curl -s --max-time 5 "$url" >"$T/m1" ||
	fail "no /metrics while 100 idle connections are held (curl exit $?)"
grep -q '^dnd_serve_connections_total ' "$T/m1" || fail "scrape: $(cat "$T/m1")"
kill "$hpid"
wait "$hpid" 2>/dev/null
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/x")" = 404 ] ||
	fail "another path is not 404"
# The gauges against the truth: 5 silent connections held (waiting, no
# process) and a session paused on a source that does not move (one
# process), then both released; each checked once it must have settled.
# gauges_are WAIT KIDS: /metrics says so, and so do ss and pgrep.
gauges_are() {
	[ "$(scrape "$url" dnd_serve_waiting)" = "$1" ] &&
	[ "$(scrape "$url" dnd_serve_children)" = "$2" ] &&
	[ "$(pgrep -c -P "$spid")" = "$2" ]
}
wait_gauges() {
	for i in $(seq 1 100); do
		gauges_are "$1" "$2" && return 0
		sleep 0.1
	done
	fail "gauges: wanted waiting $1 children $2, /metrics says" \
		"$(scrape "$url" dnd_serve_waiting) $(scrape "$url" dnd_serve_children)," \
		"pgrep -P $(pgrep -c -P "$spid"): $(cat "$T/serve.log")"
}
# The paused session first: the silent connections are closed after the
# handshake's 5 s, so the gauges are read right after they are held.
mkfifo "$T/fifo"
"$DND" send -c 127.0.0.1 -p "$sport" --to paused - <"$T/fifo" >"$T/p.log" 2>&1 &
ppid=$!
_pids+=("$ppid")
exec 8>"$T/fifo"
wait_gauges 0 1
"$PY3" "$T/hold.py" "$sport" 5 >"$T/hold5.log" 2>&1 &
hpid=$!
_pids+=("$hpid")
wait_text "$T/hold5.log" "^held"
wait_gauges 5 1
kill "$hpid"
wait "$hpid" 2>/dev/null
wait_gauges 0 1
exec 8>&-
wait "$ppid" || fail "the paused push: $(cat "$T/p.log")"
wait_gauges 0 0
kill -TERM "$spid"
wait "$spid" || fail "serve exit $?"
ok "serve: connections, sessions by outcome, bytes and waiting connections counted at /metrics"

# --- dnd relay -----------------------------------------------------------------
next_port
sink=$PORT
next_port
rl=$PORT
next_port
mport=$PORT
"$DND" bench relay --sink -l "127.0.0.1:$sink" --count 4 >"$T/sink.log" 2>&1 &
kpid=$!
_pids+=("$kpid")
"$DND" relay -l "127.0.0.1:$rl" -t "127.0.0.1:$sink" --metrics "$mport" \
	>"$T/relay.log" 2>&1 &
rpid=$!
_pids+=("$rpid")
wait_listen "$sink"
wait_listen "$rl"
wait_listen "$mport"
wait_log "$T/relay.log" "^dnd: listening on 127.0.0.1:$rl, forwarding to 127.0.0.1:$sink (-m splice)$" "relay's listening line"
url=http://127.0.0.1:$mport/metrics
for i in $(seq 1 200); do
	[ -n "$(scrape "$url" dnd_relay_flows_accepted_total)" ] && break
	sleep 0.1
done
[ "$(scrape "$url" dnd_relay_flows_accepted_total)" = 0 ] ||
	fail "fresh relay: $(curl -s "$url")"
# Two paused flows hold still: the counters move while traffic flows.
"$DND" bench relay --client -t "127.0.0.1:$rl" --flows 2 --size 8Mi --pause \
	>"$T/c1.log" 2>&1 &
cpid=$!
_pids+=("$cpid")
wait_text "$T/c1.log" "peer client: paused"
for i in $(seq 1 200); do
	live=$(scrape "$url" dnd_relay_flows_active)
	[ "$live" = 2 ] && break
	sleep 0.05
done
[ "$live" = 2 ] || fail "2 flows open, metrics say '$live': $(curl -s "$url")"
kill -USR1 "$cpid"
wait "$cpid" || fail "client: $(cat "$T/c1.log")"
"$DND" bench relay --client -t "127.0.0.1:$rl" --flows 2 --size 8Mi \
	>"$T/c2.log" 2>&1 || fail "client: $(cat "$T/c2.log")"
for i in $(seq 1 200); do
	[ "$(scrape "$url" 'dnd_relay_flows_ended_total{how="completed"}')" = 4 ] && break
	sleep 0.1
done
[ "$(scrape "$url" dnd_relay_flows_accepted_total)" = 4 ] &&
[ "$(scrape "$url" 'dnd_relay_flows_ended_total{how="completed"}')" = 4 ] &&
[ "$(scrape "$url" 'dnd_relay_bytes_total{dir="client_to_target"}')" -ge 16777216 ] ||
	fail "relay counters: $(curl -s "$url")"
awk '$1 ~ /^dnd_relay_splice_bytes_per_call/ && $2 <= 0 { exit 1 }' \
	<(curl -s "$url") || fail "bytes per splice not counted"
curl -s "$url" | grep -v '^#' | grep -qv '^dnd_' && fail "a name without dnd_"
kill -TERM "$rpid"
wait "$rpid" || fail "relay exit $?"
ok "relay: says where it listens; flows, bytes, splice calls at /metrics"

# Under -m sockmap the kernel moves the bytes: the relay's byte counts are
# its BPF program's, exact to the byte once the flows have ended.
relay_modes
if [ "$RELAY_MODES" != splice ]; then
	next_port; sink=$PORT
	next_port; rl=$PORT
	next_port; mport=$PORT
	"$DND" bench relay --sink -l "127.0.0.1:$sink" --count 2 >"$T/sink.log" 2>&1 &
	_pids+=("$!")
	"$DND" relay -m sockmap -l "127.0.0.1:$rl" -t "127.0.0.1:$sink" --threads 2 \
		--metrics "$mport" >"$T/relay.log" 2>&1 &
	rpid=$!
	_pids+=("$rpid")
	wait_listen "$sink"
	wait_listen "$rl"
	wait_listen "$mport"
	url=http://127.0.0.1:$mport/metrics
	# Two flows paused halfway (held open): the bytes the program has
	# forwarded so far are at /metrics already (read once a second), and
	# no more than the halves the clients sent (2 x (2 MiB + a header)).
	"$DND" bench relay --client -t "127.0.0.1:$rl" --flows 2 --size 8Mi --reply 4Mi \
		--pause >"$T/c3.log" 2>&1 &
	cpid=$!
	_pids+=("$cpid")
	wait_text "$T/c3.log" "peer client: paused"
	for i in $(seq 1 100); do
		c2t=$(scrape "$url" 'dnd_relay_bytes_total{dir="client_to_target"}')
		[ "${c2t:-0}" -gt 0 ] && break
		sleep 0.1
	done
	[ "$(scrape "$url" dnd_relay_flows_active)" = 2 ] && [ "${c2t:-0}" -gt 0 ] &&
	[ "$c2t" -le $((4194304 + 2 * 32)) ] ||
		fail "2 paused sockmap flows: bytes '$c2t' at /metrics: $(curl -s "$url")"
	kill -USR1 "$cpid"
	wait "$cpid" || fail "client: $(cat "$T/c3.log")"
	for i in $(seq 1 200); do
		[ "$(scrape "$url" 'dnd_relay_flows_ended_total{how="completed"}')" = 2 ] && break
		sleep 0.1
	done
	c2t=$(scrape "$url" 'dnd_relay_bytes_total{dir="client_to_target"}')
	t2c=$(scrape "$url" 'dnd_relay_bytes_total{dir="target_to_client"}')
	[ "$(scrape "$url" 'dnd_relay_flows_ended_total{how="completed"}')" = 2 ] &&
	[ "$c2t" = $((8388608 + 2 * 32)) ] && [ "$t2c" = 4194304 ] ||
		fail "sockmap relay counters: $(curl -s "$url")"
	kill -TERM "$rpid"
	wait "$rpid" || fail "relay exit $?"
	ok "relay -m sockmap --threads 2: /metrics bytes are the BPF program's, growing while flows run, exact at the end ($c2t and $t2c)"
fi

# --- --metrics port 0 --------------------------------------------------------
# Port 0, as --help says, takes any free port, and the log names the one
# it got; a port out of range is a usage error that says 0 is allowed.
next_port
"$DND" serve --dir "$T/srv" -p "$PORT" --metrics 127.0.0.1:0 >"$T/serve0.log" 2>&1 &
spid=$!
_pids+=("$spid")
wait_text "$T/serve0.log" "metrics on http://"
any=$(sed -n 's|^.*dnd: metrics on http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$T/serve0.log")
[ -n "$any" ] && [ "$any" != 0 ] || fail "--metrics 127.0.0.1:0: $(cat "$T/serve0.log")"
curl -s --max-time 5 "http://127.0.0.1:$any/metrics" | grep -q '^dnd_serve_connections_total ' ||
	fail "no /metrics on the port the log named ($any)"
kill -TERM "$spid"
wait "$spid" || fail "serve exit $?"
expect_exit 2 "$DND" serve --dir "$T/srv" -p "$PORT" --metrics 65536
[ "$OUT" = "dnd: --metrics '65536': the port must be a number from 0 (any free one) to 65535
dnd: see 'dnd serve --help'" ] || fail "--metrics 65536: $OUT"
ok "serve --metrics 127.0.0.1:0 listens on a free port and logs it; 65536 is refused"
