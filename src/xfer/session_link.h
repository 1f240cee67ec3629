/* SPDX-License-Identifier: MIT */
/*
 * The parts of a session that differ with dnd serve on one end (struct
 * session_link): where stream 0 comes from, the tags after the trailer
 * and the reply, and the server's report to its client. For session*.c.
 */
#ifndef DND_SESSION_LINK_H
#define DND_SESSION_LINK_H

#include <stdbool.h>

#include "core/proto.h"

struct session;

/* Stream 0: the server's preset socket, or the client's open(). 0 or 1. */
int session_link_open(struct session *s);

/* Sends a trailer (trailer true) or a reply, with its tag when linked.
 * 0 or -errno. */
int session_end_send(struct session *s, bool trailer,
		     const struct dnd_end *e);

/* Receives one, and its tag when linked: 0; -EBADMSG with why (a tag
 * that does not verify: "data changed on the path"); or as
 * proto_recv_end(). */
int session_end_recv(struct session *s, bool trailer, struct dnd_end *e,
		     char *why, size_t len);

/* Client: connects stream i > 0 to the server's streams port (at stream
 * 0's peer address) and opens it with s->join[i] and its tag. 0 or 1. */
int session_link_connect(struct session *s, unsigned int i);

/* Server: accepts streams 1..s->n-1 on the session's listener within
 * --timeout, each opening with a join of this transfer and its tag; a
 * connection whose tag does not verify is dropped. Sets s->sock[i] and,
 * when ranges (a push), s->join[i]; closes the listener. 0 or 1. */
int session_link_streams(struct session *s, bool ranges);

/* After a successful dialogue: the server sends its report (best effort),
 * the client receives it into s->res.peer_json and peer_text (a missing
 * or bad one is a warning, never a failure). */
void session_link_report(struct session *s);

#endif
