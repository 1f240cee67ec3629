// SPDX-License-Identifier: MIT
/* dnd serve's handshake over socketpairs (a thread per end, a relay thread
 * that tampers or records), its decoders and session MACs. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/stats.h"
#include "serve/auth.h"
#include "serve/handshake.h"
#include "serve/key.h"

#define PARAMS	"push data/file.bin 1048576 splice 4"
#define PLEN	(sizeof(PARAMS) - 1)

static struct dnd_key key1, key2;

/* One end of a handshake, run by run_pair(). */
struct end {
	int fd;
	struct dnd_hs_cfg cfg;
	struct dnd_auth a;
	int rc;
	uint16_t status;	/* client: the verdict's; server: to send */
	const char *reason;	/* server: the refusal's reason */
	char why[512];
};

static bool is_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static void end_init(struct end *e, enum dnd_auth_mode mode,
		     const struct dnd_key *k)
{
	memset(e, 0, sizeof(*e));
	e->cfg.mode = mode;
	e->cfg.key = k;
	e->cfg.version = DND_AUTH_VERSION;
	e->cfg.deadline = stats_now() + 5;
}

static void *server_main(void *arg)
{
	struct end *s = arg;

	s->rc = hs_server(s->fd, &s->cfg, &s->a, s->why, sizeof(s->why));
	if (!s->rc)
		hs_verdict(s->fd, &s->a, s->status, s->reason, s->cfg.deadline,
			   s->why, sizeof(s->why));
	/* As the server would on failure: the client sees EOF at once. */
	shutdown(s->fd, SHUT_WR);
	return NULL;
}

static void *client_main(void *arg)
{
	struct end *c = arg;

	c->rc = hs_client(c->fd, &c->cfg, PARAMS, PLEN, &c->a, &c->status,
			  c->why, sizeof(c->why));
	shutdown(c->fd, SHUT_WR);
	return NULL;
}

/* A relay between client and server that flips one byte and records. */
struct mitm {
	int fd[2];		/* [0] faces the client, [1] the server */
	int dir;		/* flip in 0: client->server, 1: server->client */
	size_t off;
	uint8_t xor;		/* 0: flip nothing */
	uint8_t rec[2][1024];	/* what went each way */
	size_t n[2];
};

static void mitm_pass(struct mitm *m, int i, uint8_t *buf, ssize_t r)
{
	ssize_t j;
	size_t pos;

	for (j = 0; j < r; j++) {
		pos = m->n[i] + (size_t)j;
		if (m->xor && i == m->dir && pos == m->off)
			buf[j] ^= m->xor;
		if (pos < sizeof(m->rec[i]))
			m->rec[i][pos] = buf[j];
	}
	m->n[i] += (size_t)r;
	if (send(m->fd[1 - i], buf, (size_t)r, MSG_NOSIGNAL) != r)
		shutdown(m->fd[1 - i], SHUT_WR);
}

static void *mitm_main(void *arg)
{
	struct mitm *m = arg;
	struct pollfd p[2] = { { m->fd[0], POLLIN, 0 }, { m->fd[1], POLLIN, 0 } };
	double end = stats_now() + 6;
	uint8_t buf[4096];
	int i, open = 2;
	ssize_t r;

	while (open && stats_now() < end) {
		if (poll(p, 2, 100) <= 0)
			continue;
		for (i = 0; i < 2; i++) {
			if (p[i].fd == -1 || !p[i].revents)
				continue;
			r = read(p[i].fd, buf, sizeof(buf));
			if (r <= 0) {
				shutdown(m->fd[1 - i], SHUT_WR);
				p[i].fd = -1;
				open--;
				continue;
			}
			mitm_pass(m, i, buf, r);
		}
	}
	return NULL;
}

/* Runs client c against server s, through m when m is not NULL. */
static void run_pair(struct end *c, struct end *s, struct mitm *m)
{
	int a[2], b[2];
	pthread_t tc, ts, tm;

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a);
	c->fd = a[0];
	if (m) {
		socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b);
		m->fd[0] = a[1];
		m->fd[1] = b[0];
		s->fd = b[1];
		pthread_create(&tm, NULL, mitm_main, m);
	} else {
		s->fd = a[1];
	}
	pthread_create(&ts, NULL, server_main, s);
	pthread_create(&tc, NULL, client_main, c);
	pthread_join(tc, NULL);
	pthread_join(ts, NULL);
	if (m) {
		pthread_join(tm, NULL);
		close(b[0]);
		close(b[1]);
	}
	close(a[0]);
	close(a[1]);
}

