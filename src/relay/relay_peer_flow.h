/* SPDX-License-Identifier: MIT */
/*
 * One flow of the relay's load generator. Every flow starts with a 32-byte
 * header (id, lengths, flags) and then carries a pattern that depends on its
 * id and direction, so the far end checks each byte with a memcmp and no
 * hashing. The types are shared with the run (relay_peer.c).
 */
#ifndef DND_RELAY_PEER_FLOW_H
#define DND_RELAY_PEER_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "relay/evloop.h"
#include "relay/relay_peer.h"

#define DND_PEER_HDR 32
/* A prime period: a stream that slipped by any chunk size cannot match. */
#define DND_PEER_PERIOD 65521u
#define DND_PEER_CHUNK (256u * 1024)

struct peer;

/* One flow, client or sink side. */
struct peer_conn {
	struct peer *p;
	int fd;
	unsigned int slot;	/* index in p->live */
	uint32_t id, flags;
	unsigned char hdr[DND_PEER_HDR];
	size_t hdr_n;		/* header bytes sent (client) or received (sink) */
	uint64_t tx_len, tx_n;	/* payload to send, sent */
	uint64_t rx_len, rx_n;	/* payload expected, received */
	uint32_t tx_phase, rx_phase;
	bool connecting, hdr_ok, tx_shut, rx_eof, halted;
};

/* A client or sink run: its loop, its flows, its shared buffers. */
struct peer {
	const struct peer_opts *o;
	struct peer_result *res;
	bool sink;
	struct evloop el;
	unsigned char *pat;	/* DND_PEER_PERIOD + DND_PEER_CHUNK bytes */
	unsigned char *rbuf;
	int sfd;
	struct peer_conn **live;
	unsigned int nlive, cap;
	unsigned int halted;	/* flows waiting for SIGUSR1 (--pause) */
	bool resumed;
	bool stop;
	double t0, t_last;	/* first connect/accept, last flow done */
	double progress;	/* last time anything moved */
};

/* Adds c to p->live (growing it). Returns 0 or -ENOMEM (c not added). */
int peer_live_add(struct peer *p, struct peer_conn *c);

/*
 * Makes c client flow id of p: tx payload bytes to send, rx expected back,
 * and its header ready to go. c->fd is the caller's to set.
 */
void peer_conn_client(struct peer *p, struct peer_conn *c, uint32_t id,
		      uint64_t tx, uint64_t rx);

/*
 * Fails c: keeps the first failure's message (fmt) in p->res->error, closes
 * c with a reset, counts it and frees c.
 */
void peer_fail(struct peer *p, struct peer_conn *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Sets c's epoll interest to what it has left to do, or ends it (ok) when
 * it has sent all and seen EOF. c may be freed.
 */
void peer_watch(struct peer *p, struct peer_conn *c);

/* SIGUSR1 after --pause: halted flows go on. */
void peer_resume(struct peer *p);

#endif
