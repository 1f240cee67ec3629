#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Which system calls a unit's SystemCallFilter= lines leave allowed.
#   syscall_filter.py UNIT GROUPS STRACE...
# UNIT: the unit file; GROUPS: 'systemd-analyze syscall-filter' output
# (every @group and its members); STRACE: 'strace -c -f -o FILE' summaries.
# Prints each call the summaries show that the filter would refuse, and
# exits 1 when there is one (0 when all are allowed; 2 on bad input).
import re
import sys


def groups(path):
    g, cur = {}, None
    for line in open(path):
        s = line.strip()
        if not s or s.startswith('#'):
            continue
        if not line[0].isspace():
            cur = g.setdefault(s, [])
        elif cur is not None:
            cur.append(s)
    return g


def expand(names, g, seen=None):
    seen = set() if seen is None else seen
    out = set()
    for n in names:
        if n.startswith('@'):
            if n in seen:
                continue
            seen.add(n)
            if n not in g:
                sys.exit('unknown group ' + n)
            out |= expand(g[n], g, seen)
        else:
            out.add(n.split(':')[0])
    return out


def allowed(unit, g):
    allow, first = set(), True
    for line in open(unit):
        m = re.match(r'\s*SystemCallFilter=(.*)', line)
        if not m:
            continue
        spec = m.group(1).split('#')[0].strip()
        deny = spec.startswith('~')
        names = expand(spec.lstrip('~').split(), g)
        if first and deny:
            sys.exit('a deny list first: everything else is allowed')
        allow = allow - names if deny else allow | names
        first = False
    if first:
        sys.exit('no SystemCallFilter= in ' + unit)
    return allow | expand(['@default'], g)


def used(path):
    out = set()
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and re.match(r'^[0-9.]+$', f[0]) and \
                re.match(r'^[a-z_0-9]+$', f[-1]) and f[-1] != 'total':
            out.add(f[-1])
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    g = groups(sys.argv[2])
    allow = allowed(sys.argv[1], g)
    calls = set()
    for p in sys.argv[3:]:
        calls |= used(p)
    if not calls:
        print('no system calls in the summaries')
        return 2
    bad = sorted(calls - allow)
    for c in bad:
        print(c)
    return 1 if bad else 0


sys.exit(main())