/* A keyed handshake through a relay flipping byte off of direction dir. */
static void run_tampered(struct end *c, struct end *s, int dir, size_t off)
{
	struct mitm m = { .dir = dir, .off = off, .xor = 0x01 };

	end_init(c, DND_AUTH_KEY, &key1);
	end_init(s, DND_AUTH_KEY, &key1);
	run_pair(c, s, &m);
}

static void test_good(void)
{
	struct end c, s, c2, s2;
	uint8_t tag[DND_AUTH_MAC_LEN];
	const char trl[] = "DNDT bytes=1048576 hash=0123456789abcdef";
	char bad[sizeof(trl)];

	end_init(&c, DND_AUTH_KEY, &key1);
	end_init(&s, DND_AUTH_KEY, &key1);
	run_pair(&c, &s, NULL);
	CHECK(c.rc == 0 && s.rc == 0 && c.status == 0,
	      "right key: client %d (%s), server %d (%s)", c.rc, c.why, s.rc,
	      s.why);
	CHECK(s.a.params_len == PLEN && !memcmp(s.a.params, PARAMS, PLEN),
	      "the server got the parameters");
	CHECK(c.a.peer_version == DND_AUTH_VERSION &&
	      s.a.peer_version == DND_AUTH_VERSION, "both versions seen");
	CHECK(!memcmp(c.a.key, s.a.key, sizeof(c.a.key)) &&
	      !is_zero(c.a.key, sizeof(c.a.key)), "both ends derived one session key");

	auth_mac(&c.a, DND_MAC_TRAILER, trl, sizeof(trl), tag);
	CHECK(auth_mac_verify(&s.a, DND_MAC_TRAILER, trl, sizeof(trl), tag) == 0,
	      "the trailer's MAC verifies at the other end");
	memcpy(bad, trl, sizeof(trl));
	bad[7] ^= 0x04;
	CHECK(auth_mac_verify(&s.a, DND_MAC_TRAILER, bad, sizeof(bad), tag) ==
	      -EBADMSG, "a flipped bit in the trailer fails");
	CHECK(auth_mac_verify(&s.a, DND_MAC_REPLY, trl, sizeof(trl), tag) ==
	      -EBADMSG, "a trailer's tag is no reply's");
	tag[31] ^= 0x80;
	CHECK(auth_mac_verify(&s.a, DND_MAC_TRAILER, trl, sizeof(trl), tag) ==
	      -EBADMSG, "a flipped bit in the tag fails");

	end_init(&c2, DND_AUTH_KEY, &key1);
	end_init(&s2, DND_AUTH_KEY, &key1);
	run_pair(&c2, &s2, NULL);
	auth_mac(&c.a, DND_MAC_REPLY, trl, sizeof(trl), tag);
	CHECK(c2.rc == 0 && memcmp(c.a.key, c2.a.key, sizeof(c.a.key)) &&
	      auth_mac_verify(&s2.a, DND_MAC_REPLY, trl, sizeof(trl), tag) ==
	      -EBADMSG, "a tag from another session fails");
}

static void test_wrong_key_version_modes(void)
{
	struct end c, s;

	end_init(&c, DND_AUTH_KEY, &key2);
	end_init(&s, DND_AUTH_KEY, &key1);
	run_pair(&c, &s, NULL);
	CHECK(c.rc == -EACCES && !strcmp(c.why, "authentication failed"),
	      "wrong key, client: %d %s", c.rc, c.why);
	CHECK(s.rc == -EACCES && !strcmp(s.why, "authentication failed: the "
	      "client could not verify this server's proof (the keys differ, "
	      "or the handshake was altered)"),
	      "wrong key, server: %d %s", s.rc, s.why);

	end_init(&c, DND_AUTH_KEY, &key1);
	end_init(&s, DND_AUTH_KEY, &key1);
	c.cfg.version = 2;
	run_pair(&c, &s, NULL);
	CHECK(c.rc == -EPROTO && !strcmp(c.why, "protocol version mismatch: "
	      "this dnd speaks version 2, the server speaks version 1"),
	      "version, client: %s", c.why);
	CHECK(s.rc == -EPROTO && !strcmp(s.why, "protocol version mismatch: "
	      "this dnd speaks version 1, the client speaks version 2"),
	      "version, server: %s", s.why);

	end_init(&c, DND_AUTH_KEY, &key1);
	end_init(&s, DND_AUTH_NONE, NULL);
	run_pair(&c, &s, NULL);
	CHECK(c.rc == -EACCES && strstr(c.why, "the server runs without a key")
	      && strstr(c.why, "refusing an unauthenticated session"),
	      "keyed client, keyless server: %s", c.why);
	CHECK(s.rc == -EACCES && strstr(s.why, "the client uses a key but this "
	      "server runs without one"), "server side: %s", s.why);

	end_init(&c, DND_AUTH_NONE, NULL);
	end_init(&s, DND_AUTH_KEY, &key1);
	run_pair(&c, &s, NULL);
	CHECK(c.rc == -EACCES && strstr(c.why, "the server requires a key"),
	      "keyless client, keyed server: %s", c.why);
	CHECK(s.rc == -EACCES && strstr(s.why, "the client has no key but this "
	      "server requires one"), "server side: %s", s.why);
}

