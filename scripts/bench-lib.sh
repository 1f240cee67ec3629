# SPDX-License-Identifier: MIT
# Sourced by the loopback benchmark scripts:
#   bench_pin            S and R: command prefixes that pin a sender to CPU
#                        ${PIN%,*} and a receiver to ${PIN#*,} (PIN=S,R), or
#                        empty arrays when PIN is unset or empty
#   bench_listening PORT waits up to 5 s for a TCP listener on PORT
#   bench_median V...    the median (the lower middle one of an even count),
#                        "failed" values left out; "failed" if none is left
bench_pin() {
	S=() R=()
	[ -n "${PIN:-}" ] || return 0
	local c
	for c in "${PIN%,*}" "${PIN#*,}"; do
		taskset -c "$c" true 2>/dev/null ||
			{ echo "${0##*/}: cannot pin to CPU $c (PIN=$PIN)" >&2; exit 2; }
	done
	S=(taskset -c "${PIN%,*}") R=(taskset -c "${PIN#*,}")
}

bench_listening() {
	local i
	for i in $(seq 100); do
		ss -Htln "sport = :$1" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

bench_median() {
	printf '%s\n' "$@" | grep -v failed | sort -g |
		awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "failed" }'
}
