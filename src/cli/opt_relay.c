// SPDX-License-Identifier: MIT
/*
 * The knobs of the relay's data path. `dnd relay` takes them all and
 * `dnd bench relay` passes most on to the relays it starts, so they are one
 * table with one set of ranges and messages.
 */
#include <stdio.h>

#include "cli/opt_relay.h"
#include "core/log.h"
#include "core/pipe.h"
#include "relay/relay.h"

#define R struct relay_opts
#define BOTH (DND_ROLE_RELAY | DND_ROLE_BENCH)
#define GROUP "Relay tuning"

const struct opt_def opt_relay_knobs[] = {
	{ .name = "pipe-size", .type = DND_OPT_SIZE, DND_OPT_PIPE_RANGE,
	  .roles = BOTH, .group = GROUP,
	  .def = "1Mi, or fs.pipe-max-size if lower",
	  .help = "F_SETPIPE_SZ for the pipes", OPT_AT(R, pipe_size) },
	{ .name = "max-conn", .type = DND_OPT_COUNT, .min = 1, .max = 1u << 20,
	  .roles = DND_ROLE_RELAY, .group = GROUP,
	  .help = "flows at once; past it the listener waits",
	  OPT_AT(R, max_conn) },
	{ .name = "max-pipes", .type = DND_OPT_COUNT, .max = 1u << 21,
	  .roles = BOTH, .group = GROUP, .def = "2 x max-conn",
	  .help = "pipes alive; past it a connection copies (counted as a "
	  "fallback)", OPT_AT(R, max_pipes) },
	{ .name = "idle-timeout", .type = DND_OPT_SECONDS, .roles = BOTH,
	  .group = GROUP, .def = "0: never",
	  .help = "reset a flow that moved nothing for SEC",
	  OPT_AT(R, idle_timeout) },
	{ .name = "connect-timeout", .type = DND_OPT_SECONDS,
	  .roles = DND_ROLE_RELAY, .group = GROUP,
	  .help = "give up on the target after SEC",
	  OPT_AT(R, connect_timeout) },
	{ .name = "grace", .type = DND_OPT_SECONDS, .roles = DND_ROLE_RELAY,
	  .group = GROUP, .help = "after SIGTERM, wait SEC for open flows",
	  OPT_AT(R, grace) },
	{ .name = "rcvlowat", .type = DND_OPT_SIZE, .min = 1, .max = 1u << 30,
	  .roles = BOTH, .group = GROUP, .help = "SO_RCVLOWAT on every "
	  "socket: fewer, bigger wakeups (a tail shorter than SIZE waits for "
	  "the FIN)", OPT_AT(R, rcvlowat) },
	{ .name = "maxevents", .type = DND_OPT_COUNT, .min = 1, .max = 65536,
	  .roles = BOTH, .group = GROUP, .help = "epoll_wait batch",
	  OPT_AT(R, maxevents) },
	{ .name = "splice-max", .type = DND_OPT_SIZE, .min = 1, .max = 1u << 30,
	  .roles = BOTH, .group = GROUP, .def = "the pipe size",
	  .help = "most bytes asked per splice", OPT_AT(R, splice_max) },
	{ .name = "budget", .type = DND_OPT_SIZE, .min = 1, .max = 1ULL << 40,
	  .roles = BOTH, .group = GROUP, .def = "4 pipes, at least 256Ki",
	  .help = "bytes one direction may move per wakeup",
	  OPT_AT(R, budget) },
	{ .name = "buffer", .letter = 'b', .type = DND_OPT_SIZE, .min = 1,
	  .max = 1u << 30, .roles = BOTH, .group = GROUP,
	  .help = "copy buffer per direction, for -m rw", OPT_AT(R, buf_size) },
	{ .name = "threads", .type = DND_OPT_COUNT, .min = 1,
	  .max = DND_RELAY_MAX_THREADS, .roles = BOTH, .group = GROUP,
	  .def = "1", .help = "event loops, a thread each; they share the "
	  "listener and divide the caps on flows and pipes",
	  OPT_AT(R, threads) },
	{ .name = NULL },
};

void opt_relay_check(struct opt_state *st, const struct relay_opts *o)
{
	unsigned int max = pipe_max_size();

	if (opt_given(st, "pipe-size") && max && o->pipe_size > max) {
		log_err("--pipe-size %u is above fs.pipe-max-size (%u); ask "
			"for less or raise /proc/sys/fs/pipe-max-size",
			o->pipe_size, max);
		st->bad++;
	}
}
