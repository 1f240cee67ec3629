/* SPDX-License-Identifier: MIT */
/*
 * The splice-relay behaviours (a)-(d) from HAProxy's 2009 netdev thread, checked live on loopback TCP with
 * Ethernet-sized segments: entries of probe.c's table with DND_PF_SPLICE_RELAY.
 */
#ifndef DND_PROBE_RELAY_H
#define DND_PROBE_RELAY_H

#include "probe/probe.h"

/*
 * Each fills r (why: what was seen; val[] in the order of its table entry's
 * keys) and returns r->err: 0 the behaviour holds, -EOPNOTSUPP it does not,
 * -EAGAIN the situation could not be built (too little queued), or the
 * -errno of a call that failed. Each is bounded to a few seconds and closes
 * what it opened.
 */
/* (a) One non-blocking splice takes many queued segments. */
int probe_splice_relay_a(struct probe_result *r);
/* (b) splice(len 1000) never returns more than 1000. */
int probe_splice_relay_b(struct probe_result *r);
/* (c) A full pipe with data queued: splice says EAGAIN, as for an empty
 * socket. */
int probe_splice_relay_c(struct probe_result *r);
/* (d) SO_RCVLOWAT delays epoll's wakeup; splice then takes what is queued. */
int probe_splice_relay_d(struct probe_result *r);

#endif
