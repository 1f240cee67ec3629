#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Mutual TLS with certificates (--cert, --cert-key, --ca), made here with
# the openssl CLI: a CA, another CA, good certificates and an expired one
# (signed by `openssl ca` with dates in 2020). One-shot and dnd serve run
# byte-exact with good ones (auth cert, or psk+cert with --key too); an
# expired certificate or one of another CA fails both ends with its exact
# message and exit 1, and nothing lands.
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || skip "the openssl CLI is missing (apt-get install openssl)"

# --- certificates ---------------------------------------------------------
C="$T/pki"
mkdir "$C"
ec() { # ec NAME ARGS...: a P-256 key NAME.key and what ARGS make of it
	local n=$1; shift
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$C/$n.key" "$@" 2>"$C/$n.err" ||
		fail "openssl req for $n: $(cat "$C/$n.err")"
}
for ca in ca other; do
	ec "$ca" -x509 -subj "/CN=dnd test $ca" -days 2 -out "$C/$ca.pem"
done
for n in snd rcv old; do
	ec "$n" -subj "/CN=$n" -out "$C/$n.csr"
done
for n in snd rcv; do
	openssl x509 -req -in "$C/$n.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" \
		-set_serial 1 -days 2 -out "$C/$n.pem" 2>"$C/$n.err" ||
		fail "openssl x509 for $n: $(cat "$C/$n.err")"
done
# OpenSSL 3.0's x509 has no -not_before: `openssl ca` takes any dates.
: >"$C/index.txt"
echo 01 >"$C/serial"
printf '[ca]\ndefault_ca = c\n[c]\ndatabase = %s\nnew_certs_dir = %s\nserial = %s\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n' \
	"$C/index.txt" "$C" "$C/serial" >"$C/ca.cnf"
openssl ca -batch -config "$C/ca.cnf" -cert "$C/ca.pem" -keyfile "$C/ca.key" \
	-in "$C/old.csr" -out "$C/old.pem" -notext \
	-startdate 20200101000000Z -enddate 20200102000000Z >"$C/old.err" 2>&1 ||
	fail "openssl ca: $(cat "$C/old.err")"
