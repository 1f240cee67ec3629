#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd probe: the JSON report parses and has every field; --require answers
# exactly 0 (present), 77 (missing) and 2 (unknown name); the splice-relay
# behaviours (a)-(c) hold on this kernel; nothing is left in TMPDIR.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || skip "jq is missing; scripts/deps.sh installs it"

# --- the JSON report -------------------------------------------------------
mkdir "$T/tmp"
TMPDIR="$T/tmp" "$DND" probe --json >"$T/p.json" 2>"$T/p.err"
rc=$?
[ $rc -eq 0 ] || fail "probe --json exited $rc: $(cat "$T/p.err")"
[ -s "$T/p.err" ] && fail "probe --json wrote to stderr: $(cat "$T/p.err")"
no_leftovers "$T/tmp"
[ "$(wc -l <"$T/p.json")" -eq 1 ] || fail "probe --json is not one line"
jq -e . "$T/p.json" >/dev/null || fail "probe --json does not parse"

has() { # has JQ-FILTER WHAT: fails unless the filter is true on the report
	jq -e "$1" "$T/p.json" >/dev/null || fail "report lacks $2: $1"
}
has '.schema == 1 and .type == "probe" and .command == "probe"' "schema"
has '(.dnd_version | length) > 0 and (.host | type) == "string"' "version"
has '.machine.release | type == "string" and length > 0' "kernel release"
has '.kernel == .machine.release' "one kernel release, twice the same"
for k in page_size_bytes pipe_max_bytes pipe_user_pages_soft \
	pipe_user_pages_hard pipe_default_bytes pipe_largest_bytes; do
	has ".machine.$k | type == \"number\"" "machine.$k"
done
has '.machine.pipe_largest_bytes >= .machine.pipe_default_bytes' "pipe sizes"
has '.machine.pipe_beyond_max | type == "boolean"' "pipe_beyond_max"

