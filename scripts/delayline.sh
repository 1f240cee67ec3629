#!/bin/bash
# SPDX-License-Identifier: MIT
# A slow, far link between two network namespaces (issue 25): the
# tests/tools/delayline forwarder (see the comment at its top) between a TUN
# device in each. As root:
#   scripts/delayline.sh [DELAYLINE OPTIONS] [-- CMD [ARGS...]]
# e.g. scripts/delayline.sh --delay 50ms --rate 1gbit -- sh -c \
#   'ip netns exec $DL_NS_B iperf3 -s -1 -D; ip netns exec $DL_NS_A iperf3 -c $DL_B'
# runs CMD with DL_NS_A, DL_NS_B (the namespaces) and DL_A, DL_B (their
# addresses, 10.234.0.1 and .2) exported, then stops the line and prints its
# counters; without CMD the line stays up until its --seconds (default 300)
# or Ctrl-C. Everything (namespaces, devices, forwarder) goes at exit.
# DELAYLINE names the forwarder (default build/tests/tools/delayline, made
# by `make tools`). MTU 9000 unless --mtu says otherwise: TCP arrives in
# GSO super-packets of up to 64 KiB whatever the MTU, but with --loss (no
# GSO, see the forwarder) the ceiling is a packet rate and bigger packets
# carry more.
#
# Sourced (". scripts/delayline.sh"), it gives delayline_up OPTIONS... and
# delayline_down, for scripts that run many rounds on one line; the caller
# calls delayline_down at exit (its own trap).

# delayline_up OPTIONS...: builds the line; sets DL_NS_A, DL_NS_B, DL_A,
# DL_B, DL_PID and DL_LOG (the forwarder's output). Returns 1 saying why.
delayline_up() {
	local bin=${DELAYLINE:-$(dirname "${BASH_SOURCE[0]}")/../build/tests/tools/delayline}
	local i
	DL_NS_A=dl-a-$$ DL_NS_B=dl-b-$$ DL_A=10.234.0.1 DL_B=10.234.0.2
	DL_DEV_A=dla$$ DL_DEV_B=dlb$$
	DL_LOG=$(mktemp /tmp/delayline.XXXXXX)
	DL_PID=
	export DL_NS_A DL_NS_B DL_A DL_B
	[ -x "$bin" ] || { echo "delayline: no $bin; run make tools" >&2; return 1; }
	[ -c /dev/net/tun ] || { echo "delayline: no /dev/net/tun; modprobe tun" >&2; return 1; }
	ip netns add "$DL_NS_A" || return 1
	ip netns add "$DL_NS_B" || return 1
	"$bin" --a "$DL_NS_A:$DL_DEV_A" --b "$DL_NS_B:$DL_DEV_B" "$@" >"$DL_LOG" 2>&1 &
	DL_PID=$!
	for i in $(seq 1 200); do
		grep -q '^delayline: ready' "$DL_LOG" && break
		kill -0 "$DL_PID" 2>/dev/null || break
		sleep 0.05
	done
	grep -q '^delayline: ready' "$DL_LOG" ||
		{ echo "delayline did not start: $(cat "$DL_LOG")" >&2; return 1; }
	for i in a b; do
		local ns dev me peer
		if [ $i = a ]; then
			ns=$DL_NS_A dev=$DL_DEV_A me=$DL_A peer=$DL_B
		else
			ns=$DL_NS_B dev=$DL_DEV_B me=$DL_B peer=$DL_A
		fi
		ip -n "$ns" link set lo up &&
			ip -n "$ns" addr add "$me" peer "$peer" dev "$dev" &&
			ip -n "$ns" link set "$dev" up || return 1
	done
}

# delayline_down: stops the forwarder (its counters go to stdout), removes
# the namespaces and the log.
delayline_down() {
	if [ -n "${DL_PID:-}" ]; then
		kill "$DL_PID" 2>/dev/null
		wait "$DL_PID" 2>/dev/null
		grep -v '^delayline: ready' "$DL_LOG"
		DL_PID=
	fi
	ip netns del "${DL_NS_A:-}" 2>/dev/null
	ip netns del "${DL_NS_B:-}" 2>/dev/null
	[ -z "${DL_LOG:-}" ] || rm -f "$DL_LOG"
	DL_LOG=
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	[ "$(id -u)" = 0 ] || { echo "delayline.sh: network namespaces need root" >&2; exit 2; }
	case " ${args[*]} " in *" --mtu "*) ;; *) args+=(--mtu 9000) ;; esac
	trap delayline_down EXIT
	trap 'exit 130' INT TERM
	delayline_up "${args[@]}" || exit 1
	echo "delayline.sh: $DL_NS_A ($DL_A) <-> $DL_NS_B ($DL_B): $(grep '^delayline: ready' "$DL_LOG")"
	if [ $# -gt 0 ]; then
		"$@"
		exit $?
	fi
	wait "$DL_PID"
fi