static void test_keyless(void)
{
	struct end c, s;
	uint8_t tag[DND_AUTH_MAC_LEN];

	end_init(&c, DND_AUTH_NONE, NULL);
	end_init(&s, DND_AUTH_NONE, NULL);
	run_pair(&c, &s, NULL);
	CHECK(c.rc == 0 && s.rc == 0 && s.a.mode == DND_AUTH_NONE &&
	      s.a.params_len == PLEN && !memcmp(s.a.params, PARAMS, PLEN),
	      "keyless handshake: %s / %s", c.why, s.why);
	auth_mac(&s.a, DND_MAC_REPLY, "x", 1, tag);
	CHECK(is_zero(tag, sizeof(tag)) &&
	      auth_mac_verify(&c.a, DND_MAC_REPLY, "y", 1, tag) == 0,
	      "keyless MACs are zero: nothing is claimed");
	tag[0] = 1;
	CHECK(auth_mac_verify(&c.a, DND_MAC_REPLY, "y", 1, tag) == -EBADMSG,
	      "a keyless end refuses a non-zero tag");
}

/* Keyless over real TCP: loopback peers pass; other addresses do not. */
static void test_loopback(void)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	socklen_t sl = sizeof(s4);
	struct end c, s;
	pthread_t tc, ts;
	int l;

	s4.sin_addr.s_addr = htonl(0x7f000005);
	CHECK(hs_addr_loopback((struct sockaddr *)&s4, sizeof(s4)), "127.0.0.5");
	s4.sin_addr.s_addr = htonl(0x0a000001);
	CHECK(!hs_addr_loopback((struct sockaddr *)&s4, sizeof(s4)), "10.0.0.1");
	inet_pton(AF_INET6, "::1", &s6.sin6_addr);
	CHECK(hs_addr_loopback((struct sockaddr *)&s6, sizeof(s6)), "::1");
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &s6.sin6_addr);
	CHECK(hs_addr_loopback((struct sockaddr *)&s6, sizeof(s6)),
	      "::ffff:127.0.0.1");
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &s6.sin6_addr);
	CHECK(!hs_addr_loopback((struct sockaddr *)&s6, sizeof(s6)),
	      "::ffff:10.0.0.1");
	inet_pton(AF_INET6, "2001:db8::1", &s6.sin6_addr);
	CHECK(!hs_addr_loopback((struct sockaddr *)&s6, sizeof(s6)),
	      "2001:db8::1");

	s4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s4.sin_port = 0;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bind(l, (struct sockaddr *)&s4, sizeof(s4));
	listen(l, 1);
	getsockname(l, (struct sockaddr *)&s4, &sl);
	end_init(&c, DND_AUTH_NONE, NULL);
	end_init(&s, DND_AUTH_NONE, NULL);
	c.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	connect(c.fd, (struct sockaddr *)&s4, sizeof(s4));
	s.fd = accept(l, NULL, NULL);
	pthread_create(&ts, NULL, server_main, &s);
	pthread_create(&tc, NULL, client_main, &c);
	pthread_join(tc, NULL);
	pthread_join(ts, NULL);
	CHECK(c.rc == 0 && s.rc == 0, "keyless over TCP loopback: %s / %s",
	      c.why, s.why);
	close(c.fd);
	close(s.fd);
	close(l);
}

