/* SPDX-License-Identifier: MIT */
/*
 * dnd serve's handshake over a connected blocking socket: both ends prove
 * the pre-shared key over fresh nonces and the session's parameters, then
 * the server accepts or refuses the session. Every read and write ends by a
 * deadline; the server reads exactly the handshake's bytes and no more.
 */
#ifndef DND_HANDSHAKE_H
#define DND_HANDSHAKE_H

#include <sys/socket.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/auth.h"
#include "serve/key.h"

#define DND_HS_TIMEOUT	5.0	/* seconds a whole handshake may take */

/* One end's settings for a handshake. */
struct dnd_hs_cfg {
	enum dnd_auth_mode mode;
	const struct dnd_key *key;	/* DND_AUTH_KEY only */
	uint16_t version;		/* DND_AUTH_VERSION (tests vary it) */
	double deadline;		/* stats_now() seconds: the end of it */
};

/*
 * Receives exactly n bytes from fd by the deadline (stats_now() seconds).
 * Returns 0; -ETIMEDOUT; -ENODATA when the peer closed first; -EINTR once
 * io_stop_signal is set; or -errno. Works on blocking sockets (poll, then
 * a non-blocking recv) and never reads past the n bytes.
 */
int hs_recv_by(int fd, void *buf, size_t n, double deadline);

/* Sends exactly n bytes by the deadline; 0, -ETIMEDOUT, -EINTR or -errno
 * (-EPIPE, never SIGPIPE). */
int hs_send_by(int fd, const void *buf, size_t n, double deadline);

/*
 * The client's side: sends HELLO with params (params_len <=
 * DND_AUTH_PARAMS_MAX), checks the server's proof, sends its own, and
 * waits for the server's VERDICT. Returns 0 when the server accepted, with
 * a set up for auth_mac(); else a negative errno with why:
 *   -EACCES  the server's proof failed: why is exactly
 *            "authentication failed"; or one end has a key and the other
 *            none (why says which);
 *   -EPROTO  the versions differ (why names both);
 *   -EPERM   the server refused the session: "server refused: REASON",
 *            and *status holds its code (status may be NULL);
 *   -EBADMSG, -ETIMEDOUT, -ENODATA, -errno: malformed or lost handshake.
 * Blocks until cfg->deadline at the latest.
 */
int hs_client(int fd, const struct dnd_hs_cfg *cfg, const void *params,
	      size_t params_len, struct dnd_auth *a, uint16_t *status,
	      char *why, size_t len);

/*
 * The server's side, up to the client's proof. Returns 0 when the client
 * proved the key (or, keyless, when the peer is on loopback), with a->params
 * holding the client's parameters; the caller checks them and must then
 * answer with hs_verdict(). On failure why says why for the server's log;
 * the peer is told only what the handshake shows it (a version, a mode),
 * and not one byte past the handshake has been read. Errors as hs_client's,
 * plus -EACCES for a keyless server reached from outside loopback.
 */
int hs_server(int fd, const struct dnd_hs_cfg *cfg, struct dnd_auth *a,
	      char *why, size_t len);

/* Sends VERDICT: status 0 accepts the session, anything else refuses it
 * with reason (printable ASCII, cut at DND_AUTH_REASON_MAX bytes).
 * Returns 0 or -errno with why. */
int hs_verdict(int fd, const struct dnd_auth *a, uint16_t status,
	       const char *reason, double deadline, char *why, size_t len);

/* True for 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104 and AF_UNIX addresses. */
bool hs_addr_loopback(const struct sockaddr *sa, socklen_t sl);

#endif
