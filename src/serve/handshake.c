// SPDX-License-Identifier: MIT
/* dnd serve's handshake over a socket, with a deadline on every byte; the
 * messages and their crypto are in auth.c. */
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "core/io.h"
#include "core/net.h"
#include "core/stats.h"
#include "serve/handshake.h"

/* Waits until fd is ready for ev, or the deadline or a stop signal. */
static int hs_wait(int fd, short ev, double deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };
	double left;
	int r;

	for (;;) {
		if (io_stop_signal)
			return -EINTR;
		left = deadline - stats_now();
		if (left <= 0)
			return -ETIMEDOUT;
		if (left > 3600)
			left = 3600;
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r == -1 && errno != EINTR)
			return -errno;
		if (r > 0)
			return 0;
	}
}

/* Moves exactly n bytes in one direction, each call non-blocking after a
 * poll, so that a blocking socket cannot outlive the deadline. */
static int hs_io(int fd, void *buf, size_t n, double deadline, bool out)
{
	size_t done = 0;
	ssize_t r;
	int err;

	while (done < n) {
		err = hs_wait(fd, out ? POLLOUT : POLLIN, deadline);
		if (err)
			return err;
		if (out)
			r = send(fd, (char *)buf + done, n - done,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			r = recv(fd, (char *)buf + done, n - done, MSG_DONTWAIT);
		if (r == 0 && !out)
			return -ENODATA;
		if (r == -1 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (r > 0)
			done += (size_t)r;
	}
	return 0;
}

int hs_recv_by(int fd, void *buf, size_t n, double deadline)
{
	return hs_io(fd, buf, n, deadline, false);
}

int hs_send_by(int fd, const void *buf, size_t n, double deadline)
{
	return hs_io(fd, (void *)buf, n, deadline, true);
}

/* Describes an I/O failure while waiting for or sending one message. */
static int hs_io_fail(int err, const char *what, char *why, size_t len)
{
	if (err == -ETIMEDOUT)
		snprintf(why, len, "handshake timed out at the %s", what);
	else if (err == -ENODATA)
		snprintf(why, len, "the peer closed the connection before the "
			 "%s", what);
	else
		snprintf(why, len, "handshake %s: %s", what, strerror(-err));
	return err;
}

bool hs_addr_loopback(const struct sockaddr *sa, socklen_t sl)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family == AF_UNIX)
		return true;
	if (sa->sa_family == AF_INET && sl >= sizeof(*s4))
		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family != AF_INET6 || sl < sizeof(*s6))
		return false;
	return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
	       (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) &&
		s6->sin6_addr.s6_addr[12] == 127);
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
	if (hs_addr_loopback((struct sockaddr *)&ss, sl))
		return 0;
	net_addr_str((struct sockaddr *)&ss, sl, peer, sizeof(peer));
	snprintf(why, len, "keyless mode serves loopback only; %s is not on "
		 "loopback (give the server a key)", peer);
	return -EACCES;
}

/* Clears a, checks the settings and readies libsodium's random numbers. */
static int hs_start(const struct dnd_hs_cfg *cfg, struct dnd_auth *a,
		    char *why, size_t len)
{
	memset(a, 0, sizeof(*a));
	a->mode = cfg->mode;
	if (cfg->mode == DND_AUTH_KEY && (!cfg->key || !cfg->key->len)) {
		snprintf(why, len, "a keyed handshake without a key");
		return -EINVAL;
	}
	if (sodium_init() >= 0)
		return 0;
	snprintf(why, len, "libsodium failed to initialise");
	return -EIO;
}

/* Reads the CHALLENGE: its preamble alone first, so that a server of
 * another version is named even when its message is longer or shorter. */
static int hs_read_chal(int fd, const struct dnd_hs_cfg *cfg,
			uint8_t chal[DND_AUTH_CHAL_LEN],
			struct dnd_auth_chal *c, char *why, size_t len)
{
	int err;

	err = hs_recv_by(fd, chal, DND_AUTH_PRE_LEN, cfg->deadline);
	if (err)
		return hs_io_fail(err, "server's challenge", why, len);
	err = auth_get_pre(chal, true, cfg->version, cfg->mode, &c->pre, why,
			   len);
	if (err)
		return err;
	err = hs_recv_by(fd, chal + DND_AUTH_PRE_LEN,
			 DND_AUTH_CHAL_LEN - DND_AUTH_PRE_LEN, cfg->deadline);
	if (err)
		return hs_io_fail(err, "server's challenge", why, len);
	return auth_get_chal(chal, c, why, len);
}

