#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What TLS costs dnd (issue 21), across a veth between two network
# namespaces: keyed against plaintext one-shot dnd, zero -> null (send -m
# rw, recv -m null) and file -> file (send -m rw, recv -m rw and -m mmap),
# beside OpenSSL's TLS without dnd: socat OPENSSL -> OPENSSL-LISTEN (TLS 1.3,
# TLS_AES_128_GCM_SHA256, the same file from the page cache into /dev/null;
# `openssl s_client` stops reading a file on stdin before the handshake
# ends, so it cannot carry one) and scp over OpenSSH
# with -c aes128-gcm@openssh.com (an sshd of the script's own in the
# receiving namespace, on a port of its own, with a throwaway host key and
# authorized key; stopped by its PID). Rows alternate order every round;
# figures are medians: MB/s = SIZE / the sender's wall clock (connect to
# exit), CPU user and sys in us per MB from /usr/bin/time for each end (an
# end's children included: ssh under scp, sshd's session and scp -t), and
# the steal of each run and the CPU that other programs used meanwhile
# (both in % of all CPUs; the load average is printed at the start and the
# end). `openssl speed -evp aes-128-gcm` is the one-core limit of the
# cipher alone.
# Usage: scripts/bench-tls.sh [SIZE=1Gi] [ROUNDS=5]
# ARGS: dnd's options on both ends (default -w 0).
# PIN=S,R pins every sender to CPU S and every receiver to R (default 0,1;
# PIN= unpinned). RAW=1 prints every round's figures on stderr.
set -euo pipefail

