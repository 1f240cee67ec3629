#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd's splice and sockmap relays next to HAProxy's (Debian's haproxy, mode
# tcp, option splice-request + splice-response), all driven by dnd's own load generator
# in one interleaved run, for 1, 32 and 100 flows, with the same pipe size
# and the same number of threads on both sides. Relay CPU is utime+stime
# of the relay process alone, for both (/proc/PID/stat for HAProxy).
#
# usage: scripts/bench-haproxy.sh [--flows 1,32,100] [--bytes 4Gi]
#                                 [--repeat 3] [--out FILE.jsonl]
#                                 [--pipe-size SIZE] [--threads N]
#                                 [--hap-pipesize BYTES]
#                                 [-- extra 'dnd bench relay' options]
# --pipe-size: dnd's --pipe-size and HAProxy's tune.pipesize, the same for
#   both (default: dnd's own, 1 MiB or fs.pipe-max-size if lower; 64Ki is
#   the kernel's default, which HAProxy uses when not told).
# --threads: dnd relay --threads N beside HAProxy nbthread N (default 1).
# --hap-pipesize: HAProxy's tune.pipesize alone, to compare at unequal
#   sizes on purpose (the output says so).
# DND=path/to/dnd overrides the binary (default: ./dnd, built if missing).
# Installs haproxy and jq with apt-get when they are missing (needs root).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
flows=1,32,100
bytes=4Gi
repeat=3
out=
pipe_size=
threads=1
hap_pipesize=
while [ $# -gt 0 ]; do
	case $1 in
	--flows|--bytes|--repeat|--out|--pipe-size|--threads|--hap-pipesize)
		[ $# -ge 2 ] || { echo "bench-haproxy: $1 needs a value" >&2; exit 2; } ;;
	esac
	case $1 in
	--flows) flows=$2; shift 2 ;;
	--bytes) bytes=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--pipe-size) pipe_size=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--hap-pipesize) hap_pipesize=$2; shift 2 ;;
	--) shift; break ;;
	-h|--help) sed -n '3,22p' "$0"; exit 0 ;;
	*) echo "bench-haproxy: unknown option '$1'; see --help" >&2; exit 2 ;;
	esac
done

# bytes_of SIZE: SIZE in bytes (digits, or a whole number of Ki or Mi).
bytes_of() {
	if [[ $1 =~ ^([0-9]+)(Ki|Mi)?$ ]]; then
		case ${BASH_REMATCH[2]} in
		Ki) echo $((BASH_REMATCH[1] * 1024)) ;;
		Mi) echo $((BASH_REMATCH[1] * 1048576)) ;;
		*) echo "${BASH_REMATCH[1]}" ;;
		esac
		return
	fi
	echo "bench-haproxy: pipe size '$1': give bytes, or a whole number of Ki or Mi" >&2
	exit 2
}
case $threads in
''|*[!0-9]*|0) echo "bench-haproxy: --threads '$threads': give a number from 1 to 64" >&2; exit 2 ;;
esac
[ "$threads" -le 64 ] || { echo "bench-haproxy: --threads $threads: at most 64" >&2; exit 2; }
# dnd's default pipe: 1 MiB, capped by fs.pipe-max-size (src/relay/relay.c).
if [ -z "$pipe_size" ]; then
	pipe_size=1048576
	max=$(cat /proc/sys/fs/pipe-max-size 2>/dev/null || echo 0)
	[ "$max" -gt 0 ] && [ "$max" -lt "$pipe_size" ] && pipe_size=$max
fi
pipe_size=$(bytes_of "$pipe_size")
[ "$pipe_size" -ge 4096 ] || { echo "bench-haproxy: --pipe-size must be at least 4Ki" >&2; exit 2; }
hap_pipesize=${hap_pipesize:-$pipe_size}
hap_pipesize=$(bytes_of "$hap_pipesize")

need=
command -v haproxy >/dev/null || need="$need haproxy"
command -v jq >/dev/null || need="$need jq"
if [ -n "$need" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench-haproxy: missing$need; run 'sudo apt-get install$need'" >&2
		exit 1
	fi
	echo "bench-haproxy: installing$need" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || true
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
[ -x "$DND" ] || make -C "$here" >/dev/null
# -m sockmap beside splice where its BPF redirect can run here.
sockmap=y
"$DND" probe --require sockmap-redirect >/dev/null 2>&1 ||
	{ sockmap=; echo "bench-haproxy: no -m sockmap: $("$DND" probe --require sockmap-redirect 2>&1 | tail -n1)" >&2; }

W=$(mktemp -d /tmp/dnd-haproxy.XXXXXX)
hpid=
cleanup() {
	if [ -n "$hpid" ]; then kill "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null || true; fi
	rm -rf "$W"
}
trap cleanup EXIT

# free_port: a port on which ss shows no socket.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 30000))
		ss -Htan "( sport = :$p or dport = :$p )" | grep -q . || break
	done
	echo "$p"
}
sink=$(free_port)
hport=$(free_port)

# The configuration measured in research/anchors-bench.md section 5
# (forcesplice_t1.cfg), with our ports, threads and pipe size. maxpipes
# defaults to maxconn/4 (1000): more than 2 x the flows measured here, so
# neither relay falls back to copying for want of pipes.
cat >"$W/haproxy.cfg" <<EOF
global
    nbthread $threads
    maxconn 4000
    tune.pipesize $hap_pipesize

defaults
    mode tcp
    timeout connect 5s
    timeout client 120s
    timeout server 120s
    option splice-request
    option splice-response

frontend fe
    bind 127.0.0.1:$hport
    default_backend be

backend be
    server s1 127.0.0.1:$sink