static void test_tamper(void)
{
	const size_t resp = DND_AUTH_HELLO_LEN + PLEN;
	struct end c, s;

	run_tampered(&c, &s, 0, DND_AUTH_HELLO_LEN + 5);
	CHECK(c.rc == -EACCES && !strcmp(c.why, "authentication failed") &&
	      s.rc == -EACCES && strstr(s.why, "could not verify"),
	      "altered parameters: %s / %s", c.why, s.why);
	run_tampered(&c, &s, 0, 12);
	CHECK(c.rc == -EACCES && !strcmp(c.why, "authentication failed") &&
	      s.rc == -EACCES, "altered client nonce: %s / %s", c.why, s.why);
	run_tampered(&c, &s, 1, 12);
	CHECK(c.rc == -EACCES && !strcmp(c.why, "authentication failed") &&
	      s.rc == -EACCES, "altered server nonce: %s / %s", c.why, s.why);
	run_tampered(&c, &s, 1, 50);
	CHECK(c.rc == -EACCES && !strcmp(c.why, "authentication failed") &&
	      s.rc == -EACCES, "altered server proof: %s / %s", c.why, s.why);
	run_tampered(&c, &s, 0, resp + 20);
	CHECK(s.rc == -EACCES && strstr(s.why, "client's proof does not "
	      "verify") && c.rc == -ENODATA && strstr(c.why, "verdict"),
	      "altered client proof: %s / %s", s.why, c.why);
	run_tampered(&c, &s, 0, resp + 4);
	CHECK(s.rc == -EBADMSG && c.rc == -ENODATA,
	      "altered response verdict byte: %s", s.why);
	run_tampered(&c, &s, 1, DND_AUTH_CHAL_LEN + 5);
	CHECK(s.rc == 0 && c.rc == -EBADMSG && strstr(c.why, "does not verify"),
	      "altered verdict status: %s", c.why);
	run_tampered(&c, &s, 1, 6);
	CHECK(c.rc == -EACCES && strstr(c.why, "the server runs without a key"),
	      "mode byte flipped to keyless is no downgrade: %s", c.why);
}

struct replayer {
	int fd;
	const uint8_t *chal;	/* an old session's CHALLENGE */
};

/* A fake server: reads a HELLO and answers with an old CHALLENGE. */
static void *replay_server_main(void *arg)
{
	struct replayer *r = arg;
	uint8_t buf[DND_AUTH_HELLO_LEN + PLEN + DND_AUTH_RESP_LEN];
	double end = stats_now() + 5;

	if (!hs_recv_by(r->fd, buf, DND_AUTH_HELLO_LEN + PLEN, end))
		hs_send_by(r->fd, r->chal, DND_AUTH_CHAL_LEN, end);
	hs_recv_by(r->fd, buf, DND_AUTH_RESP_LEN, end);
	shutdown(r->fd, SHUT_WR);
	return NULL;
}

static void test_replay(void)
{
	const size_t hl = DND_AUTH_HELLO_LEN + PLEN;
	struct mitm m = { .xor = 0 };
	struct replayer r;
	uint8_t chal[DND_AUTH_CHAL_LEN], msg[DND_AUTH_RESP_LEN + 7];
	struct end c, s;
	pthread_t t;
	char peek[16];
	int sp[2];

	end_init(&c, DND_AUTH_KEY, &key1);
	end_init(&s, DND_AUTH_KEY, &key1);
	run_pair(&c, &s, &m);
	CHECK(c.rc == 0 && s.rc == 0 && m.n[0] == hl + DND_AUTH_RESP_LEN,
	      "a recorded session: %s / %s", c.why, s.why);

	/* An old CHALLENGE does not fool a client with a fresh nonce. */
	end_init(&c, DND_AUTH_KEY, &key1);
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
	c.fd = sp[0];
	r.fd = sp[1];
	r.chal = m.rec[1];
	pthread_create(&t, NULL, replay_server_main, &r);
	client_main(&c);
	pthread_join(t, NULL);
	CHECK(c.rc == -EACCES && !strcmp(c.why, "authentication failed"),
	      "replayed server challenge: %s", c.why);
	close(sp[0]);
	close(sp[1]);

	/* An old HELLO and RESPONSE do not fool a server with a fresh nonce,
	 * and the payload sent after them stays unread. */
	end_init(&s, DND_AUTH_KEY, &key1);
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
	s.fd = sp[1];
	pthread_create(&t, NULL, server_main, &s);
	hs_send_by(sp[0], m.rec[0], hl, stats_now() + 5);
	hs_recv_by(sp[0], chal, sizeof(chal), stats_now() + 5);
	memcpy(msg, m.rec[0] + hl, DND_AUTH_RESP_LEN);
	memcpy(msg + DND_AUTH_RESP_LEN, "PAYLOAD", 7);
	hs_send_by(sp[0], msg, sizeof(msg), stats_now() + 5);
	pthread_join(t, NULL);
	CHECK(s.rc == -EACCES && strstr(s.why, "client's proof does not verify"),
	      "replayed client response: %s", s.why);
	CHECK(recv(sp[1], peek, sizeof(peek), MSG_PEEK | MSG_DONTWAIT) == 7 &&
	      !memcmp(peek, "PAYLOAD", 7),
	      "the server read no byte past the handshake");
	close(sp[0]);
	close(sp[1]);
}

