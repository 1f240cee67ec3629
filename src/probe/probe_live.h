/* SPDX-License-Identifier: MIT */
/*
 * The live checks behind probe.c's feature table: loopback TCP, pipes, a
 * temporary file, a forked child. Internal to probe.c and probe_live.c.
 */
#ifndef DND_PROBE_LIVE_H
#define DND_PROBE_LIVE_H

#include "probe/probe.h"

/* Sets r->err = err and r->why from fmt; returns err. */
int probe_res(struct probe_result *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Each check fills r (why: what was seen, or why not; val[] in the order of
 * its table entry's keys) and returns r->err. None blocks for more than a
 * few seconds, and each closes every fd it opened.
 */
int probe_live_splice_sock_pipe(struct probe_result *r);
int probe_live_splice_pipe_file(struct probe_result *r);
int probe_live_vmsplice(struct probe_result *r);
int probe_live_sendfile(struct probe_result *r);
int probe_live_msg_zerocopy(struct probe_result *r);
int probe_live_tcp_zc_receive(struct probe_result *r);
int probe_live_netns(struct probe_result *r);

/* Seed 004's kernel behaviours (a)-(d): 0 pass, -EOPNOTSUPP when the
 * behaviour is not there, -EAGAIN when the situation could not be built. */
int probe_live_seed004_a(struct probe_result *r);
int probe_live_seed004_b(struct probe_result *r);
int probe_live_seed004_c(struct probe_result *r);
int probe_live_seed004_d(struct probe_result *r);

#endif