size=${1:-1Gi}
rounds=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
. "$here/scripts/bench-lib.sh"
bytes=$(bench_size "$size") || exit 2
PIN=${PIN-0,1}
# Every dnd end gets ARGS: -w 0 leaves the socket buffers to autotuning, as
# openssl and scp have them.
ARGS=${ARGS--w 0}
read -ra args <<<"$ARGS"
bench_pin
[ "$(id -u)" = 0 ] || { echo "bench-tls: needs root for the namespaces" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-tls: needs /usr/bin/time (Debian package time)" >&2; exit 2; }

# OpenSSH and socat only when missing, the way scripts/deps.sh installs.
if [ ! -x /usr/sbin/sshd ] || ! command -v scp socat >/dev/null; then
	echo "bench-tls: installing openssh-server openssh-client socat" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || true
	apt-get install -y -qq --no-install-recommends openssh-server \
		openssh-client socat >/dev/null
fi

dir=$(mktemp -d /var/tmp/dnd-tls-bench.XXXXXX)
pids=()
. "$here/scripts/netns.sh"
netns_pair 10.234.0
A=(ip netns exec "$NS_A" "${S[@]}") B=(ip netns exec "$NS_B" "${R[@]}")
H=10.234.0.2
port=$((21000 + RANDOM % 20000))
# Each end under /usr/bin/time (CPU in $dir/s.t and r.t) and a timeout.
ST=(/usr/bin/time -f "%U %S" -o "$dir/s.t" timeout 300)
RT=(/usr/bin/time -f "%U %S" -o "$dir/r.t" timeout 300)
listening() { ip netns exec "$NS_B" bash -c ". '$here/scripts/bench-lib.sh'; bench_listening $1" || true; }
# sshd goes by its PID file, at exit too (pids holds /usr/bin/time's).
sshd_kill() { [ ! -s "$dir/ssh/sshd.pid" ] || kill "$(cat "$dir/ssh/sshd.pid")" 2>/dev/null || true; }
trap 'sshd_kill; netns_cleanup' EXIT

# Keys and certificates, all throwaway.
(umask 077 && "$DND" serve --new-key "$dir/key" 2>/dev/null)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-subj /CN=bench -days 1 -keyout "$dir/tls.key" -out "$dir/tls.crt" \
	2>/dev/null
cat "$dir/tls.key" "$dir/tls.crt" >"$dir/tls.pem"
# socat has no option for TLS 1.3's suites; OpenSSL's own config sets them.
cat >"$dir/openssl.cnf" <<EOF
openssl_conf = conf
[conf]
ssl_conf = ssl
[ssl]
system_default = tls
[tls]
MinProtocol = TLSv1.3
Ciphersuites = TLS_AES_128_GCM_SHA256
EOF
mkdir -m 700 "$dir/ssh"
ssh-keygen -q -t ed25519 -N '' -f "$dir/ssh/host"
ssh-keygen -q -t ed25519 -N '' -f "$dir/ssh/user"
cp "$dir/ssh/user.pub" "$dir/ssh/authorized_keys"
cat >"$dir/ssh/sshd_config" <<EOF
HostKey $dir/ssh/host
AuthorizedKeysFile $dir/ssh/authorized_keys
PidFile $dir/ssh/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
Ciphers aes128-gcm@openssh.com
StrictModes no
Subsystem sftp internal-sftp
EOF
mkdir -p /run/sshd	# sshd's privilege separation directory
head -c "$bytes" /dev/urandom >"$dir/src"

# Did the keyed path make it into this dnd? One-shot send takes --key.
keyed=1
"$DND" send -c 127.0.0.1 -p 1 --key "$dir/key" "$dir/src" >/dev/null 2>&1 ||
	[ $? != 2 ] || keyed=0

# row NAME: "MB/s su ss ru rs" (us per MB), or "failed".
row() {
	local p=$((port += 1)) k=() t0 t1 rp ok=0
	[ "${1#keyed}" = "$1" ] || k=(--key "$dir/key")
	rm -f "$dir/out" "$dir/s.t" "$dir/r.t"
	case $1 in
	*zero*|*rw-rw*|*rw-mmap*)
		local sm=rw rm=rw out=$dir/out src=$dir/src l=()
		case $1 in
		*zero*) rm=null out=/dev/null src=/dev/zero l=(-l "$bytes") ;;
		*mmap*) rm=mmap ;;
		esac
		bench_warm "$bytes"
		"${B[@]}" "${RT[@]}" "$DND" recv \
			-p "$p" -m "$rm" "${args[@]}" "${k[@]}" "$out" >"$dir/r.log" 2>&1 &
		rp=$!
		listening "$p"
		t0=$(date +%s%N)
		"${A[@]}" "${ST[@]}" "$DND" send \
			-c "$H" -p "$p" -m "$sm" "${args[@]}" "${k[@]}" "${l[@]}" "$src" \
			>"$dir/s.log" 2>&1 && ok=1
		t1=$(date +%s%N)
		wait "$rp" || ok=0 ;;
	openssl)
		"${B[@]}" env OPENSSL_CONF="$dir/openssl.cnf" "${RT[@]}" socat -d -d \
			-b 131072 -u "OPENSSL-LISTEN:$p,reuseaddr,cert=$dir/tls.pem,verify=0" \
			OPEN:/dev/null 2>"$dir/r.log" &
		rp=$!
		listening "$p"
		t0=$(date +%s%N)
		"${A[@]}" env OPENSSL_CONF="$dir/openssl.cnf" "${ST[@]}" socat -b 131072 \
			-u "OPEN:$dir/src" "OPENSSL:$H:$p,verify=0" 2>"$dir/s.log" && ok=1
		t1=$(date +%s%N)
		wait "$rp" || ok=0
		grep -q 'using TLS_AES_128_GCM_SHA256' "$dir/r.log" || ok=0 ;;
	scp)
		"${B[@]}" /usr/bin/time -f "%U %S" -o "$dir/r.t" /usr/sbin/sshd -D \
			-f "$dir/ssh/sshd_config" -p "$p" 2>"$dir/r.log" &
		rp=$!
		pids+=("$rp")
		listening "$p"
		t0=$(date +%s%N)
		"${A[@]}" "${ST[@]}" scp -q \
			-c aes128-gcm@openssh.com -P "$p" -i "$dir/ssh/user" \
			-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
			-o BatchMode=yes "$dir/src" "root@$H:$dir/out" 2>"$dir/s.log" &&
			ok=1
		t1=$(date +%s%N)
		sshd_stop "$rp" ;;
	esac
	[ $ok = 1 ] || { echo "bench-tls: $1 failed: $(head -n 2 "$dir/s.log" "$dir/r.log" | tr '\n' ' ')" >&2; echo failed; return; }
	awk -v b="$bytes" -v ns=$((t1 - t0)) -v s="$(cat "$dir/s.t")" \
		-v r="$(tail -n1 "$dir/r.t")" 'BEGIN { mb = b / 1e6
		split(s, x, " "); split(r, y, " ")
		printf "%.0f %.1f %.1f %.1f %.1f\n", mb / (ns / 1e9),
			x[1] * 1e6 / mb, x[2] * 1e6 / mb, y[1] * 1e6 / mb, y[2] * 1e6 / mb }'
}

# sshd_stop TIMEPID: once the session is reaped (the daemon has no child
# left: its CPU is then in the daemon's children's rusage), SIGTERM to the
# daemon by its PID file; /usr/bin/time then writes its figures.
sshd_stop() {
	local spid='' _
	for _ in $(seq 100); do
		spid=$(cat "$dir/ssh/sshd.pid" 2>/dev/null) && [ -n "$spid" ] && break
		sleep 0.05
	done
	for _ in $(seq 100); do
		[ -n "$spid" ] && ! pgrep -P "$spid" >/dev/null && break
		sleep 0.05
	done
	sshd_kill
	wait "$1" || true
	rm -f "$dir/ssh/sshd.pid"
}