static void test_timeout_refusal(void)
{
	struct end c, s;
	double t0;
	int sp[2];

	end_init(&s, DND_AUTH_KEY, &key1);
	s.cfg.deadline = stats_now() + 0.3;
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
	s.fd = sp[1];
	hs_send_by(sp[0], "DNDa", 4, stats_now() + 1);
	t0 = stats_now();
	server_main(&s);
	CHECK(s.rc == -ETIMEDOUT && strstr(s.why, "timed out") &&
	      stats_now() - t0 > 0.25 && stats_now() - t0 < 2,
	      "a stalled hello is dropped at the deadline: %s", s.why);
	close(sp[0]);
	close(sp[1]);

	end_init(&c, DND_AUTH_KEY, &key1);
	end_init(&s, DND_AUTH_KEY, &key1);
	s.status = 3;
	s.reason = "name 'a/../b' has a '..' component\n";
	run_pair(&c, &s, NULL);
	CHECK(s.rc == 0 && c.rc == -EPERM && c.status == 3 &&
	      !strcmp(c.why, "server refused: name 'a/../b' has a '..' "
		      "component?"), "refusal reaches the client: %s", c.why);
}

static void test_decoders(void)
{
	struct dnd_auth_hello h = { { DND_AUTH_VERSION, DND_AUTH_KEY }, { 1 },
				    DND_AUTH_PARAMS_MAX };
	struct dnd_auth_resp r = { DND_AUTH_RESP_REFUSED, { 0 } };
	uint8_t m[DND_AUTH_HELLO_LEN], q[DND_AUTH_RESP_LEN];
	struct dnd_auth_hello g;
	struct dnd_auth_resp rr;
	struct dnd_auth_pre p;
	char why[256];

	auth_put_hello(m, &h);
	CHECK(auth_get_hello(m, &g, why, sizeof(why)) == 0 &&
	      g.params_len == DND_AUTH_PARAMS_MAX && g.nonce[0] == 1,
	      "hello round trip");
	m[41]++;
	CHECK(auth_get_hello(m, &g, why, sizeof(why)) == -EBADMSG &&
	      strstr(why, "limit"), "params_len over the limit: %s", why);
	m[41]--;
	m[47] = 1;
	CHECK(auth_get_hello(m, &g, why, sizeof(why)) == -EBADMSG,
	      "reserved hello bytes");
	memcpy(m, "DNDH", 4);
	CHECK(auth_get_pre(m, false, 1, DND_AUTH_KEY, &p, why, sizeof(why)) ==
	      -EBADMSG && strstr(why, "one-shot"), "a one-shot sender: %s", why);
	auth_put_hello(m, &h);
	m[6] = 7;
	CHECK(auth_get_pre(m, false, 1, DND_AUTH_KEY, &p, why, sizeof(why)) ==
	      -EBADMSG, "unknown mode");
	auth_put_resp(q, &r);
	CHECK(auth_get_resp(q, &rr, why, sizeof(why)) == 0 &&
	      rr.verdict == DND_AUTH_RESP_REFUSED, "response round trip");
	q[20] = 1;
	CHECK(auth_get_resp(q, &rr, why, sizeof(why)) == -EBADMSG,
	      "a refusal with a proof");
	CHECK(auth_check_reason((const uint8_t *)"ok \x1b[2J", 7) == -EBADMSG &&
	      auth_check_reason((const uint8_t *)"fine", 4) == 0,
	      "escape sequences in a reason are refused");
}

int main(void)
{

	memcpy(key1.bytes, "correct horse battery staple", 28);
	key1.len = 28;
	memcpy(key2.bytes, "correct horse battery stapler", 29);
	key2.len = 29;
	test_good();
	test_wrong_key_version_modes();
	test_keyless();
	test_loopback();
	test_tamper();
	test_replay();
	test_timeout_refusal();
	test_decoders();
	return CHECK_DONE();
}
