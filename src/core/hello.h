/* SPDX-License-Identifier: MIT */
/*
 * A connection's opening (wire.h's preambles, then TLS) over a connected
 * blocking socket, every byte by a deadline: the one place a keyed socket
 * is made. Afterwards the fd carries TLS (chan.h) until chan_close().
 */
#ifndef DND_HELLO_H
#define DND_HELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wire.h"

struct dnd_tls_cfg;

#define DND_HELLO_TIMEOUT	5.0	/* seconds an opening may take */

struct dnd_hello {
	enum dnd_wire_role role;
	uint16_t version;		/* DND_WIRE_VERSION (tests vary it) */
	const struct dnd_tls_cfg *tls;	/* NULL: keyless, plain text */
	double deadline;		/* stats_now() seconds */
};

/*
 * Receives (sends) exactly n bytes by the deadline (stats_now() seconds),
 * never past them. 0; -ETIMEDOUT; -ENODATA when the peer closed first;
 * -EINTR once io_stop_signal is set; or -errno (-EPIPE, never SIGPIPE).
 * On a keyed fd (chan.h) through TLS, bounded by the socket's timeouts
 * (set here: net_tune() them again after).
 */
int hello_recv_by(int fd, void *buf, size_t n, double deadline);
int hello_send_by(int fd, const void *buf, size_t n, double deadline);

/*
 * The opener (dnd serve's client, a one-shot sender): sends "DNDa", reads
 * "DNDb", then with a key runs TLS as its client and attaches it to fd.
 * The acceptor (the server, a receiver): reads "DNDa", answers "DNDb"
 * whatever it thinks of it (so a peer of another version or mode learns
 * ours), then TLS as its server. Both return 0, or -errno with why:
 * -EPROTO (versions: both named), -EACCES (a key on one end only, or TLS
 * authentication failed), -EBADMSG (not a dnd peer), -ENOPROTOOPT (a
 * keyless one-shot sender's header), -EPROTOTYPE (a peer of the other
 * mode: one-shot against dnd serve; answered), -ETIMEDOUT, -ENODATA,
 * -EINTR, or tls_open()'s. On failure fd has no TLS attached.
 */
int hello_open(int fd, const struct dnd_hello *h, char *why, size_t len);
int hello_accept(int fd, const struct dnd_hello *h, char *why, size_t len);

/*
 * hello_accept() for a poll loop: dnd serve's parent and its streams port
 * open many connections at once and fork, or go on, only for one that
 * opened. Set a up with hello_acceptor_init(); fd must be non-blocking.
 * hello_accept_step() goes as far as fd allows: 0 once opened (with a key,
 * a->tls then holds the session, not yet attached to fd: chan_attach() it
 * and clear a->tls); -EAGAIN with *events (POLLIN, POLLOUT) to poll fd for
 * before the next call; or as hello_accept(). The deadline is the
 * caller's: hello_accept_late() says where a late one stood. Whatever the
 * outcome, hello_acceptor_free() frees what a still holds.
 */
struct dnd_tls;
struct hello_acceptor {
	struct dnd_hello h;
	uint8_t peer[DND_WIRE_PRE_LEN], mine[DND_WIRE_PRE_LEN];
	size_t got, sent;		/* of the peer's preamble, of ours */
	struct dnd_tls *tls;		/* once the preambles are through */
};
void hello_acceptor_init(struct hello_acceptor *a, const struct dnd_hello *h);
int hello_accept_step(int fd, struct hello_acceptor *a, short *events,
		      char *why, size_t len);
int hello_accept_late(const struct hello_acceptor *a, char *why, size_t len);
void hello_acceptor_free(struct hello_acceptor *a);

/*
 * A keyless one-shot receiver's look at the first bytes (without taking
 * them): 0 when they are not a "DNDa"; a keyed sender's is answered with
 * its own preamble (mode none) and refused (-EACCES with why); a keyless
 * one is a dnd serve client's: -EPROTOTYPE with why, unanswered.
 */
int hello_keyless_peek(int fd, const struct dnd_hello *h, char *why,
		       size_t len);

/*
 * Stream binding: the token a stream i > 0 sends after its join, exported
 * from stream 0's TLS session (fd0). hello_token_check() reads one from fd
 * by the deadline and compares it with ours in constant time. 0, -EACCES
 * (another session's), or -errno.
 */
int hello_token_send(int fd0, int fd);
int hello_token_check(int fd0, int fd);

/* Whether got is our token (fd0's), in constant time: 0 or -EACCES. */
int hello_token_match(int fd0, const uint8_t got[DND_WIRE_TOKEN_LEN]);

#endif
