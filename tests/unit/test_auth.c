// SPDX-License-Identifier: MIT
/* dnd serve's handshake over TCP loopback pairs (a thread per end): the
 * preambles, TLS with the key, the request and verdict inside it; the
 * stream binding token; the decoders of every byte before TLS. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/chan.h"
#include "core/hello.h"
#include "core/net.h"
#include "core/stats.h"
#include "core/tls.h"
#include "core/wire.h"
#include "serve/handshake.h"

/* The fix every "does not hold this key" carries (core/tls_err.h). */
#define NOKEY_FIX "; both ends need the same key file ('dnd serve --new-key FILE' makes one)"

#define PARAMS	"push data/file.bin 1048576 splice 4"
#define PLEN	(sizeof(PARAMS) - 1)

static const uint8_t psk1[] = "test key number one, 32 bytes..";
static const uint8_t psk2[] = "test key number two, 32 bytes..";
static struct dnd_tls_cfg tls1 = { .psk = psk1 };
static struct dnd_tls_cfg tls2 = { .psk = psk2 };

/* One end of a handshake, run by run_pair(). */
struct end {
	int fd;
	struct dnd_hs_cfg cfg;
	uint8_t params[DND_WIRE_PARAMS_MAX];
	size_t plen;
	int rc;
	uint16_t status;	/* client: the verdict's; server: to send */
	const char *reason;	/* server: the refusal's reason */
	char why[512];
};

static int tcp_pair(int fd[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t sl = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &sl))
		return -1;
	fd[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (connect(fd[0], (struct sockaddr *)&a, sizeof(a)))
		return -1;
	fd[1] = accept(l, NULL, NULL);
	close(l);
	return fd[1] < 0 ? -1 : 0;
}

static void end_init(struct end *e, const struct dnd_tls_cfg *tls)
{
	memset(e, 0, sizeof(*e));
	e->cfg.tls = tls;
	e->cfg.version = DND_WIRE_VERSION;
	e->cfg.deadline = stats_now() + 5;
}

static void *server_main(void *arg)
{
	struct end *s = arg;

	s->rc = hs_server(s->fd, &s->cfg, s->params, &s->plen, s->why,
			  sizeof(s->why));
	if (!s->rc)
		hs_verdict(s->fd, s->status, s->reason ? s->reason : "",
			   s->cfg.deadline, s->why, sizeof(s->why));
	return NULL;
}

static void *client_main(void *arg)
{
	struct end *c = arg;

	c->rc = hs_client(c->fd, &c->cfg, PARAMS, PLEN, &c->status, c->why,
			  sizeof(c->why));
	/* A failed client closes at once: the server's reads end. */
	if (c->rc)
		shutdown(c->fd, SHUT_RDWR);
	return NULL;
}

/* Runs both ends; the caller closes the fds with chan_close(). */
static int run_pair(struct end *c, struct end *s)
{
	pthread_t tc, ts;
	int fd[2];

	if (tcp_pair(fd))
		return -1;
	c->fd = fd[0];
	s->fd = fd[1];
	pthread_create(&ts, NULL, server_main, s);
	pthread_create(&tc, NULL, client_main, c);
	pthread_join(tc, NULL);
	pthread_join(ts, NULL);
	return 0;
}

static void pair_close(struct end *c, struct end *s)
{
	chan_close(c->fd);
	chan_close(s->fd);
}

