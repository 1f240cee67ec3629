# SPDX-License-Identifier: MIT
# Sourced by the loopback benchmark scripts:
#   bench_pin            S and R: command prefixes that pin a sender to CPU
#                        ${PIN%,*} and a receiver to ${PIN#*,} (PIN=S,R), or
#                        empty arrays when PIN is unset or empty
#   bench_listening PORT waits up to 5 s for a TCP listener on PORT
#   bench_size SIZE      SIZE (4Gi, 300Mi) in bytes on stdout, or says how
#                        to write it and fails: bytes=$(bench_size X) || exit 2
#   bench_median V...    the median (the lower middle one of an even count),
#                        "failed" values left out; "failed" if none is left
#   bench_warm BYTES     before a run that fills the page cache: touches a
#                        bit more than BYTES of memory (a file in /dev/shm)
#                        and frees it, so that the run gets pages the VM
#                        already holds. A VM that hands free memory back to
#                        its host (free page reporting) makes the first
#                        touch of a page several times slower: landing 2 GiB
#                        (splice -> vmsplice) after 8 s idle ran at 340 MB/s
#                        with 5.9 s of system CPU, after bench_warm at 1021
#                        MB/s with 1.7 s. Which program ran after an idle
#                        moment decided file -> file ratios.
#   bench_ticks          "steal total busy": /proc/stat's ticks of all CPUs
#                        (%.0f: mawk prints integers past 2^31 as %.6g);
#                        busy is user, nice, system, irq and softirq
#   bench_steal_pct A B  steal between two bench_ticks, in % of all CPUs
#                        (on a VM, the host ran something else while these
#                        CPUs had work: the run is slower than the code is)
#   bench_other_pct A B SEC  the CPU that others used between two
#                        bench_ticks, in % of all CPUs: the machine's busy
#                        ticks less SEC seconds of the run's own CPU (other
#                        programs on a shared machine slow the run too)
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

bench_size() {
	numfmt --from=iec-i "$1" 2>/dev/null ||
		{ echo "${0##*/}: a size like 1Gi or 300Mi, not '$1'" >&2; return 2; }
}

bench_warm() {
	local f=/dev/shm/dnd-bench-warm.$$
	[ -d /dev/shm ] && [ -w /dev/shm ] || return 0
	dd if=/dev/zero of="$f" bs=1M count=$(($1 / 1048576 * 5 / 4 + 64)) \
		status=none 2>/dev/null || true
	rm -f "$f"
}

bench_ticks() {
	awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9 && i <= NF; i++) t += $i
		printf "%s %.0f %.0f\n", (NF >= 9 ? $9 : 0), t,
			$2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}

bench_other_pct() {
	awk -v a="$1" -v b="$2" -v s="$3" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { split(a, x, " "); split(b, y, " "); d = y[2] - x[2]
		o = d > 0 ? 100 * (y[3] - x[3] - s * hz) / d : 0
		printf "%.1f\n", (o > 0 ? o : 0) }'
}

bench_steal_pct() {
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ")
		d = y[2] - x[2]; printf "%.1f\n", (d > 0 ? 100 * (y[1] - x[1]) / d : 0) }'
}

bench_median() {
	printf '%s\n' "$@" | grep -v failed | sort -g |
		awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "failed" }'
}
