#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One short loopback transfer, file -> TCP -> file, verified: `make smoke`.
# It also runs inside the Debian package build, beside other builds and
# tests, so the port comes from below the kernel's ephemeral range (where
# no outgoing connection takes it) and a port someone else holds is
# replaced by another, up to five times.
set -eu
: "${DND:=$(dirname "$0")/../dnd}"
d=$(mktemp -d /tmp/dnd-smoke.XXXXXX)
rp=
trap 'kill "$rp" 2>/dev/null || true; rm -rf "$d"' EXIT
head -c 64M /dev/urandom >"$d/src"

# listening PORT: some socket listens on PORT (/proc/net/tcp{,6}, state 0A).
listening() {
	local hex
	hex=$(printf ':%04X ' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p="$hex" 'index($2 " ", p) && $4 == "0A" { f = 1 } END { exit !f }'
}

eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
[ "$eph" -gt 11024 ] || eph=32768
for try in 1 2 3 4 5; do
	port=$((10000 + RANDOM % (eph - 11000)))
	listening "$port" && continue
	"$DND" recv -p "$port" -m splice "$d/dst" 2>"$d/recv.err" &
	rp=$!
	for _ in $(seq 1 100); do
		listening "$port" && break
		kill -0 "$rp" 2>/dev/null || break
		sleep 0.1
	done
	if listening "$port"; then
		break
	fi
	if wait "$rp"; then :; fi
	rp=
	grep -q "Address already in use" "$d/recv.err" || {
		cat "$d/recv.err" >&2
		echo "smoke: dnd recv did not listen on port $port" >&2
		exit 1
	}
	[ "$try" -lt 5 ] || { echo "smoke: five ports were taken" >&2; exit 1; }
done
"$DND" send -c 127.0.0.1 -p "$port" -m sendfile "$d/src"
wait "$rp"
rp=
cat "$d/recv.err" >&2
cmp "$d/src" "$d/dst" && echo "smoke: 64 MiB file -> TCP -> file, byte-exact"