static void test_good(void)
{
	struct end c, s;

	end_init(&c, &tls1);
	end_init(&s, &tls1);
	if (run_pair(&c, &s)) {
		CHECK(0, "loopback pair");
		return;
	}
	CHECK(c.rc == 0 && s.rc == 0, "keyed handshake: %s / %s", c.why,
	      s.why);
	CHECK(s.plen == PLEN && !memcmp(s.params, PARAMS, PLEN),
	      "the params arrive whole, inside TLS");
	CHECK(chan_tls(c.fd) && chan_tls(s.fd), "both sockets carry TLS");
	CHECK(!strcmp(tls_version(chan_tls(c.fd)), "TLSv1.3"), "TLS 1.3");
	pair_close(&c, &s);

	end_init(&c, &tls1);
	end_init(&s, &tls1);
	s.status = 2;
	s.reason = "server busy\x1b[2J";
	run_pair(&c, &s);
	CHECK(c.rc == -EPERM && c.status == 2 &&
	      !strcmp(c.why, "server refused: server busy\\x1b[2J"),
	      "a refusal arrives with its reason, escaped: %s", c.why);
	pair_close(&c, &s);
}

static void test_wrong_key_version_modes(void)
{
	struct end c, s;

	end_init(&c, &tls2);
	end_init(&s, &tls1);
	run_pair(&c, &s);
	CHECK(c.rc == -EACCES && !strcmp(c.why, "authentication failed: the "
	      "server does not hold this key" NOKEY_FIX), "wrong key, client: %s",
	      c.why);
	CHECK(s.rc == -EACCES && !strcmp(s.why, "authentication failed: the "
	      "client does not hold this key" NOKEY_FIX), "wrong key, server: %s",
	      s.why);
	CHECK(!chan_tls(c.fd) && !chan_tls(s.fd), "no TLS kept after it");
	pair_close(&c, &s);

	end_init(&c, &tls1);
	end_init(&s, &tls1);
	c.cfg.version = 9;
	run_pair(&c, &s);
	CHECK(c.rc == -EPROTO && !strcmp(c.why, "protocol version mismatch: "
	      "this dnd speaks version 9, the server speaks version 2"),
	      "version, client: %s", c.why);
	CHECK(s.rc == -EPROTO && !strcmp(s.why, "protocol version mismatch: "
	      "this dnd speaks version 2, the client speaks version 9"),
	      "version, server: %s", s.why);
	pair_close(&c, &s);

	end_init(&c, NULL);
	end_init(&s, &tls1);
	run_pair(&c, &s);
	CHECK(c.rc == -EACCES && !strcmp(c.why, "the server requires a key; "
	      "give this client the server's key file"), "no key: %s", c.why);
	CHECK(s.rc == -EACCES && !strcmp(s.why, "the client has no key but "
	      "this server requires one"), "no key, server: %s", s.why);
	pair_close(&c, &s);

	end_init(&c, &tls1);
	end_init(&s, NULL);
	run_pair(&c, &s);
	CHECK(c.rc == -EACCES && strstr(c.why, "the server runs without a "
	      "key"), "keyless server: %s", c.why);
	pair_close(&c, &s);
}

static void test_keyless(void)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	struct end c, s;

	end_init(&c, NULL);
	end_init(&s, NULL);
	run_pair(&c, &s);
	CHECK(c.rc == 0 && s.rc == 0 && s.plen == PLEN &&
	      !chan_tls(c.fd) && !chan_tls(s.fd),
	      "keyless over loopback: plain text: %s / %s", c.why, s.why);
	pair_close(&c, &s);
	s4.sin_addr.s_addr = htonl(0x7f000005);
	CHECK(net_addr_loopback((struct sockaddr *)&s4, sizeof(s4)), "127.0.0.5");
	s4.sin_addr.s_addr = htonl(0x0a000001);
	CHECK(!net_addr_loopback((struct sockaddr *)&s4, sizeof(s4)), "10.0.0.1");
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &s6.sin6_addr);
	CHECK(!net_addr_loopback((struct sockaddr *)&s6, sizeof(s6)),
	      "::ffff:10.0.0.1");
}

/* What a stranger sends before TLS: refused, bounded, answered with
 * nothing past our preamble. */