EOF
haproxy -c -q -f "$W/haproxy.cfg"
haproxy -db -f "$W/haproxy.cfg" >"$W/haproxy.log" 2>&1 &
hpid=$!
for _ in $(seq 1 100); do
	ss -Htln "sport = :$hport" | grep -q . && break
	sleep 0.05
done
ss -Htln "sport = :$hport" | grep -q . ||
	{ echo "bench-haproxy: haproxy did not start: $(cat "$W/haproxy.log")" >&2; exit 1; }

echo "haproxy $(haproxy -v | head -n1 | awk '{print $3}') pid $hpid on 127.0.0.1:$hport -> sink 127.0.0.1:$sink, nbthread $threads, tune.pipesize $hap_pipesize"
echo "dnd bench relay --flows $flows --bytes $bytes --repeat $repeat --threads $threads --pipe-size $pipe_size (modes interleaved per repeat)"
[ "$hap_pipesize" = "$pipe_size" ] ||
	echo "NOTE: unequal pipes on purpose (--hap-pipesize): haproxy $hap_pipesize B, dnd $pipe_size B; bytes per splice are not comparable"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); other work on the machine makes these numbers noisy"
rc=0
"$DND" bench relay --flows "$flows" --bytes "$bytes" --repeat "$repeat" \
	--threads "$threads" --pipe-size "$pipe_size" \
	--modes "direct,splice${sockmap:+,sockmap}" --sink-port "$sink" --via "127.0.0.1:$hport" \
	--via-pid "$hpid" --via-name haproxy --json "$@" >"$W/runs.jsonl" || rc=$?
[ -n "$out" ] && cp "$W/runs.jsonl" "$out"
[ $rc -eq 0 ] || echo "bench-haproxy: some runs failed (see the error fields)" >&2

# Medians per (flows, path), then each dnd relay over haproxy. "all CPU"
# adds the load generator's client and sink to the relay: on loopback the
# kernel charges part of one process's TCP work to its peer, so the relay's
# CPU alone can flatter the relay that pushes work onto its neighbours.
# "machine CPU" is every CPU's busy time (/proc/stat, softirq and kworkers
# included) per GiB: under sockmap the forwarding runs in softirq and in
# kworkers, charged to no relay process, so only this compares it fairly.
jq -rs --argjson ncpu "$(nproc)" '
  def med: sort | if length == 0 then null
    elif length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def r2: if . == null then "-" else (. * 100 | round / 100 | tostring) end;
  def r1: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
  def ratio($a; $b): if $a == null or $b == null or $b == 0 then null
    else $a / $b end;
  def mach: .machine_busy_pct / 100 * $ncpu * .seconds / (.bytes / 1073741824);
  def path($p): map(select(.path == $p));
  group_by(.flows)[] as $f
  | ($f | path("splice")) as $d | ($f | path("sockmap")) as $s
  | ($f | path("haproxy")) as $h
  | ($d | map(.gbit_per_s) | med) as $dg | ($s | map(.gbit_per_s) | med) as $sg
  | ($h | map(.gbit_per_s) | med) as $hg
  | ($d | map(.relay_cpu_seconds_per_gib) | med) as $dc
  | ($s | map(.relay_cpu_seconds_per_gib) | med) as $sc
  | ($h | map(.relay_cpu_seconds_per_gib) | med) as $hc
  | ($s | map(mach) | med) as $sm | ($h | map(mach) | med) as $hm
  | ratio($sg; $hg) as $rg
  | [$f[0].flows,
     ($f | path("direct") | map(.gbit_per_s) | med | r2),
     ($dg | r2), ($sg | r2), ($hg | r2), (ratio($dg; $hg) | r2), ($rg | r2),
     ($dc | r2), ($sc | r2), ($hc | r2),
     ($d | map(mach) | med | r2), ($sm | r2), ($hm | r2),
     ($s | map(.machine_softirq_pct) | med | r1),
     ($h | map(.machine_softirq_pct) | med | r1),
     ($f | map(.machine_steal_pct // empty) | med | r1),
     (if $rg == null then "-" elif $rg >= 1.2 and ratio($sm; $hm) != null
        and ratio($sm; $hm) <= 0.5 then "met" else "missed" end),
     "\($f | map(select(.ok)) | length)/\($f | length)"]
  | map(tostring) | join("\t")
' "$W/runs.jsonl" >"$W/table.tsv"

fmt='%6s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %6s %6s %6s %7s %s\n'
# shellcheck disable=SC2059
printf "\n$fmt" flows direct splice sockmap haproxy spl/hap sm/hap \
	"relay" "CPU/GiB" "" "machine" "CPU/GiB" "" softirq% "" steal% sm-tgt "ok runs"
# shellcheck disable=SC2059
printf "$fmt" "" Gbit/s Gbit/s Gbit/s Gbit/s "" "" splice sockmap haproxy \
	splice sockmap haproxy sockmap hap "" "" ""
while IFS=$'\t' read -r -a c; do
	# shellcheck disable=SC2059
	printf "$fmt" "${c[@]}"
done <"$W/table.tsv"
echo
echo "sm-tgt: sockmap >= 1.2x haproxy's Gbit/s at <= 0.5x its machine CPU per GiB (medians of"
echo "$repeat alternating rounds); relay CPU = the relay process alone (sockmap's forwarding is in"
echo "softirq and kworkers, in no process: see machine CPU, all CPUs' busy time per GiB, which"
echo "includes the load generator's work, the same for every path); both with $threads thread(s);"
echo "pipes: dnd splice $pipe_size B, haproxy $hap_pipesize B; softirq% and steal% = share of all"
echo "CPUs during the run (a row with steal is slower than the code is); runs: ${out:-not kept (use --out)}"
exit $rc
