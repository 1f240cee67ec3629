/* SPDX-License-Identifier: MIT */
/*
 * The client's side of dnd serve for `dnd send --to` and `dnd recv --from`:
 * connect, the handshake carrying the request, then the session's usual
 * dialogue on that connection (session_link's open()).
 */
#ifndef DND_SERVE_CLIENT_H
#define DND_SERVE_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/params.h"
#include "core/tls.h"
#include "xfer/session.h"

struct serve_client {
	const char *host;
	uint16_t port;
	uint64_t window;
	double connect_timeout, timeout;
	const struct dnd_tls_cfg *tls;	/* NULL: keyless (loopback servers) */
	bool insecure;			/* keyless to a host off loopback */
	struct serve_params p;		/* op, name, method, buffer, verify */
};

/* Why a keyless client refuses host, a server off loopback: without a
 * key the data crosses in clear (unless --insecure). */
void serve_client_clear_why(const char *host, char *err, size_t len);

/* Points l at c: l->open connects and shakes hands with c's request. */
void serve_client_link(struct serve_client *c, struct session_link *l);

#endif
