#!/bin/bash
# SPDX-License-Identifier: MIT
# One-shot send/recv with --key: TLS 1.3 on every stream. Every method
# pair that runs keyed on this kernel is byte-exact at -P 1 and 4; a wrong
# key, a key on one end only and a method that bypasses user memory each
# fail with their exact message, and nothing lands.
. "$(dirname "$0")/lib.sh"

(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
(umask 077; "$DND" serve --new-key "$T/other" 2>/dev/null) || fail "--new-key"
random_file "$T/src" 3000000

n=0
for p in 1 4; do
	for sm in rw mmap; do
		for rm in rw mmap null; do
			out="$T/out-$p-$sm-$rm"; [ "$rm" = null ] && out=/dev/null
			xfer "-c 127.0.0.1 --key $T/key -P $p -m $sm $T/src" "--key $T/key -m $rm $out"
			[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "-P $p $sm -> $rm: send $SRC recv $RRC: $(cat "$T/s.log" "$T/r.log")"
			grep -q "SSL_write" "$T/s.log" || fail "-P $p $sm -> $rm: no SSL_write in the report"
			[ "$rm" = null ] || cmp -s "$T/src" "$out" || fail "-P $p $sm -> $rm differs"
			n=$((n + 1))
		done
	done
done
ok "keyed one-shot: $n method pairs at -P 1 and 4, byte-exact, through TLS"

xfer "-c 127.0.0.1 --key $T/other $T/src" "--key $T/key $T/wrong"
[ "$SRC" = 1 ] && [ "$RRC" = 1 ] || fail "wrong key: send $SRC recv $RRC"
grep -q "dnd: authentication failed: the receiver does not hold this key" "$T/s.log" || fail "sender: $(cat "$T/s.log")"
grep -q "dnd: authentication failed: the sender does not hold this key" "$T/r.log" || fail "receiver: $(cat "$T/r.log")"
ls -A "$T" | grep -q wrong && fail "a wrong key left $(ls -A "$T" | grep wrong)"
ok "a wrong key: exact message on both ends, exit 1, nothing landed"

xfer "-c 127.0.0.1 $T/src" "--key $T/key $T/plain"
[ "$SRC" = 1 ] && [ "$RRC" = 1 ] || fail "no key at the sender: send $SRC recv $RRC"
grep -q "dnd: the sender has no key; give it --key too, or drop --key here" "$T/r.log" || fail "receiver: $(cat "$T/r.log")"
grep -q "the receiver has a key; give --key here too, or drop it there" "$T/s.log" || fail "sender: $(cat "$T/s.log")"
xfer "-c 127.0.0.1 --key $T/key $T/src" "$T/plain"
[ "$SRC" = 1 ] && [ "$RRC" = 1 ] || fail "no key at the receiver: send $SRC recv $RRC"
grep -q "dnd: the receiver has no key; give it --key too, or drop --key here" "$T/s.log" || fail "sender: $(cat "$T/s.log")"
grep -q "dnd: the sender has a key; give --key here too, or drop it there" "$T/r.log" || fail "receiver: $(cat "$T/r.log")"
ls -A "$T" | grep -q plain && fail "a one-sided key left $(ls -A "$T" | grep plain)"
ok "a key on one end only: each end says which, exit 1, nothing landed"

if ! "$DND" probe --require ktls >/dev/null 2>&1; then
	next_port
	expect_exit 2 "$DND" send -c 127.0.0.1 -p "$PORT" --key "$T/key" -m sendfile "$T/src"
	expect_out "dnd: -m sendfile with --key needs kernel TLS (this kernel has no CONFIG_TLS); use -m rw or -m mmap"
	expect_exit 2 "$DND" recv -p "$PORT" --key "$T/key" -m splice "$T/never"
	expect_out "dnd: -m splice with --key needs kernel TLS (this kernel has no CONFIG_TLS); use -m rw or -m mmap"
	[ ! -e "$T/never" ] || fail "a refused receiver made its file"
	ok "without kernel TLS: sendfile and splice refused up front with the reason (exit 2)"
fi
