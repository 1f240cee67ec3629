/* SPDX-License-Identifier: MIT */
/*
 * The relay's load generator: a client that opens many flows at once and a
 * sink that checks them, each flow carrying its own deterministic pattern.
 */
#ifndef DND_RELAY_PEER_H
#define DND_RELAY_PEER_H

#include <stdbool.h>
#include <stdint.h>

struct peer_opts {
	const char *host;	/* client: where to connect (relay or sink) */
	uint16_t port;
	unsigned int flows;	/* client: flows opened at once */
	uint64_t bytes;		/* client: payload sent, split over the flows */
	uint64_t reply;		/* client: payload the sink sends back, split */
	bool after_eof;		/* the sink replies only after the client's FIN */
	bool pause;		/* client: stop sending halfway until SIGUSR1;
				 * sink: read headers only until SIGUSR1 */
	int listen_fd;		/* sink: a listening socket */
	unsigned int count;	/* sink: stop after this many flows; 0: SIGTERM */
	double stall;		/* give up when nothing moved for this long */
	bool quiet;		/* no summary line on stdout */
	bool no_verify;		/* count bytes only (recv MSG_TRUNC, no copy) */
};

struct peer_result {
	unsigned int ok, failed;	/* flows */
	uint64_t sent, received;	/* payload bytes */
	double seconds;		/* first connect (or accept) to last flow done */
	double t_start, t_end;	/* the same as CLOCK_MONOTONIC seconds */
	double cpu_user, cpu_sys;
	bool interrupted;	/* stopped by SIGTERM or SIGINT */
	char error[200];	/* the first failure, or "" */
};

/*
 * Runs o->flows client flows to o->host:o->port until all end. A flow is ok
 * when it sent everything, got exactly its reply with the right pattern and
 * then EOF. Returns 0 when every flow was ok, -EIO when one failed, or
 * -errno when it could not start. Blocks SIGUSR1/SIGTERM/SIGINT while it runs.
 */
int peer_client_run(const struct peer_opts *o, struct peer_result *res);

/*
 * Serves flows on o->listen_fd: reads each flow's header, checks every byte
 * against its pattern and EOF at the announced length, sends the announced
 * reply. Stops after o->count flows, on SIGTERM/SIGINT, or when stalled.
 * Returns as peer_client_run().
 */
int peer_server_run(const struct peer_opts *o, struct peer_result *res);

#endif
