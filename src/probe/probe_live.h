/* SPDX-License-Identifier: MIT */
/*
 * The live feature checks behind probe.c's table: loopback TCP, pipes, a
 * temporary file, a forked child.
 */
#ifndef DND_PROBE_LIVE_H
#define DND_PROBE_LIVE_H

#include "probe/probe.h"

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
int probe_live_mptcp(struct probe_result *r);

#endif
