#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The architecture holds (SPEC "Architecture"): method hooks are called only
# by the transfer driver, and every header has its source beside it.
. "$(dirname "$0")/lib.sh"

src=$(cd "$(dirname "$0")/../../src" && pwd)
cd "$src" || fail "no src/ beside tests/"

# A hook call is m->HOOK( on a method pointer (m, c->m, t->cfg.m ...).
hooks='m->(probe|check|setup|send|recv|put|put_mem|finish|teardown)\('
calls=$(grep -rnE "$hooks" --include='*.c' . |
	grep -vE '^\./xfer/(xfer|method)\.c:')
[ -z "$calls" ] || fail "method hooks called outside src/xfer/xfer.c:
$calls"
# The check itself must see the driver's calls, or it proves nothing.
grep -qE "$hooks" xfer/xfer.c || fail "the hook pattern matches nothing"

# Headers 1:1 with sources (compat.h and *_types.h, the types a subsystem's
# files share, excepted).
for h in */*.h; do
	case $h in core/compat.h|*_types.h) continue ;; esac
	[ -f "${h%.h}.c" ] || fail "$h has no ${h%.h}.c beside it"
done
exit 0