/* Reads the VERDICT and checks its MAC before believing a word of it. */
static int hs_read_verdict(int fd, const struct dnd_auth *a, double deadline,
			   uint16_t *status, char *why, size_t len)
{
	uint8_t v[DND_AUTH_VERD_LEN + DND_AUTH_REASON_MAX + DND_AUTH_MAC_LEN];
	uint16_t st, n;
	int err;

	err = hs_recv_by(fd, v, DND_AUTH_VERD_LEN, deadline);
	if (err)
		return hs_io_fail(err, "server's verdict", why, len);
	err = auth_get_verdict(v, &st, &n, why, len);
	if (err)
		return err;
	err = hs_recv_by(fd, v + DND_AUTH_VERD_LEN, n + DND_AUTH_MAC_LEN,
			 deadline);
	if (err)
		return hs_io_fail(err, "server's verdict", why, len);
	if (auth_mac_verify(a, DND_MAC_VERDICT, v, DND_AUTH_VERD_LEN + n,
			    v + DND_AUTH_VERD_LEN + n)) {
		snprintf(why, len, "the server's verdict does not verify "
			 "(altered in transit?)");
		return -EBADMSG;
	}
	if (auth_check_reason(v + DND_AUTH_VERD_LEN, n)) {
		snprintf(why, len, "the server's verdict is not printable");
		return -EBADMSG;
	}
	if (status)
		*status = st;
	if (!st)
		return 0;
	snprintf(why, len, "server refused: %.*s", (int)n,
		 (const char *)v + DND_AUTH_VERD_LEN);
	return -EPERM;
}

/* Sends HELLO: the fixed part, then the params. */
static int hs_send_hello(int fd, const struct dnd_hs_cfg *cfg,
			 uint8_t hello[DND_AUTH_HELLO_LEN],
			 struct dnd_auth_hello *h, const struct dnd_auth *a,
			 char *why, size_t len)
{
	int err;

	h->pre.version = cfg->version;
	h->pre.mode = (uint8_t)cfg->mode;
	randombytes_buf(h->nonce, sizeof(h->nonce));
	h->params_len = (uint16_t)a->params_len;
	auth_put_hello(hello, h);
	err = hs_send_by(fd, hello, DND_AUTH_HELLO_LEN, cfg->deadline);
	if (!err)
		err = hs_send_by(fd, a->params, a->params_len, cfg->deadline);
	return err ? hs_io_fail(err, "hello", why, len) : 0;
}

/* The client's answer to the server's proof: refusal or its own proof. */
static int hs_respond(int fd, const struct dnd_hs_cfg *cfg,
		      const uint8_t hello[DND_AUTH_HELLO_LEN],
		      const uint8_t chal[DND_AUTH_CHAL_LEN],
		      const struct dnd_auth_chal *c, const struct dnd_auth *a,
		      char *why, size_t len)
{
	struct dnd_auth_resp r = { DND_AUTH_RESP_PROOF, { 0 } };
	uint8_t want[DND_AUTH_MAC_LEN], resp[DND_AUTH_RESP_LEN];
	bool refused = false;
	int err;

	if (cfg->mode == DND_AUTH_KEY) {
		auth_proof(cfg->key, true, hello, a->params, a->params_len,
			   chal, want);
		refused = !auth_tag_equal(want, c->proof);
		if (refused)
			r.verdict = DND_AUTH_RESP_REFUSED;
		else
			auth_proof(cfg->key, false, hello, a->params,
				   a->params_len, chal, r.proof);
	}
	auth_put_resp(resp, &r);
	err = hs_send_by(fd, resp, sizeof(resp), cfg->deadline);
	if (refused) {
		/* Exactly this, whatever the cause: no oracle for a guesser. */
		snprintf(why, len, "authentication failed");
		return -EACCES;
	}
	return err ? hs_io_fail(err, "response", why, len) : 0;
}

int hs_client(int fd, const struct dnd_hs_cfg *cfg, const void *params,
	      size_t params_len, struct dnd_auth *a, uint16_t *status,
	      char *why, size_t len)
{
	uint8_t hello[DND_AUTH_HELLO_LEN], chal[DND_AUTH_CHAL_LEN];
	struct dnd_auth_hello h;
	struct dnd_auth_chal c;
	int err;

	err = hs_start(cfg, a, why, len);
	if (!err && params_len > DND_AUTH_PARAMS_MAX) {
		snprintf(why, len, "session parameters of %zu bytes; the limit "
			 "is %d", params_len, DND_AUTH_PARAMS_MAX);
		return -EINVAL;
	}
	if (!err) {
		memcpy(a->params, params, params_len);
		a->params_len = params_len;
		err = hs_send_hello(fd, cfg, hello, &h, a, why, len);
	}
	if (!err)
		err = hs_read_chal(fd, cfg, chal, &c, why, len);
	if (!err)
		err = hs_respond(fd, cfg, hello, chal, &c, a, why, len);
	if (err)
		return err;
	a->peer_version = c.pre.version;
	if (cfg->mode == DND_AUTH_KEY)
		auth_session_key(a, cfg->key, h.nonce, c.nonce);
	return hs_read_verdict(fd, a, cfg->deadline, status, why, len);
}

/*
 * Sends a CHALLENGE. Its proof covers the HELLO and the CHALLENGE's first
 * 40 bytes; with_proof false (keyless, or a refused preamble) leaves it
 * zero, so a peer of another version or mode still learns ours.
 */
