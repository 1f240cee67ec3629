/* SPDX-License-Identifier: MIT */
/*
 * The parts of a session that differ with dnd serve on one end (struct
 * session_link): where stream 0 comes from, where the other streams go,
 * and the server's report to its client; and the keyed opening and end
 * of each stream (core/hello.h). For session*.c.
 */
#ifndef DND_SESSION_LINK_H
#define DND_SESSION_LINK_H

#include <stdbool.h>

#include "core/hello.h"
#include "core/proto.h"

struct session;

/* Stream 0: the server's preset socket, or the client's open(). 0 or 1. */
int session_link_open(struct session *s);

/* TLS names the ends client and server; one-shot's are sender and
 * receiver (the sender opens): rewrites why in one-shot mode. */
void session_tls_words(const struct session *s, char *why, size_t len);

/* The opening of a connection on this end's settings (o->tls), by. */
struct dnd_hello session_hello_cfg(const struct session *s, double by);

/* The opening of connection fd as its opener (a sender, a client) or its
 * acceptor: preambles and, with s->o->tls, TLS (hello.h); then the
 * socket's timeouts again. 0 or -errno with why. */
int session_hello(struct session *s, int fd, bool acceptor, char *why,
		  size_t len);

/* Sends stream i's join and, keyed and i > 0, its token. 0 or 1. */
int session_join_send(struct session *s, unsigned int i);

/* Keyed, on a stream i > 0 (fd) after its join: reads its token and
 * checks it against stream 0's session. 0, -EACCES (another session's)
 * or -errno; 0 without a key or on stream 0. */
int session_bound(struct session *s, int fd);

/* Keyed: this end's close_notify on stream 0 after its last message. */
void session_close_write(struct session *s);

/* Client: connects stream i > 0 to the server's streams port (at stream
 * 0's peer address) and opens it: session_hello, s->join[i] and its
 * token. 0 or 1. */
int session_link_connect(struct session *s, unsigned int i);

/* Server (session_joins.c): accepts streams 1..s->n-1 on the session's
 * listener within --timeout, each opening as session_link_connect's, all
 * at once, each within DND_HELLO_TIMEOUT; a connection from outside
 * --allow, without the key, of another session or too slow is dropped.
 * Sets s->sock[i] and, when ranges (a push), s->join[i]; closes the
 * listener. 0 or 1. */
int session_link_streams(struct session *s, bool ranges);

/* After a successful dialogue: the server sends its report (best effort)
 * and its close_notify, the client receives them into s->res.peer_json
 * and peer_text (a missing or bad one is a warning, never a failure). */
void session_link_report(struct session *s);

#endif
