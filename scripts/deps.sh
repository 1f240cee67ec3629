#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages dnd builds, packages, tests and benchmarks
# with, when any is missing: debian/control's Build-Depends (so that a fresh
# machine can run dpkg-buildpackage too) and the tools the tests use. Quiet
# and quick when everything is there already.
# `deps.sh fuzz` also wants clang and its libFuzzer runtime (make fuzz);
# `deps.sh bench` wants only what make bench needs: the compiler, the
# libraries dnd links, iperf3 beside it and iproute2 for --netns (not the
# packaging and test tools: lintian, mandoc, debhelper ...).
# `deps.sh refs` adds fio and bc, the references of scripts/bench-*.sh.
set -eu
cd "$(dirname "$0")/.."

# python3 and python3-jsonschema: the tests read bench's CSV with Python's
# csv module and check every JSON object against docs/schema/.
# Build-Depends, one name per item: the first alternative, without version,
# architecture or profile qualifiers. debhelper-compat is a virtual package
# that debhelper provides, and dpkg-query knows only real ones.
build_depends() {
	sed -n '/^Build-Depends:/,/^[^ 	]/{
		s/^Build-Depends://
		/^[^ 	]/d
		p
	}' debian/control | tr ',' '\n' | sed -e 's/|.*//' \
		-e 's/([^)]*)//g; s/\[[^]]*\]//g; s/<[^>]*>//g' \
		-e 's/^[ 	]*//; s/[ 	]*$//' \
		-e 's/^debhelper-compat$/debhelper/' | grep -v '^$'
}

PKGS="gcc make dpkg-dev $(build_depends | tr '\n' ' ')
xxhash netcat-openbsd iproute2 iperf3 strace gnuplot-nox jq
man-db groff-base mandoc lintian python3 python3-jsonschema curl openssl"
case ${1:-} in
# libclang-rt-dev holds libFuzzer; clang only recommends it.
fuzz) PKGS="$PKGS clang libclang-rt-dev" ;;
bench) PKGS="gcc make $(build_depends | grep -vx debhelper | tr '\n' ' ')
iperf3 iproute2" ;;
refs) PKGS="$PKGS fio bc" ;;
esac

# One dpkg-query for all: it names the installed ones.
# shellcheck disable=SC2086
installed=$(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null |
	awk '$NF == "installed" { print $1 }')
missing=""
for p in $PKGS; do
	echo "$installed" | grep -qx "$p" || missing="$missing $p"
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
