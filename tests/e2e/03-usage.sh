#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every bad input exits 2 with a message naming the problem and the fix,
# before anything touches the network or the target.
. "$(dirname "$0")/lib.sh"

f="$T/src"
echo hello >"$f"

bad() { # bad "expected message" dnd args...
	local msg=$1; shift
	expect_exit 2 "$DND" "$@"
	expect_out "$msg"
}

bad "dnd: -b '64K': not a size; use digits with an optional k M G (10^3..) or Ki Mi Gi (2^10..) suffix, e.g. 64Ki" send -c ::1 -b 64K "$f"
bad "dnd: -b '1x': not a size" send -c ::1 -b 1x "$f"
bad "dnd: -l '99999999999999999999': too large" send -c ::1 -l 99999999999999999999 "$f"
bad "dnd: -w '20Gi': too large (at most 1073741824)" send -c ::1 -w 20Gi "$f"
bad "dnd: -b '-5': sizes cannot be negative" send -c ::1 -b -5 "$f"
bad "dnd: -b '0': too small (at least 1)" send -c ::1 -b 0 "$f"
bad "dnd: -p '0': a port is a number from 1 to 65535" recv -p 0 "$T/x"
bad "dnd: -p '65536': a port is a number from 1 to 65535" send -c ::1 -p 65536 "$f"
bad "dnd: -p '80a': a port is a number from 1 to 65535" send -c ::1 -p 80a "$f"
bad "dnd: unknown method 'turbo'; send methods: rw, mmap, sendfile, splice, vmsplice" send -c ::1 -m turbo "$f"
bad "dnd: unknown method 'turbo'; receive methods: rw, mmap, splice, vmsplice, null" recv -m turbo "$T/x"
bad "dnd: -o and -t conflict: -o overwrites FILE in place, -t replaces it; choose one" recv -o -t "$T/x"
bad "dnd: -l limits what is sent; a receiver takes what the sender sends (drop -l, or send with -c HOST)" recv -l 1M "$T/x"
bad "dnd: sendfile cannot receive; use -m splice or -m rw" recv -m sendfile "$T/x"
bad "dnd: null cannot send; use -m sendfile or -m rw" send -c ::1 -m null "$f"
bad "dnd: send needs -c HOST: the address of 'dnd recv'" send "$f"
bad "dnd: recv listens; -c HOST is for send" recv -c ::1 "$T/x"
bad "dnd: need a FILE (or '-')" recv
bad "dnd: one FILE only; got 'b' too" recv a b
bad "dnd: unknown option '--frobnicate'" recv --frobnicate "$T/x"
bad "dnd: -b needs a value" send -c ::1 "$f" -b
bad "dnd: --splice-flags: unknown flag 'fast'; use move, more, gift or none" recv --splice-flags move,fast "$T/x"
bad "dnd: --timeout 'soon': give seconds, e.g. 30 or 0.5" recv --timeout soon "$T/x"
bad "dnd: -m null discards the data; give /dev/null as FILE, or choose a method that writes" recv -m null "$T/x"
bad "dnd: /dev/zero has no end that dnd can see; give -l SIZE" send -c ::1 /dev/zero
bad "dnd: serve needs --dir DIR: where files land and are read" serve
bad "dnd: --allow: '10.0.0.0/33' is not an address or ADDR/BITS" serve --dir "$T" --allow 10.0.0.0/33
bad "dnd: --to is for send; recv pulls with --from NAME" recv --to x "$T/x"
bad "dnd: --from NAME pulls from a dnd serve: give -c HOST" recv --from x "$T/x"
bad "dnd: -P is the sender's; the receiver takes as many streams as the sender opens (or pulls over N with --from)" recv -P 2 "$T/x"
bad "dnd: -P is the sender's; the receiver takes as many streams as the sender opens (or pulls over N with --from)" -P 2 "$T/x"
bad "dnd: -P 2 cannot land in order on stdout; pull with -P 1" recv -c ::1 --from x -P 2 -
bad "dnd: --peer-method is for a transfer with dnd serve: add --to NAME (send) or --from NAME (recv)" send -c ::1 --peer-method rw "$f"
bad "dnd: key file $T/nokey: No such file or directory" send -c ::1 --key "$T/nokey" "$f"
bad "dnd: key file $T/nokey: No such file or directory" recv --key "$T/nokey" "$T/x"
bad "dnd: --peer-method sendfile cannot receive at the server's end" send -c ::1 --to x --peer-method sendfile "$f"
bad "dnd: cannot serve $T/none: " serve --dir "$T/none"
bad "dnd: - has no end that dnd can see; give -l SIZE" send -c ::1 - </dev/null
expect_exit 2 sh -c "echo x | '$DND' send -c ::1 -m mmap -"
expect_out "dnd: mmap cannot send from a pipe or stream (nothing to map); use -m rw, splice or vmsplice"
bad "dnd: cannot open $T/nope: No such file or directory" send -c ::1 "$T/nope"
bad "dnd: $T is a directory; name a file" recv "$T"
bad "dnd: -l '2000000000000000000': too large (at most 1152921504606846976)" send -c ::1 -l 2000000000000000000 "$f"
bad "dnd: /proc/version says it is empty but has data (a pseudo-file); send it as a stream: cat /proc/version | dnd send ... -" send -c ::1 /proc/version
# several problems are all reported at once
expect_exit 2 "$DND" recv -o -t -l 5 -m turbo "$T/x"
for m in "-o and -t conflict" "-l limits what is sent" "unknown method 'turbo'"; do
	expect_out "$m"
