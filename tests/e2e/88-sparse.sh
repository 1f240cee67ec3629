#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sparse files: a 1 GiB file of 3 data extents moves its data and not its
# holes (the wire bytes, counted on a namespace's own loopback, are a
# little over the data), lands byte-exact with the same xxh3 and the
# source's allocated blocks (within one file-system block per extent),
# for rw, sendfile and splice senders into rw and splice receivers, at
# -P 4 and over dnd serve (push and pull); -o over a dense file punches
# the holes; --no-sparse sends the full length.
. "$(dirname "$0")/lib.sh"

setup_ns
NS=$NS_A
in_ns() { ip netns exec "$NS" "$@"; }
wire() { in_ns cat /sys/class/net/lo/statistics/rx_bytes; }

MIB=1048576
src="$T/src"
truncate -s 1G "$src" || fail "truncate"
for at in 100 500 1000; do
	dd if=/dev/urandom of="$src" bs=1M count=4 seek=$at conv=notrunc \
		status=none || fail "dd"
done
DATA=$((12 * MIB))
bsz=$(stat -f -c %S "$T")
[ "$(stat -c %b "$src")" -lt $((64 * MIB / 512)) ] ||
	skip "the file system under $T keeps no holes ($(stat -f -c %T "$T"))"
xsum() { xxhsum -H3 "$1" | cut -d' ' -f1; }
SUM=$(xsum "$src")

# landed FILE WHAT EXTENTS: byte-exact, the same xxh3, and the source's
# allocated blocks within one file-system block per extent.
landed() {
	local b0 b1 slack
	cmp -s "$src" "$1" || fail "$2: the landed file differs"
	[ "$(xsum "$1")" = "$SUM" ] || fail "$2: xxhsum -H3 differs"
	b0=$(stat -c %b "$src"); b1=$(stat -c %b "$1")
	slack=$(($3 * bsz / 512))
	[ $((b1 - b0)) -le $slack ] && [ $((b0 - b1)) -le $slack ] ||
		fail "$2: $b1 blocks of 512 allocated, the source $b0 (+-$slack)"
}
# little WHAT BYTES: the wire carried the data and a little more, not 1 GiB.
little() {
	[ "$2" -ge $DATA ] && [ "$2" -lt $((DATA + 4 * MIB)) ] ||
		fail "$1: $2 bytes on the wire for $DATA of data"
}

# one SEND_M RECV_M ARGS...: a one-shot transfer inside the namespace.
one() {
	local sm=$1 rm=$2 w0 w1; shift 2
	rm -f "$T/out"
	next_port
	bg "$T/r.log" ip netns exec "$NS" "$DND" recv -p "$PORT" -m "$rm" "$T/out"
	for _ in $(seq 1 200); do
		in_ns ss -Htln "sport = :$PORT" | grep -q . && break
		sleep 0.05
	done
	w0=$(wire)
	expect_exit 0 timeout 120 ip netns exec "$NS" "$DND" send -c 127.0.0.1 \
		-p "$PORT" -m "$sm" --connect-timeout 10 "$@" "$src"
	w1=$(wire)
	wait "$BPID" || fail "recv -m $rm exited $?: $(cat "$T/r.log")"
	WIRE=$((w1 - w0))
}

for sm in rw sendfile splice; do
	for rm in rw splice; do
		one "$sm" "$rm" --json
		expect_out '"holes_bytes":1061158912'
		expect_out '"data_extents":3'
		grep -q "holes: 1012.0 MiB not sent (3 extents of data" "$T/r.log" ||
			fail "$sm -> $rm: no holes line: $(cat "$T/r.log")"
		landed "$T/out" "$sm -> $rm" 3
		little "$sm -> $rm" "$WIRE"
	done
done
ok "rw, sendfile and splice into rw and splice: holes not sent, left holes"

one rw rw -P 4
landed "$T/out" "-P 4" 3
little "-P 4" "$WIRE"
ok "-P 4: each stream moves the data inside its range"

one sendfile rw --no-sparse --json
expect_out '"holes_bytes":0'
cmp -s "$src" "$T/out" || fail "--no-sparse: the landed file differs"
[ "$WIRE" -ge $((1024 * MIB)) ] || fail "--no-sparse: only $WIRE bytes on the wire"
ok "--no-sparse sends the holes as zeros"

# -o over a dense file of random bytes: the holes are punched, read zeros.
small="$T/small"
truncate -s 64M "$small"
dd if=/dev/urandom of="$small" bs=1M count=1 seek=8 conv=notrunc status=none
dd if=/dev/urandom of="$small" bs=1M count=1 seek=40 conv=notrunc status=none
head -c $((64 * MIB)) /dev/urandom >"$T/dense"
b_dense=$(stat -c %b "$T/dense")
next_port
bg "$T/r.log" ip netns exec "$NS" "$DND" recv -p "$PORT" -o "$T/dense"
expect_exit 0 timeout 60 ip netns exec "$NS" "$DND" send -c 127.0.0.1 \
	-p "$PORT" --connect-timeout 10 "$small"
wait "$BPID" || fail "recv -o exited $?: $(cat "$T/r.log")"
cmp -s "$small" "$T/dense" || fail "-o: the rewritten file differs"
b_after=$(stat -c %b "$T/dense"); b_small=$(stat -c %b "$small")
[ $((b_after - b_small)) -le $((2 * bsz / 512)) ] ||
	fail "-o: $b_after blocks after (the dense file had $b_dense, the source $b_small)"
ok "-o over a dense file punches the holes ($b_dense -> $b_after blocks)"

# dnd serve, keyless on the namespace's loopback: push and pull.
d="$T/d"; mkdir "$d"
next_port
bg "$T/serve.log" ip netns exec "$NS" "$DND" serve --dir "$d" -p "$PORT" --grace 1
SPID=$BPID
ns_listen "$NS" "$PORT"
w0=$(wire)
expect_exit 0 timeout 120 ip netns exec "$NS" "$DND" send -c 127.0.0.1 \
	-p "$PORT" --to img "$src"
expect_out "verified"
little "serve push" $(($(wire) - w0))
landed "$d/img" "serve push" 3
rm -f "$T/back"
w0=$(wire)
expect_exit 0 timeout 120 ip netns exec "$NS" "$DND" recv -c 127.0.0.1 \
	-p "$PORT" -m splice --from img "$T/back"
expect_out "verified"
little "serve pull" $(($(wire) - w0))
landed "$T/back" "serve pull" 3
kill -TERM "$SPID"
wait "$SPID" || fail "serve exited $? after SIGTERM: $(cat "$T/serve.log")"
ok "dnd serve: push and pull keep the holes"