# Every method of the registry with its verdict: the names --require knows
# are the methods plus the features, so each one that is not a feature must
# be in .methods.
expect_exit 2 "$DND" probe --require no-such-thing
known=${OUT##*known: }
[ -n "$known" ] && [ "$known" != "$OUT" ] || fail "no known names in: $OUT"
for n in ${known//,/ }; do
	jq -e ".features[\"$n\"] or .splice_relay[\"$n\"]" "$T/p.json" >/dev/null &&
		continue
	has ".methods | map(select(.name == \"$n\" and has(\"why\")
		and (.usable | type == \"boolean\"))) | length == 1" "method $n"
done
for m in rw mmap sendfile splice vmsplice null; do
	has ".methods | any(.name == \"$m\")" "seed method $m"
done

has '.io_uring.built | type == "boolean"' "io_uring.built"
has '.io_uring.why | type == "string"' "io_uring.why"
for op in READ WRITE READ_FIXED WRITE_FIXED SEND RECV SPLICE SEND_ZC SENDMSG_ZC; do
	has ".io_uring.opcodes.$op | type == \"boolean\"" "opcode $op"
done

for f in pipe-resize splice-socket-pipe splice-pipe-file vmsplice sendfile \
	io_uring uring-splice uring-send-zc msg-zerocopy tcp-zerocopy-receive \
	netns ktls; do
	has ".features[\"$f\"] | (.present | type == \"boolean\")
		and (.why | length > 0) and (.errno | type == \"number\")" \
		"feature $f"
done
for k in accepted sent_bytes completions copied_completions; do
	has ".features[\"msg-zerocopy\"] | has(\"$k\")" "msg-zerocopy.$k"
done

# kTLS: the row says what the kernel's tls ULP does here, and why.
has '.features.ktls | (.ulp_listed == 0 or .ulp_listed == 1)
	and (.ulp_errno | type == "number") and (.openssl_ktls == 1)' "ktls values"
if grep -qw tls /proc/sys/net/ipv4/tcp_available_ulp 2>/dev/null; then
	has '.features.ktls | .present and .ulp_listed == 1 and .ulp_errno == 0
		and (.why | startswith("kernel TLS: the kernel'"'"'s tls ULP"))' \
		"ktls present"
elif ! ls /lib/modules/"$(uname -r)"/kernel/net/tls/tls.ko* >/dev/null 2>&1; then
	has '.features.ktls | .present == false and .errno == 38
		and .ulp_listed == 0 and .ulp_errno == 2 and .why ==
		"no kernel TLS: CONFIG_TLS absent (no tls in /proc/sys/net/ipv4/tcp_available_ulp, and TCP_ULP \"tls\" gives ENOENT)"' \
		"ktls: no CONFIG_TLS"
fi

for s in a b c d; do
	has ".splice_relay[\"splice-relay-$s\"] | (.pass | type == \"boolean\")
		and (.why | length > 0)" "splice-relay-$s"
done
# (a)-(c) are what this kernel does since 2009; a failure is a finding.
for s in a b c; do
	jq -e ".splice_relay[\"splice-relay-$s\"].pass" "$T/p.json" >/dev/null ||
		fail "splice-relay-$s: $(jq -r ".splice_relay[\"splice-relay-$s\"].why" "$T/p.json")"
done
has '.splice_relay["splice-relay-a"] | .spliced_bytes > .mss_bytes' "(a) more than one segment"
has '.splice_relay["splice-relay-b"] | .max_returned_bytes <= 1000 and .calls == 32' "(b) <= 1000"
has '.splice_relay["splice-relay-c"] | .splice_errno == 11 and
	.socket_queued_bytes > 0' "(c) EAGAIN"
ok "JSON report"

# --- the table -------------------------------------------------------------
expect_exit 0 "$DND" probe
expect_out "splice behaviours the relay relies on, from HAProxy's 2009 netdev thread"
expect_out "pass splice-relay-a"
expect_out "io_uring (IORING_REGISTER_PROBE)"
expect_out " ktls                 kernel TLS: the tls ULP attaches, OpenSSL has kTLS"
ok "table"

# --- --require ---------------------------------------------------------------
expect_exit 0 "$DND" probe --require splice-socket-pipe,rw
expect_out "splice-socket-pipe: yes: splice(loopback socket -> pipe) moved "
expect_out " bytes, read back intact"
expect_out "rw: yes: method rw is usable"

expect_exit 2 "$DND" probe --require splice,no-such-thing
expect_out "dnd: --require: unknown name 'no-such-thing'; known: rw, mmap,"
expect_out "splice-relay-a"
# Every name the error lists is one --require accepts: 0 or 77, never 2.
for n in ${known//,/ }; do
	"$DND" probe --require "$n" >/dev/null 2>&1
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "--require $n exited $rc"
done

expect_exit 2 "$DND" probe --json --require rw
expect_out "--json and --require do not mix"
expect_exit 2 "$DND" probe extra
expect_exit 2 "$DND" probe --require ,
ok "--require: present 0, unknown 2"

# A missing feature, for real: nobody without capabilities cannot create a
# network namespace (unshare(CLONE_NEWNET) needs CAP_SYS_ADMIN), so netns is
# missing there whatever this machine allows root. No kernel knob is touched.
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is missing"
	chmod 711 "$T"
	mkdir -m 755 "$T/bin"
	cp "$DND" "$T/bin/dnd"
	chmod 755 "$T/bin/dnd"
	as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups
		--inh-caps=-all --bounding-set=-all "$T/bin/dnd")
else
	as_nobody=("$DND")
fi
expect_exit 77 "${as_nobody[@]}" probe --require rw,netns
expect_out "dnd: netns is missing: unshare(CLONE_NEWNET): Operation not permitted"
case "$OUT" in *"rw is missing"*) fail "rw reported missing: $OUT" ;; esac
# lib.sh's require_feature shows the last line as the reason.
last=$(printf '%s\n' "$OUT" | tail -n1)
[ "$last" = "dnd: netns is missing: unshare(CLONE_NEWNET): Operation not \
permitted (needs root or CAP_SYS_ADMIN)" ] || fail "last line is not the reason: $OUT"
"${as_nobody[@]}" probe --json >"$T/n.json" 2>"$T/n.err" ||
	fail "probe --json as an unprivileged user: $(cat "$T/n.err")"
jq -e '.features.netns.present == false and .features.netns.errno == 1' \
	"$T/n.json" >/dev/null || fail "unprivileged netns: $(jq -c .features.netns "$T/n.json")"
ok "--require: missing 77 (netns without privileges)"
