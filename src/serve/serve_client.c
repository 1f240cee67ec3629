// SPDX-License-Identifier: MIT
/* dnd serve's client: connect and handshake; see serve_client.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/net.h"
#include "core/proto.h"
#include "core/stats.h"
#include "serve/handshake.h"
#include "serve/serve_client.h"

/* The handshake's failure as the user should read it. */
static void client_why(int r, const char *why, char *err, size_t len)
{
	if (r == -EACCES && strncmp(why, "authentication failed", 21))
		snprintf(err, len, "authentication failed: %s", why);
	else if (r == -ENODATA || r == -ECONNRESET || r == -EPIPE)
		snprintf(err, len, "the server closed the connection during "
			 "the handshake: it refuses this client (a server "
			 "without --key serves loopback peers only; see "
			 "--allow and its log)");
	else
		snprintf(err, len, "%s", why);
}

void serve_client_clear_why(const char *host, char *err, size_t len)
{
	snprintf(err, len, "%s is not loopback and no --key is given: anyone "
		 "on the path can read and change the data; use --key FILE, "
		 "or --insecure to accept that", host);
}

/* Keyless: the address connected to, should the name have resolved to
 * loopback for the check of the command line and to another since. */
static int client_clear_ok(const struct serve_client *c, int fd, char *err,
			   size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (c->tls || c->insecure)
		return 0;
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0 &&
	    net_addr_loopback((struct sockaddr *)&ss, sl))
		return 0;
	serve_client_clear_why(c->host, err, len);
	return -EPERM;
}

/* N > 1 streams: the server's streams message, after its verdict. */
static int client_port(int fd, double deadline, uint16_t *port, char *err,
		       size_t elen)
{
	uint8_t b[DND_PORT_LEN];
	int r = hello_recv_by(fd, b, sizeof(b), deadline);

	if (r) {
		snprintf(err, elen, "the server's streams message: %s",
			 r == -ENODATA ? "the server closed the connection" :
			 strerror(-r));
		return r;
	}
	if (proto_get_port(b, port)) {
		snprintf(err, elen, "malformed streams message from the "
			 "server");
		return -EBADMSG;
	}
	return 0;
}

static int client_open(struct session_link *l, bool known, uint64_t len,
		       char *peer, size_t plen, char *err, size_t elen)
{
	struct serve_client *c = l->arg;
	struct dnd_hs_cfg cfg = {
		.tls = c->tls,
		.version = DND_WIRE_VERSION,
	};
	uint8_t params[DND_WIRE_PARAMS_MAX];
	char why[320];
	size_t n;
	int fd, r;

	if (c->p.op == SERVE_PUSH && known) {
		c->p.flags |= SERVE_PF_KNOWN;
		c->p.length = len;
	}
	n = params_put(params, sizeof(params), &c->p);
	if (!n) {
		snprintf(err, elen, "the name is too long for the request");
		return -EINVAL;
	}
	fd = net_connect(c->host, c->port, (int)c->window,
			 c->p.op == SERVE_PUSH, c->connect_timeout, c->timeout,
			 peer, plen, err, elen);
	if (fd < 0)
		return fd;
	r = client_clear_ok(c, fd, err, elen);
	if (r) {
		chan_close(fd);
		return r;
	}
	cfg.deadline = stats_now() + DND_HS_TIMEOUT;
	r = hs_client(fd, &cfg, params, n, NULL, why, sizeof(why));
	if (r)
		client_why(r, why, err, elen);
	if (!r && c->p.streams > 1)
		r = client_port(fd, cfg.deadline, &l->port, err, elen);
	if (r) {
		chan_close(fd);
		return r;
	}
	return fd;
}

void serve_client_link(struct serve_client *c, struct session_link *l)
{
	memset(l, 0, sizeof(*l));
	l->open = client_open;
	l->arg = c;
	l->sock = -1;
	l->lfd = -1;
}
