#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One short loopback transfer, file -> TCP -> file, verified: `make smoke`.
set -eu
: "${DND:=$(dirname "$0")/../dnd}"
d=$(mktemp -d /tmp/dnd-smoke.XXXXXX)
rp=
trap 'kill "$rp" 2>/dev/null || true; rm -rf "$d"' EXIT
head -c 64M /dev/urandom >"$d/src"
port=$((20000 + RANDOM % 30000))
"$DND" recv -p "$port" -m splice "$d/dst" &
rp=$!
"$DND" send -c 127.0.0.1 -p "$port" -m sendfile "$d/src"
wait $rp
cmp "$d/src" "$d/dst" && echo "smoke: 64 MiB file -> TCP -> file, byte-exact"
