/* SPDX-License-Identifier: MIT */
/*
 * The relay's types only [hap -t.h]: the loop (relay.c), a flow and its
 * lists (relay_flow.c, relay_accept.c), a direction (relay_pump.c). Each of
 * those files declares its functions in its own header.
 */
#ifndef DND_RELAY_TYPES_H
#define DND_RELAY_TYPES_H

#include <sys/socket.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pipe.h"
#include "core/stats.h"
#include "relay/evloop.h"
#include "relay/relay.h"

/* One direction: bytes read from fd[i] wait here until written to fd[!i]. */
struct relay_dir {
	struct dnd_pipe *pipe;	/* held only while it carries data */
	char *buf;		/* copy path */
	size_t off;		/* copy path: first unsent byte in buf */
	size_t count;		/* bytes inside the pipe or buf */
	bool rd_ready;		/* the source may have data */
	bool rdhup;		/* the source's peer has shut down writing */
	bool full;		/* stop reading until count drops */
	bool wr_blocked;	/* the destination returned EAGAIN */
	bool eof;		/* the source returned 0 */
	bool shut;		/* the destination got shutdown(SHUT_WR) */
};

struct relay_flow;

#define DND_RELAY_BUF_CACHE 64	/* empty copy buffers kept for reuse */

struct relay_list {
	struct relay_flow *head, *tail;	/* oldest first */
};

struct relay_flow {
	struct relay *r;
	int fd[2];		/* [0] client, [1] target */
	struct relay_dir dir[2];	/* dir[i] reads fd[i], writes fd[!i] */
	bool copy;		/* no pipe was left: copy from now on */
	int err[2];		/* -errno: fd[i] broke (read, write or SO_ERROR) */
	bool hup[2];		/* fd[i] hung up cleanly: out of epoll */
	uint64_t sent[2];	/* bytes dir[i] handed to the kernel */
	int outq;		/* flushing: SIOCOUTQ seen last; -1: none yet */
	double last;		/* accept or connect start, then last progress */
	struct relay_flow *prev, *next;
	struct relay_list *list;
};

struct relay {
	const struct relay_opts *o;
	struct relay_stats *st;
	struct evloop el;
	struct pipe_pool pool;
	struct sockaddr_storage target;
	socklen_t target_len;
	char target_name[80];
	int lfd, sfd;
	bool paused;		/* the listener is out of epoll */
	double resume_at;	/* retry accept after EMFILE; 0: on a close */
	bool draining;		/* SIGTERM: no new flows */
	double grace_end;
	bool stop;
	bool told_connect;	/* the first target failure was logged */
	bool told_accept;
	bool told_error;	/* the first relay error was logged */
	bool told_pipe;		/* the first pipe() failure was logged */
	size_t budget;
	struct dnd_sample t0;
	struct relay_list waiting;	/* accepted, no fd left for the target */
	struct relay_list connecting, open;
	struct relay_list flushing;	/* broken: the last bytes go out first */
	double retry_at;	/* when waiting flows try again */
	unsigned int nflows;
	/* A direction holds a copy buffer only while it carries data, as
	 * with pipes, so idle flows cost no 2 x --buffer each. */
	char *bufs[DND_RELAY_BUF_CACHE];
	unsigned int nbufs;
};

#endif
