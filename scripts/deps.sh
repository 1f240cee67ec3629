#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages dnd builds, tests and benchmarks with, when
# any is missing. Quiet and quick when everything is there already.
# `deps.sh fuzz` also wants clang and its libFuzzer runtime (make fuzz).
set -eu

# python3 and python3-jsonschema: the tests read bench's CSV with Python's
# csv module and check every JSON object against docs/schema/.
PKGS="gcc make pkg-config libxxhash-dev xxhash liburing-dev libsodium-dev netcat-openbsd \
iproute2 iperf3 strace gnuplot-nox jq python3 python3-jsonschema"
# libclang-rt-dev holds libFuzzer; clang only recommends it.
[ "${1:-}" = fuzz ] && PKGS="$PKGS clang libclang-rt-dev"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "dnd: missing Debian packages:$missing; run 'sudo apt-get install$missing' or run make as root" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# An old package list cannot find new packages; refresh it once.
apt-get update -qq >/dev/null || true
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