static void test_strangers(void)
{
	struct end s;
	uint8_t b[64];
	int fd[2];
	ssize_t n;

	end_init(&s, &tls1);
	tcp_pair(fd);
	s.fd = fd[1];
	send(fd[0], "GET / HTTP/1.1\r\n", 16, 0);
	server_main(&s);
	n = recv(fd[0], b, sizeof(b), MSG_DONTWAIT);
	CHECK(s.rc == -EBADMSG && strstr(s.why, "not a dnd client") && n <= 0,
	      "an HTTP request: refused, no answer: %s", s.why);
	close(fd[0]);
	close(fd[1]);

	end_init(&s, &tls1);
	s.cfg.deadline = stats_now() + 0.3;
	tcp_pair(fd);
	s.fd = fd[1];
	send(fd[0], "DNDa", 4, 0);
	server_main(&s);
	CHECK(s.rc == -ETIMEDOUT, "half a preamble: the deadline ends it: %s",
	      s.why);
	close(fd[0]);
	close(fd[1]);
}

/* Streams bound to stream 0's session: another session's token fails. */
static void test_token(void)
{
	struct end c[2], s[2];
	int i, r;

	for (i = 0; i < 2; i++) {
		end_init(&c[i], &tls1);
		end_init(&s[i], &tls1);
		run_pair(&c[i], &s[i]);
	}
	CHECK(!c[0].rc && !c[1].rc, "two keyed sessions");
	/* Session 1's stream carries session 0's token: bound to 0. */
	hello_token_send(c[0].fd, c[1].fd);
	r = hello_token_check(s[0].fd, s[1].fd);
	CHECK(r == 0, "a stream of this session is bound: %d", r);
	hello_token_send(c[1].fd, c[1].fd);
	r = hello_token_check(s[0].fd, s[1].fd);
	CHECK(r == -EACCES, "a stream of another session is refused: %d", r);
	for (i = 0; i < 2; i++)
		pair_close(&c[i], &s[i]);
}

static void test_decoders(void)
{
	struct dnd_wire_pre p = { .version = DND_WIRE_VERSION,
				  .mode = DND_WIRE_KEY }, q;
	uint8_t b[DND_WIRE_VERD_LEN + DND_WIRE_REASON_MAX], v[8];
	uint16_t st, n;
	char why[256];

	wire_put_pre(b, false, &p);
	CHECK(!memcmp(b, "DNDa\0\2\1\0", 8), "the opener's preamble");
	CHECK(wire_get_pre(b, true, DND_WIRE_SERVE, 2, DND_WIRE_KEY, &q, why,
			   sizeof(why)) == -EBADMSG, "DNDa is not an answer");
	b[7] = 1;
	CHECK(wire_get_pre(b, false, DND_WIRE_SERVE, 2, DND_WIRE_KEY, &q, why,
			   sizeof(why)) == -EBADMSG, "reserved byte set");
	memcpy(b, "DNDH", 4);
	CHECK(wire_get_pre(b, false, DND_WIRE_ONESHOT, 2, DND_WIRE_KEY, &q,
			   why, sizeof(why)) == -ENOPROTOOPT &&
	      !strcmp(why, "the sender has no key; give it --key too, or drop "
		      "--key here"), "a plain header at a keyed receiver: %s",
	      why);
	wire_put_req(v, DND_WIRE_PARAMS_MAX + 1);
	CHECK(wire_get_req(v, &n, why, sizeof(why)) == -EBADMSG,
	      "a request over the limit: %s", why);
	wire_put_req(v, 40);
	CHECK(!wire_get_req(v, &n, why, sizeof(why)) && n == 40, "request");
	CHECK(wire_put_verdict(b, sizeof(b), 1, "no") == 10 &&
	      !wire_get_verdict(b, &st, &n, why, sizeof(why)) && st == 1 &&
	      n == 2, "verdict");
	CHECK(wire_check_reason((const uint8_t *)"a\nb", 3) == -EBADMSG,
	      "a reason with a control byte");
}

int main(void)
{
	test_good();
	test_wrong_key_version_modes();
	test_keyless();
	test_strangers();
	test_token();
	test_decoders();
	return CHECK_DONE();
}
