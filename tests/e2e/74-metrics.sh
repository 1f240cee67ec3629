#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --metrics: Prometheus counters at /metrics of the long-running commands,
# scraped with curl while traffic flows; every name starts with dnd_ and
# the counters move.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip "curl is not installed (scripts/deps.sh)"

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
url=http://127.0.0.1:$mport/metrics
curl -s --max-time 5 "$url" >"$T/m0" || fail "no /metrics: $(cat "$T/serve.log")"
grep -v '^#' "$T/m0" | grep -qv '^dnd_' && fail "a name without dnd_: $(cat "$T/m0")"
[ "$(scrape "$url" dnd_serve_connections_total)" = 0 ] || fail "$(cat "$T/m0")"
random_file "$T/f" 3000000
"$DND" send -c 127.0.0.1 -p "$sport" --to f "$T/f" >"$T/s.log" 2>&1 ||
	fail "push: $(cat "$T/s.log" "$T/serve.log")"
"$DND" send -c 127.0.0.1 -p "$sport" --to ../escape "$T/f" >/dev/null 2>&1
for i in $(seq 1 50); do
	[ "$(scrape "$url" 'dnd_serve_sessions_total{outcome="failed"}')" = 1 ] && break
	sleep 0.1
done
[ "$(scrape "$url" dnd_serve_connections_total)" = 2 ] &&
[ "$(scrape "$url" 'dnd_serve_sessions_total{outcome="ok"}')" = 1 ] &&
[ "$(scrape "$url" 'dnd_serve_sessions_total{outcome="failed"}')" = 1 ] &&
[ "$(scrape "$url" 'dnd_serve_bytes_total{direction="push"}')" = 3000000 ] ||
	fail "serve counters did not move: $(curl -s "$url")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/x")" = 404 ] ||
	fail "another path is not 404"
kill -TERM "$spid"
wait "$spid" || fail "serve exit $?"
ok "serve: connections, sessions by outcome and bytes counted at /metrics"
