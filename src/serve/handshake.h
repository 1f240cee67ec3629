/* SPDX-License-Identifier: MIT */
/*
 * dnd serve's handshake over a connected blocking socket (wire.h): the
 * preambles, TLS 1.3 with a key (hello.h), then the client's request and
 * the server's verdict, inside TLS with a key. Every read and write ends
 * by a deadline; the server reads exactly the handshake's bytes.
 */
#ifndef DND_HANDSHAKE_H
#define DND_HANDSHAKE_H

#include <sys/socket.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hello.h"
#include "core/wire.h"

#define DND_HS_TIMEOUT	DND_HELLO_TIMEOUT

/* A verdict's status: 0 served, else refused. */
#define SERVE_ST_REFUSED	1	/* the request cannot be served */
#define SERVE_ST_BUSY		2	/* --max-sessions are running */

/* One end's settings for a handshake. */
struct dnd_hs_cfg {
	const struct dnd_tls_cfg *tls;	/* NULL: keyless (loopback only) */
	uint16_t version;		/* DND_WIRE_VERSION (tests vary it) */
	double deadline;		/* stats_now() seconds: the end of it */
};

/*
 * The client's side: the opening, then the request with params
 * (params_len <= DND_WIRE_PARAMS_MAX), then the server's verdict. Returns
 * 0 when the server accepted (fd keyed when cfg->tls); else -errno, why:
 *   -EACCES  authentication failed (TLS's sentence), or one end has a key
 *            and the other none (why says which);
 *   -EPROTO  the versions differ (why names both);
 *   -EPERM   the server refused the session: "server refused: REASON",
 *            and *status holds its code (status may be NULL);
 *   -EBADMSG, -ETIMEDOUT, -ENODATA, -errno: malformed or lost handshake.
 */
int hs_client(int fd, const struct dnd_hs_cfg *cfg, const void *params,
	      size_t params_len, uint16_t *status, char *why, size_t len);

/*
 * The server's side, up to the request: 0 with the client's params in
 * params (DND_WIRE_PARAMS_MAX bytes of room) and *params_len; the caller
 * checks them and answers with hs_verdict(). A keyless server serves only
 * peers on loopback (-EACCES). On an fd that carries TLS already (chan.h:
 * hello_accept_step() ran the opening) it starts at the request. Errors as hs_client's; why is for the log.
 */
int hs_server(int fd, const struct dnd_hs_cfg *cfg, uint8_t *params,
	      size_t *params_len, char *why, size_t len);

/* Sends the verdict: status 0 accepts, anything else refuses with reason.
 * 0 or -errno with why. */
int hs_verdict(int fd, uint16_t status, const char *reason, double deadline,
	       char *why, size_t len);

#endif