done
# the 2006 program's form: -c sends, otherwise receives; -l only with -c
bad "dnd: -l limits what is sent" -l 1M "$T/x"
ok "bad inputs exit 2 with their messages"

# An existing target is refused before any byte arrives, and left untouched.
echo "precious" >"$T/keep"
next_port
bad "dnd: $T/keep exists; use -t to replace it or -o to overwrite it in place" recv -p "$PORT" "$T/keep"
[ "$(cat "$T/keep")" = precious ] || fail "existing target was modified"
[ "$(ls -A "$T" | grep -c dnd-)" = 0 ] || fail "temporary file left: $(ls -A "$T")"
ok "existing target refused and untouched"

# help exits 0 and documents the in-place overwrite.
expect_exit 0 "$DND" recv --help
expect_out "overwrite it IN PLACE"
expect_exit 0 "$DND" send -h
expect_out "usage: dnd send -c HOST"
expect_exit 0 "$DND" -h
expect_out "usage: dnd [-b bsz] [-c host] [-h] [-l sz] [-m method] [-o|-t] [-p port] [-w wsz] FILE"
expect_exit 2 "$DND"
expect_out "program's command line:
    dnd [-b bsz] [-c host] [-h] [-l sz] [-m method] [-o|-t] [-p port] [-w wsz] FILE"
ok "help"

# --time (iperf3's -t): -t keeps its meaning, recv's --replace; --time
# sends /dev/zero that long, and the report gives the time and the bytes.
bad "dnd: -t is for the receiver's FILE; the sender only reads" send -c ::1 -t /dev/zero
bad "dnd: --time cannot go with -l: give a time or a size" send -c ::1 --time 1 -l 1Mi /dev/zero
bad "dnd: --time cannot go with -P: a timed run has no length to split; use -P 1" send -c ::1 --time 1 -P 2 /dev/zero
bad "dnd: --time '0': give seconds above 0, e.g. 30" send -c ::1 --time 0 /dev/zero
bad "dnd: --time bounds what is sent; a receiver takes what the sender sends" recv --time 1 "$T/timed"
expect_exit 2 "$DND" send -c ::1 --time 1 "$f"
[ "$OUT" = "dnd: --time sends /dev/zero for a while; give /dev/zero as FILE (a file is sent whole, or its first -l SIZE bytes)" ] ||
	fail "--time with a file: $OUT"
next_port
start_recv "$T/r.log" "$T/timed"
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$PORT" --time 0.3 /dev/zero
wait_recv
[ "$RRC" = 0 ] || fail "timed run's receiver: $(cat "$T/r.log")"
n=$(stat -c %s "$T/timed")
[ "$n" -gt 0 ] || fail "a timed run sent nothing"
secs=$(sed -nE "s/^sender: $n bytes in [0-9.]+ s: .*; sent \(the 2006 program's timing\) in ([0-9]+\.[0-9]+) s: .*/\1/p" <<<"$OUT")
[ -n "$secs" ] || fail "the report does not give the time and the bytes: $OUT"
awk -v s="$secs" 'BEGIN { exit !(s >= 0.3) }' || fail "a 0.3 s run stopped after $secs s"
expect_out "verify: verified (xxh3 "
expect_out ", $n bytes; "
cmp -s -n "$n" /dev/zero "$T/timed" || fail "a timed run landed other bytes than zeros"
ok "--time SEC: /dev/zero for that long, time and bytes reported; -t unchanged"