static int hs_send_chal(int fd, const struct dnd_hs_cfg *cfg, bool with_proof,
			const uint8_t hello[DND_AUTH_HELLO_LEN],
			const struct dnd_auth *a,
			uint8_t chal[DND_AUTH_CHAL_LEN], struct dnd_auth_chal *c)
{
	memset(c, 0, sizeof(*c));
	c->pre.version = cfg->version;
	c->pre.mode = (uint8_t)cfg->mode;
	randombytes_buf(c->nonce, sizeof(c->nonce));
	auth_put_chal(chal, c);
	if (with_proof) {
		auth_proof(cfg->key, true, hello, a->params, a->params_len,
			   chal, c->proof);
		auth_put_chal(chal, c);
	}
	return hs_send_by(fd, chal, DND_AUTH_CHAL_LEN, cfg->deadline);
}

/* Reads HELLO and its params into hello and a. A refused preamble (version
 * or mode) is still answered with our CHALLENGE so the client can say why. */
static int hs_read_hello(int fd, const struct dnd_hs_cfg *cfg,
			 uint8_t hello[DND_AUTH_HELLO_LEN],
			 struct dnd_auth_hello *h, struct dnd_auth *a,
			 char *why, size_t len)
{
	uint8_t chal[DND_AUTH_CHAL_LEN];
	struct dnd_auth_chal c;
	int err;

	err = hs_recv_by(fd, hello, DND_AUTH_PRE_LEN, cfg->deadline);
	if (err)
		return hs_io_fail(err, "client's hello", why, len);
	err = auth_get_pre(hello, false, cfg->version, cfg->mode, &h->pre,
			   why, len);
	if (err == -EPROTO || err == -EACCES)
		hs_send_chal(fd, cfg, false, hello, a, chal, &c);
	if (err)
		return err;
	err = hs_recv_by(fd, hello + DND_AUTH_PRE_LEN,
			 DND_AUTH_HELLO_LEN - DND_AUTH_PRE_LEN, cfg->deadline);
	if (err)
		return hs_io_fail(err, "client's hello", why, len);
	err = auth_get_hello(hello, h, why, len);
	if (err)
		return err;
	a->params_len = h->params_len;
	err = hs_recv_by(fd, a->params, a->params_len, cfg->deadline);
	return err ? hs_io_fail(err, "client's parameters", why, len) : 0;
}

/* Reads RESPONSE and checks the client's proof (zero when keyless). */
static int hs_check_resp(int fd, const struct dnd_hs_cfg *cfg,
			 const uint8_t hello[DND_AUTH_HELLO_LEN],
			 const uint8_t chal[DND_AUTH_CHAL_LEN],
			 const struct dnd_auth *a, char *why, size_t len)
{
	uint8_t resp[DND_AUTH_RESP_LEN], want[DND_AUTH_MAC_LEN] = { 0 };
	struct dnd_auth_resp r;
	int err;

	err = hs_recv_by(fd, resp, sizeof(resp), cfg->deadline);
	if (err)
		return hs_io_fail(err, "client's response", why, len);
	err = auth_get_resp(resp, &r, why, len);
	if (err)
		return err;
	if (r.verdict == DND_AUTH_RESP_REFUSED) {
		snprintf(why, len, "authentication failed: the client could "
			 "not verify this server's proof (the keys differ, or "
			 "the handshake was altered)");
		return -EACCES;
	}
	if (cfg->mode == DND_AUTH_KEY)
		auth_proof(cfg->key, false, hello, a->params, a->params_len,
			   chal, want);
	if (!auth_tag_equal(want, r.proof)) {
		snprintf(why, len, "authentication failed: the client's proof "
			 "does not verify (another key, or an altered "
			 "handshake)");
		return -EACCES;
	}
	return 0;
}

int hs_server(int fd, const struct dnd_hs_cfg *cfg, struct dnd_auth *a,
	      char *why, size_t len)
{
	uint8_t hello[DND_AUTH_HELLO_LEN], chal[DND_AUTH_CHAL_LEN];
	struct dnd_auth_hello h;
	struct dnd_auth_chal c;
	int err;

	err = hs_start(cfg, a, why, len);
	if (!err && cfg->mode == DND_AUTH_NONE)
		err = hs_check_loopback(fd, why, len);
	if (!err)
		err = hs_read_hello(fd, cfg, hello, &h, a, why, len);
	if (err)
		return err;
	err = hs_send_chal(fd, cfg, cfg->mode == DND_AUTH_KEY, hello, a, chal,
			   &c);
	if (err)
		return hs_io_fail(err, "challenge", why, len);
	err = hs_check_resp(fd, cfg, hello, chal, a, why, len);
	if (err)
		return err;
	a->peer_version = h.pre.version;
	if (cfg->mode == DND_AUTH_KEY)
		auth_session_key(a, cfg->key, h.nonce, c.nonce);
	return 0;
}

int hs_verdict(int fd, const struct dnd_auth *a, uint16_t status,
	       const char *reason, double deadline, char *why, size_t len)
{
	uint8_t v[DND_AUTH_VERD_LEN + DND_AUTH_REASON_MAX + DND_AUTH_MAC_LEN];
	size_t n = auth_put_verdict(v, sizeof(v), a, status, reason);
	int err = hs_send_by(fd, v, n, deadline);

	return err ? hs_io_fail(err, "verdict", why, len) : 0;
}