chmod 600 "$C"/*.key
(umask 077; "$DND" serve --new-key "$T/key" 2>/dev/null) || fail "--new-key"
as() { echo "--cert $C/$1.pem --cert-key $C/$1.key --ca $C/${2:-ca}.pem"; }

random_file "$T/src" 3000000
D="$T/land"
mkdir "$D"

# --- one-shot ---------------------------------------------------------------
for p in 1 4; do
	xfer "-c 127.0.0.1 -P $p $(as snd) $T/src" "$(as rcv) $D/good"
	[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "-P $p: send $SRC recv $RRC: $(cat "$T/s.log" "$T/r.log")"
	cmp -s "$T/src" "$D/good" || fail "-P $p: the landed file differs"
	for l in s r; do
		how=
		[ "$l" = r ] && how=" $(recv_kind rw "$p")"
		grep -q "^  tls: TLSv1.3 TLS_AES_128_GCM_SHA256 x25519, auth cert, kernel TLS: " "$T/$l.log" ||
			fail "$l: no tls line with auth cert: $(cat "$T/$l.log")"
		grep -q "^  verify: verified$how and authenticated (xxh3 [0-9a-f]*, 3000000 bytes; TLS 1.3)$" "$T/$l.log" ||
			fail "$l: verify line: $(cat "$T/$l.log")"
	done
	rm "$D/good"
done
xfer "-c 127.0.0.1 --key $T/key $(as snd) $T/src" "--key $T/key $(as rcv) $D/good"
[ "$SRC" = 0 ] && [ "$RRC" = 0 ] || fail "key and certificates: send $SRC recv $RRC: $(cat "$T/s.log" "$T/r.log")"
cmp -s "$T/src" "$D/good" || fail "key and certificates: the landed file differs"
grep -q "^  tls: TLSv1.3 TLS_AES_128_GCM_SHA256 x25519, auth psk+cert, " "$T/s.log" ||
	fail "no auth psk+cert: $(cat "$T/s.log")"
rm "$D/good"
ok "one-shot with certificates at -P 1 and 4, and with a key too: byte-exact, auth cert / psk+cert"

# refused "SEND ARGS" "RECV ARGS" "SENDER'S MESSAGE" "RECEIVER'S MESSAGE"
refused() {
	xfer "-c 127.0.0.1 $1 $T/src" "$2 $D/bad"
	[ "$SRC" = 1 ] && [ "$RRC" = 1 ] || fail "$3: send $SRC recv $RRC: $(cat "$T/s.log" "$T/r.log")"
	grep -qxF "dnd: $3" "$T/s.log" || fail "sender, wanted 'dnd: $3': $(cat "$T/s.log")"
	grep -qxF "dnd: $4" "$T/r.log" || fail "receiver, wanted 'dnd: $4': $(cat "$T/r.log")"
	no_leftovers "$D"
}
expired="the peer's certificate has expired (notAfter 2020-01-02 00:00:00Z)"
refused "$(as old)" "$(as rcv)" \
	"authentication failed: the receiver refused our certificate: it has expired; renew --cert" \
	"$expired"
refused "$(as snd)" "$(as old)" "$expired" \
	"authentication failed: the sender refused our certificate: it has expired; renew --cert"
ok "an expired certificate at either end: exact messages on both, exit 1, nothing landed"
refused "$(as snd)" "$(as rcv other)" \
	"authentication failed: the receiver refused our certificate: it does not chain to the receiver's --ca" \
	"the peer's certificate does not chain to --ca $C/other.pem"
refused "$(as snd other)" "$(as rcv)" \
	"the peer's certificate does not chain to --ca $C/other.pem" \
	"authentication failed: the sender refused our certificate: it does not chain to the sender's --ca"
ok "a certificate of another CA at either end: exact messages on both, exit 1, nothing landed"

# --- dnd serve ----------------------------------------------------------------
S="$T/served"
mkdir "$S"
next_port
bg "$T/serve.log" "$DND" serve --dir "$S" -p "$PORT" --grace 1 $(as rcv)
SPID=$BPID
wait_listen "$PORT"
expect_exit 0 "$DND" send -c 127.0.0.1 -p "$PORT" $(as snd) -P 4 --to pushed "$T/src"
expect_out "verified and authenticated"
cmp -s "$T/src" "$S/pushed" || fail "push -P 4 with certificates differs"
rm -f "$T/back"
expect_exit 0 "$DND" recv -c 127.0.0.1 -p "$PORT" $(as snd) -P 4 --from pushed "$T/back"
expect_out "verified $(recv_kind rw 4) and authenticated"
cmp -s "$T/src" "$T/back" || fail "pull -P 4 with certificates differs"
expect_exit 1 "$DND" send -c 127.0.0.1 -p "$PORT" $(as old) --to stale "$T/src"
expect_out "dnd: authentication failed: the server refused our certificate: it has expired; renew --cert"
[ ! -e "$S/stale" ] || fail "an expired client's push landed"
for _ in $(seq 1 200); do grep -q "has expired" "$T/serve.log" && break; sleep 0.05; done
grep -q "^$STAMP dnd: session 127.0.0.1:[0-9]*: 0 bytes in [0-9.]* s, failed: the peer's certificate has expired (notAfter 2020-01-02 00:00:00Z)" "$T/serve.log" ||
	fail "the server's log: $(cat "$T/serve.log")"
kill -TERM "$SPID"
wait "$SPID" || fail "serve exited $? after SIGTERM: $(cat "$T/serve.log")"
[ "$(ls -A "$S")" = pushed ] || fail "in the served dir: $(ls -A "$S")"
ok "dnd serve with certificates: push and pull at -P 4 byte-exact; an expired client refused, logged, nothing landed"
