/* SPDX-License-Identifier: MIT */
/*
 * `dnd bench relay`: direct, splice relay and copy relay side by side under
 * the built-in load generator, plus the generator's own peers for tests.
 */
#ifndef DND_BENCH_RELAY_H
#define DND_BENCH_RELAY_H

#include <stdbool.h>
#include <stdint.h>

#include "relay/relay.h"

#define DND_BR_MAX_FLOWS 16
#define DND_BR_MAX_REPEAT 25

enum br_mode {
	DND_BR_DIRECT = 0,
	DND_BR_SPLICE,
	DND_BR_RW,
	DND_BR_SOCKMAP,		/* dnd relay -m sockmap (the kernel forwards) */
	DND_BR_VIA,		/* an external relay (HAProxy, ...) */
	DND_BR_NMODES,
};

struct bench_relay_opts {
	unsigned int flows[DND_BR_MAX_FLOWS];	/* flows at once, per cell */
	unsigned int nflows;
	unsigned int modes;	/* 1 << enum br_mode, for each path measured */
	uint64_t bytes, reply;	/* payload per run each way, split */
	unsigned int repeat;
	uint16_t sink_port;	/* 0: any free port */
	char via_host[256];	/* DND_BR_VIA: the other relay */
	uint16_t via_port;
	long via_pid;		/* its process, for its CPU; 0: unknown */
	const char *via_name;
	double stall;		/* a run fails when nothing moves this long */
	bool json, no_verify;
	struct relay_opts relay;	/* the knobs passed to our relay;
					 * max_pipes 0: twice its max_conn */
	/* The load generator alone (--sink or --client). */
	bool sink, client, after_eof, pause;
	char host[256];		/* sink: where to listen ("": any address);
				 * client: where to connect */
	uint16_t port;
	unsigned int count;	/* sink: flows until it stops; 0: SIGTERM */
};

/*
 * Runs every cell (flows x modes x repeat), each path's relay and the sink
 * as child processes with deadlines, and prints the table or JSON Lines on
 * stdout. Returns the exit code: 0 every run verified, 1 otherwise.
 */
int bench_relay_run(const struct bench_relay_opts *b);

/* Runs the sink (b->sink) or the client alone; returns the exit code: 0
 * every flow was ok, 1 otherwise. */
int bench_relay_peer(const struct bench_relay_opts *b);

#endif
