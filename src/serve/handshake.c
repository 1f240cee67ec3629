// SPDX-License-Identifier: MIT
/* dnd serve's handshake over a socket, with a deadline on every byte; the
 * bytes are wire.c's, the opening hello.c's. */
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/chan.h"
#include "core/net.h"
#include "serve/handshake.h"

/* Describes an I/O failure on fd while waiting for or sending one
 * message; TLS's own reason, when it has one, says more than err. A peer
 * that refused this end's certificate is the whole story. */
static int hs_io_fail(int fd, int err, const char *what, char *why,
		      size_t len)
{
	const char *tls = chan_tls(fd) ? chan_err(fd) : "";

	if (err == -EACCES && tls[0])
		snprintf(why, len, "%s", tls);
	else if (err == -ETIMEDOUT)
		snprintf(why, len, "handshake timed out at the %s", what);
	else if (err == -ENODATA)
		snprintf(why, len, "the peer closed the connection before the "
			 "%s", what);
	else
		snprintf(why, len, "handshake %s: %s", what,
			 tls[0] ? tls : strerror(-err));
	return err;
}

/* Keyless mode is for loopback only, whatever address the server bound. */
static int hs_check_loopback(int fd, char *why, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char peer[80];

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == -1) {
		snprintf(why, len, "getpeername: %s", strerror(errno));
		return -errno;
	}
	if (net_addr_loopback((struct sockaddr *)&ss, sl))
		return 0;
	net_addr_str((struct sockaddr *)&ss, sl, peer, sizeof(peer));
	snprintf(why, len, "keyless mode serves loopback only; %s is not on "
		 "loopback (give the server a key)", peer);
	return -EACCES;
}

static struct dnd_hello hs_hello(const struct dnd_hs_cfg *cfg)
{
	return (struct dnd_hello){
		.role = DND_WIRE_SERVE,
		.version = cfg->version,
		.tls = cfg->tls,
		.deadline = cfg->deadline,
	};
}

/* Reads the verdict: 0 (accepted), -EPERM (refused) or -errno. */
static int hs_read_verdict(int fd, double deadline, uint16_t *status,
			   char *why, size_t len)
{
	uint8_t v[DND_WIRE_VERD_LEN + DND_WIRE_REASON_MAX];
	uint16_t st, n;
	int err;

	err = hello_recv_by(fd, v, DND_WIRE_VERD_LEN, deadline);
	if (err)
		return hs_io_fail(fd, err, "server's verdict", why, len);
	err = wire_get_verdict(v, &st, &n, why, len);
	if (err)
		return err;
	err = hello_recv_by(fd, v + DND_WIRE_VERD_LEN, n, deadline);
	if (err)
		return hs_io_fail(fd, err, "server's verdict", why, len);
	if (wire_check_reason(v + DND_WIRE_VERD_LEN, n)) {
		snprintf(why, len, "the server's verdict is not printable");
		return -EBADMSG;
	}
	if (status)
		*status = st;
	if (!st)
		return 0;
	snprintf(why, len, "server refused: %.*s", (int)n,
		 (const char *)v + DND_WIRE_VERD_LEN);
	return -EPERM;
}

int hs_client(int fd, const struct dnd_hs_cfg *cfg, const void *params,
	      size_t params_len, uint16_t *status, char *why, size_t len)
{
	struct dnd_hello h = hs_hello(cfg);
	uint8_t head[DND_WIRE_REQ_LEN];
	int err;

	if (params_len > DND_WIRE_PARAMS_MAX) {
		snprintf(why, len, "session parameters of %zu bytes; the limit "
			 "is %d", params_len, DND_WIRE_PARAMS_MAX);
		return -EINVAL;
	}
	err = hello_open(fd, &h, why, len);
	if (err)
		return err;
	wire_put_req(head, (uint16_t)params_len);
	err = hello_send_by(fd, head, sizeof(head), cfg->deadline);
	if (!err)
		err = hello_send_by(fd, params, params_len, cfg->deadline);
	if (err)
		return hs_io_fail(fd, err, "request", why, len);
	return hs_read_verdict(fd, cfg->deadline, status, why, len);
}

int hs_server(int fd, const struct dnd_hs_cfg *cfg, uint8_t *params,
	      size_t *params_len, char *why, size_t len)
{
	struct dnd_hello h = hs_hello(cfg);
	uint8_t head[DND_WIRE_REQ_LEN];
	uint16_t n;
	int err = 0;

	if (!cfg->tls)
		err = hs_check_loopback(fd, why, len);
	/* dnd serve's parent may have run the opening already. */
	if (!err && !chan_tls(fd))
		err = hello_accept(fd, &h, why, len);
	if (err)
		return err;
	err = hello_recv_by(fd, head, sizeof(head), cfg->deadline);
	if (err)
		return hs_io_fail(fd, err, "client's request", why, len);
	err = wire_get_req(head, &n, why, len);
	/* A one-shot sender reads its receiver's accept here: a verdict
	 * tells it that it reached a dnd serve. */
	if (err == -EPROTOTYPE)
		hs_verdict(fd, SERVE_ST_REFUSED, why, cfg->deadline,
			   (char[160]){ 0 }, 160);
	if (err)
		return err;
	err = hello_recv_by(fd, params, n, cfg->deadline);
	if (err)
		return hs_io_fail(fd, err, "client's request", why, len);
	*params_len = n;
	return 0;
}

int hs_verdict(int fd, uint16_t status, const char *reason, double deadline,
	       char *why, size_t len)
{
	uint8_t v[DND_WIRE_VERD_LEN + DND_WIRE_REASON_MAX];
	size_t n = wire_put_verdict(v, sizeof(v), status, reason);
	int err = hello_send_by(fd, v, n, deadline);

	return err ? hs_io_fail(fd, err, "verdict", why, len) : 0;
}