names="plain-zero keyed-zero plain-rw-rw keyed-rw-rw plain-rw-mmap keyed-rw-mmap openssl scp"
[ $keyed = 1 ] || names="plain-zero plain-rw-rw plain-rw-mmap openssl scp"
declare -A v su ss ru rs st ot rr
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$rounds"); do
	order=$names
	[ $((r % 2)) = 1 ] || order=$(echo "$names" | tr " " "\n" | tac | tr '\n' ' ')
	for n in $order; do
		k0=$(bench_ticks)
		read -r x a b c d <<<"$(row "$n")"
		k1=$(bench_ticks)
		st[$n]+=" $(bench_steal_pct "$k0" "$k1")"
		# The run's own CPU in seconds: its us/MB times the MB.
		ot[$n]+=" $(bench_other_pct "$k0" "$k1" "$(awk -v b="$bytes" \
			-v c="${a:-0} ${b:-0} ${c:-0} ${d:-0}" 'BEGIN { split(c, u, " ")
			printf "%.3f", (u[1] + u[2] + u[3] + u[4]) * b / 1e12 }')")"
		v[$n]+=" $x" su[$n]+=" ${a:-failed}" ss[$n]+=" ${b:-failed}"
		ru[$n]+=" ${c:-failed}" rs[$n]+=" ${d:-failed}"
		[ -z "${RAW:-}" ] || echo "  round $r $n: $x MB/s, us/MB ${a:-} ${b:-} ${c:-} ${d:-}" >&2
		[ -n "${tls:-}" ] || tls=$(grep -m1 -o 'tls: .*' "$dir/r.log" 2>/dev/null || true)
	done
	# Throughput swings between rounds here: each round's own ratio too.
	for n in zero rw-rw rw-mmap; do
		rr[$n]+=" $(awk -v k="${v[keyed-$n]##* }" -v p="${v[plain-$n]##* }" \
			'BEGIN { if (k + 0 > 0 && p + 0 > 0) printf "%.2f\n", k / p; else print "failed" }')"
	done
done

speed=$(${S[@]+"${S[@]}"} timeout 60 openssl speed -evp aes-128-gcm -seconds 3 2>/dev/null |
	awk '/^(AES-128-GCM|aes-128-gcm)/ { v = $NF } END { sub(/k$/, "", v); printf "%.0f", v * 1000 / 1e6 }')

# shellcheck disable=SC2086
m() { bench_median $1; }
echo "# $(uname -r), $(nproc) CPUs, veth between namespaces, $size, $rounds alternating rounds, CPUs (sender,receiver): ${PIN:-unpinned}"
if [ $keyed = 0 ]; then
	echo "# keyed: this dnd has no one-shot --key: keyed rows left out"
else
	echo "# keyed: ${tls:-no tls line in the receiver report}"
fi
echo "# MB/s = $size / the sender's wall clock; us/MB = CPU per MB (10^6 B) of each end; medians"
echo "# load average at the start $load0, at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| path | MB/s | send user | send sys | recv user | recv sys | steal % | others % |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for n in $names; do
	case $n in
	plain-zero) d="dnd zero -> null, plaintext" ;;
	keyed-zero) d="dnd zero -> null, --key (TLS)" ;;
	plain-rw-rw) d="dnd file -> file rw -> rw, plaintext" ;;
	keyed-rw-rw) d="dnd file -> file rw -> rw, --key" ;;
	plain-rw-mmap) d="dnd file -> file rw -> mmap, plaintext" ;;
	keyed-rw-mmap) d="dnd file -> file rw -> mmap, --key" ;;
	openssl) d="socat OPENSSL, TLS 1.3 AES-128-GCM (file -> null)" ;;
	scp) d="scp -c aes128-gcm@openssh.com (file -> file)" ;;
	esac
	echo "| $d | $(m "${v[$n]}") | $(m "${su[$n]}") | $(m "${ss[$n]}") | $(m "${ru[$n]}") | $(m "${rs[$n]}") | $(m "${st[$n]}") | $(m "${ot[$n]}") |"
done
echo "| openssl speed -evp aes-128-gcm, 16 KiB blocks, one core | $speed | | | | | | |"
echo
ratio() { awk -v a="$(m "${v[$1]}")" -v b="$(m "${v[$2]}")" \
	'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "n/a" }'; }
if [ $keyed = 1 ]; then
	echo "keyed/plaintext: zero -> null $(ratio keyed-zero plain-zero) (target 0.7x)," \
		"file rw -> rw $(ratio keyed-rw-rw plain-rw-rw)," \
		"file rw -> mmap $(ratio keyed-rw-mmap plain-rw-mmap) (target 0.9x)"
	echo "  median of each round's own keyed/plaintext: zero -> null $(m "${rr[zero]}")x," \
		"rw -> rw $(m "${rr[rw-rw]}")x, rw -> mmap $(m "${rr[rw-mmap]}")x"
	echo "keyed/scp: zero -> null $(ratio keyed-zero scp) (target 2x)," \
		"file rw -> rw $(ratio keyed-rw-rw scp); keyed/openssl: zero -> null $(ratio keyed-zero openssl)"
fi
