// SPDX-License-Identifier: MIT
/*
 * core/tls.c over loopback TCP, one thread per end: PSK and certificate
 * handshakes with (EC)DHE, data both ways, clean close, and every failure's
 * exact message (wrong key, expired or foreign or missing certificate, a
 * cut connection, a flipped byte on the path); kTLS as the probe says.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "check.h"
#include "core/stats.h"
#include "core/tls.h"
#include "core/tls_ktls.h"

/* The fix every "does not hold this key" carries (core/tls_err.h). */
#define NOKEY_FIX "; both ends need the same key file ('dnd serve --new-key FILE' makes one)"

#define DATA_LEN (32 * 1024)

enum role {
	DND_END_OPEN = 0,	/* handshake only */
	DND_END_ECHO,		/* echo until close_notify, then close */
	DND_END_DRAIN,		/* read until 0 or an error */
};

struct end {
	int fd;
	enum role role;
	struct dnd_tls_cfg cfg;
	struct dnd_tls *t;
	int rc;			/* tls_open() */
	char err[256];
	ssize_t last;		/* the read that ended DRAIN/ECHO */
	char last_err[256];
	size_t moved;
	int shut;		/* ECHO's tls_shutdown() */
	atomic_bool opened;	/* tls_open() returned */
};

static char dir[] = "/tmp/dnd-tls-XXXXXX";
static uint8_t data[DATA_LEN];

/* ---- sockets ---- */

static int tcp_pair(int fd[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l == -1 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &al))
		return -1;
	fd[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (fd[0] == -1 || connect(fd[0], (struct sockaddr *)&a, sizeof(a)))
		return -1;
	fd[1] = accept(l, NULL, NULL);
	close(l);
	return fd[1] == -1 ? -1 : 0;
}

/* ---- the server end ---- */

static void end_loop(struct end *e, bool echo)
{
	uint8_t buf[4096];
	ssize_t n;

	for (;;) {
		n = tls_read(e->t, buf, sizeof(buf), e->last_err,
			     sizeof(e->last_err));
		if (n <= 0)
			break;
		e->moved += (size_t)n;
		if (echo && tls_write(e->t, buf, (size_t)n, e->last_err,
				      sizeof(e->last_err)) != n) {
			n = -EIO;
			break;
		}
	}
	e->last = n;
	if (echo && n == 0)
		e->shut = tls_shutdown(e->t, stats_now() + 10, e->last_err,
				       sizeof(e->last_err));
}

static void *end_run(void *arg)
{
	struct end *e = arg;

	e->cfg.deadline = stats_now() + 10;
	e->rc = tls_open(&e->t, e->fd, &e->cfg, e->err, sizeof(e->err));
	atomic_store(&e->opened, true);
	if (!e->rc && e->role != DND_END_OPEN)
		end_loop(e, e->role == DND_END_ECHO);
	return NULL;
}

/* ---- certificates, made here ---- */

static EVP_PKEY *ca_key, *other_key, *leaf_key;
static X509 *ca_cert, *other_cert;

static X509 *mkcert(const char *cn, EVP_PKEY *key, X509 *issuer,
		    EVP_PKEY *ikey, const char *not_after, bool ca)
{
	static long serial = 1;
	X509 *x = X509_new();
	X509_NAME *name = X509_get_subject_name(x);
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
	if (not_after) {
		ASN1_TIME_set_string_X509(X509_getm_notBefore(x),
					  "20190101000000Z");
		ASN1_TIME_set_string_X509(X509_getm_notAfter(x), not_after);
	} else {
		X509_gmtime_adj(X509_getm_notBefore(x), -3600);
		X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 365);
	}
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
	X509_set_pubkey(x, key);
	X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints,
				  ca ? "critical,CA:TRUE" : "CA:FALSE");
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	X509_sign(x, ikey ? ikey : key, EVP_sha256());
	return x;
}

static const char *path(const char *name)
{
	static char p[32][256];
	static int i;

	i = (i + 1) % 32;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static void write_pem(const char *name, X509 *x, EVP_PKEY *k)
{
	FILE *f = fopen(path(name), "w");

	if (x)
		PEM_write_X509(f, x);
	if (k)
		PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
	fclose(f);
}

/* A leaf signed by issuer, with leaf_key; not_after NULL: valid now. */
static void write_leaf(const char *name, const char *cn, X509 *issuer,
		       EVP_PKEY *ikey, const char *not_after)
{
	X509 *x = mkcert(cn, leaf_key, issuer, ikey, not_after, false);

	write_pem(name, x, NULL);
	X509_free(x);
}

static void make_certs(void)
{
	ca_key = EVP_EC_gen("P-256");
	other_key = EVP_EC_gen("P-256");
	leaf_key = EVP_EC_gen("P-256");
	ca_cert = mkcert("dnd test CA", ca_key, NULL, NULL, NULL, true);
	other_cert = mkcert("another CA", other_key, NULL, NULL, NULL, true);
	write_pem("ca.pem", ca_cert, NULL);
	write_pem("other-ca.pem", other_cert, NULL);
	write_pem("leaf.key", NULL, leaf_key);
	write_leaf("good.pem", "good", ca_cert, ca_key, NULL);
	write_leaf("expired.pem", "expired", ca_cert, ca_key,
		   "20200101000000Z");
	write_leaf("foreign.pem", "foreign", other_cert, other_key, NULL);
}

static void free_certs(void)
{
	X509_free(ca_cert);
	X509_free(other_cert);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(other_key);
	EVP_PKEY_free(leaf_key);
}

static void certs(struct dnd_tls_cfg *c, const char *cert)
{
	c->cert = cert ? path(cert) : NULL;
	c->cert_key = cert ? path("leaf.key") : NULL;
	c->ca = path("ca.pem");
}

/* ---- one session ---- */

static const uint8_t key_a[] = "0123456789abcdef0123456789abcdef";
static const uint8_t key_b[] = "0123456789abcdef0123456789abcdeX";

struct pair {
	int fd[2];		/* client, server */
	struct end srv;
	pthread_t tid;
	bool joined;
	struct dnd_tls *cli;
	int rc;
	char err[256];
};

static void psk(struct dnd_tls_cfg *c, const uint8_t *k)
{
	c->psk = k;
}

/* Connects cfd to the server end's thread and runs the client handshake.
 * cfd may be a relay's end (then srv.fd is the relay's other peer). */
static void session(struct pair *p, int cfd, const struct dnd_tls_cfg *cc)
{
	struct dnd_tls_cfg c = *cc;

	p->srv.cfg.server = true;
	pthread_create(&p->tid, NULL, end_run, &p->srv);
	c.deadline = stats_now() + 10;
	p->rc = tls_open(&p->cli, cfd, &c, p->err, sizeof(p->err));
}

static void pair_join(struct pair *p)
{
	if (!p->joined)
		pthread_join(p->tid, NULL);
	p->joined = true;
}

static void pair_end(struct pair *p)
{
	pair_join(p);
	tls_free(p->cli);
	tls_free(p->srv.t);
	close(p->fd[0]);
	close(p->fd[1]);
}

static int pair_open(struct pair *p, enum role role)
{
	memset(p, 0, sizeof(*p));
	p->srv.role = role;
	if (tcp_pair(p->fd))
		return -1;
	p->srv.fd = p->fd[1];
	return 0;
}

/* ---- the tests ---- */

static void test_psk(void)
{
	struct tls_ktls_info k;
	struct pair p;
	uint8_t back[DATA_LEN];
	char kwhy[320], err[256];
	size_t off = 0;
	ssize_t n;
	int kerr;

	if (pair_open(&p, DND_END_ECHO))
		{
		CHECK(0, "loopback pair");
		return;
	}
	psk(&p.srv.cfg, key_a);
	session(&p, p.fd[0], &(struct dnd_tls_cfg){ .psk = key_a });
	CHECK(p.rc == 0, "PSK handshake: %d %s", p.rc, p.err);
	if (p.rc) {
		pair_join(&p);
		CHECK(0, "PSK server: %d %s", p.srv.rc, p.srv.err);
		return pair_end(&p);
	}
	CHECK(!strcmp(tls_version(p.cli), "TLSv1.3"), "version %s",
	      tls_version(p.cli));
	CHECK(!strcmp(tls_cipher(p.cli), "TLS_AES_128_GCM_SHA256"),
	      "cipher %s", tls_cipher(p.cli));
	CHECK(tls_group(p.cli) != NULL, "(EC)DHE ran: group %s",
	      tls_group(p.cli) ? tls_group(p.cli) : "none");
	for (off = 0; off < DATA_LEN; off += (size_t)n) {
		n = tls_write(p.cli, data + off, DATA_LEN - off, err,
			      sizeof(err));
		if (n <= 0)
			break;
	}
	CHECK(off == DATA_LEN, "wrote %zu bytes", off);
	for (off = 0; off < DATA_LEN; off += (size_t)n) {
		n = tls_read(p.cli, back + off, DATA_LEN - off, err,
			     sizeof(err));
		if (n <= 0)
			break;
	}
	CHECK(off == DATA_LEN && !memcmp(back, data, DATA_LEN),
	      "echo byte-exact (%zu bytes)", off);
	CHECK(tls_shutdown(p.cli, stats_now() + 10, err, sizeof(err)) == 0,
	      "client close: %s", err);
	pair_join(&p);
	CHECK(p.srv.t && tls_group(p.srv.t) != NULL, "server saw (EC)DHE");
	CHECK(p.srv.last == 0 && p.srv.moved == DATA_LEN,
	      "server read %zu bytes, then 0 for close_notify (%zd %s)",
	      p.srv.moved, p.srv.last, p.srv.last_err);
	CHECK(p.srv.shut == 0, "server close: %s", p.srv.last_err);

	/* kTLS: whatever the live check says is what the session shows. */
	kerr = tls_ktls_check(&k, kwhy, sizeof(kwhy));
	if (kerr == 0) {
		CHECK(tls_ktls_tx(p.cli), "kernel TLS here: tx offloaded");
	} else {
		CHECK(!tls_ktls_tx(p.cli) && !tls_ktls_rx(p.cli),
		      "no kernel TLS here: records in user space");
		CHECK(!strcmp(tls_ktls_why(p.cli), tls_ktls_reason(kwhy)), "why: %s",
		      tls_ktls_why(p.cli));
	}
	if (kerr == -ENOSYS)
		CHECK(strstr(kwhy, "CONFIG_TLS absent") ||
			      strstr(kwhy, "tls module not loaded"),
		      "the reason names the kernel: %s", kwhy);
	{
		uint8_t a[32], b[32];

		CHECK(!tls_export(p.cli, "dnd stream v1", a, 32, err,
				  sizeof(err)) &&
			      !tls_export(p.srv.t, "dnd stream v1", b, 32, err,
					  sizeof(err)) &&
			      !memcmp(a, b, 32),
		      "exporter: both ends agree");
	}
	pair_end(&p);
}

/* Runs one handshake; returns the pair for the caller to check and end. */
static void run(struct pair *p, enum role role,
		const struct dnd_tls_cfg *srv, const struct dnd_tls_cfg *cli)
{
	if (pair_open(p, role)) {
		CHECK(0, "loopback pair: %s", strerror(errno));
		exit(CHECK_DONE());
	}
	p->srv.cfg = *srv;
	session(p, p->fd[0], cli);
}

static void test_wrong_psk(void)
{
	struct dnd_tls_cfg s = { 0 }, c = { 0 };
	struct pair p;

	psk(&s, key_a);
	psk(&c, key_b);
	run(&p, DND_END_OPEN, &s, &c);
	pair_join(&p);
	CHECK(p.rc == -EACCES && !strcmp(p.err, "authentication failed: the "
					 "server does not hold this key" NOKEY_FIX),
	      "client: %d %s", p.rc, p.err);
	CHECK(p.srv.rc == -EACCES &&
		      !strcmp(p.srv.err, "authentication failed: the client "
					 "does not hold this key" NOKEY_FIX),
	      "server: %d %s", p.srv.rc, p.srv.err);
	pair_end(&p);
}

/* Both ends' messages, exactly; a NULL want means "no error there". */
static void expect(const char *what, int rc, const char *err, int want_rc,
		   const char *want)
{
	CHECK(rc == want_rc && (!want || !strcmp(err, want)),
	      "%s: %d %s", what, rc, rc ? err : "");
}

/* A TLS 1.3 client learns of its refused certificate after its own
 * handshake: the first read carries the server's alert. */
static void client_read_fails(struct pair *p, const char *want)
{
	char buf[16], err[256] = "";
	ssize_t n = -1;

	if (p->rc == 0)
		n = tls_read(p->cli, buf, sizeof(buf), err, sizeof(err));
	expect("client's first read", (int)n, err, -EACCES, want);
}

static void test_certs(void)
{
	char want[512];
	struct dnd_tls_cfg s = { 0 }, c = { 0 };
	struct pair p;

	certs(&s, "good.pem");
	certs(&c, "good.pem");
	run(&p, DND_END_OPEN, &s, &c);
	pair_join(&p);
	expect("mutual TLS client", p.rc, p.err, 0, NULL);
	expect("mutual TLS server", p.srv.rc, p.srv.err, 0, NULL);
	CHECK(!p.rc && tls_group(p.cli), "mutual TLS: (EC)DHE");
	pair_end(&p);

	certs(&c, "expired.pem");
	run(&p, DND_END_OPEN, &s, &c);
	pair_join(&p);
	expect("expired: server", p.srv.rc, p.srv.err, -EACCES,
	       "the peer's certificate has expired (notAfter "
	       "2020-01-01 00:00:00Z)");
	client_read_fails(&p, "authentication failed: the server refused our "
			      "certificate: it has expired; renew --cert");
	pair_end(&p);

	certs(&c, "good.pem");
	certs(&s, "expired.pem");
	run(&p, DND_END_OPEN, &s, &c);
	pair_join(&p);
	expect("expired server: client", p.rc, p.err, -EACCES,
	       "the peer's certificate has expired (notAfter "
	       "2020-01-01 00:00:00Z)");
	expect("expired server: server", p.srv.rc, p.srv.err, -EACCES,
	       "authentication failed: the client refused our certificate: "
	       "it has expired; renew --cert");
	pair_end(&p);

	certs(&s, "good.pem");
	certs(&c, "foreign.pem");
	run(&p, DND_END_OPEN, &s, &c);
	pair_join(&p);
	snprintf(want, sizeof(want),
		 "the peer's certificate does not chain to --ca %s",
		 path("ca.pem"));
	expect("foreign CA: server", p.srv.rc, p.srv.err, -EACCES, want);
	client_read_fails(&p, "authentication failed: the server refused our "
			      "certificate: it does not chain to the "
			      "server's --ca");
	pair_end(&p);

	/* A key-only client must not settle for the server's certificate:
	 * without the key the server could be anyone. */
	memset(&c, 0, sizeof(c));
	psk(&c, key_a);
	run(&p, DND_END_OPEN, &s, &c);
	pair_join(&p);
	expect("key-only client, certificate server", p.rc, p.err, -EACCES,
	       "authentication failed: the server does not hold this key" NOKEY_FIX);
	pair_end(&p);
}

/* The server refused the client's certificate and closed on bytes the
 * client had sent meanwhile, so its kernel reset the connection: the
 * client's next write meets the reset and still reports the alert that
 * was queued before it. */
static void test_refused_write(void)
{
	struct dnd_tls_cfg s = { 0 }, c = { 0 };
	struct pollfd pf = { .events = 0 };
	char err[256] = "";
	struct pair p;
	ssize_t n = -1;
	int i;

	certs(&s, "good.pem");
	certs(&c, "expired.pem");
	run(&p, DND_END_OPEN, &s, &c);
	pair_join(&p);
	if (!p.rc && tls_write(p.cli, data, 1000, err, sizeof(err)) == 1000) {
		close(p.fd[1]);
		p.fd[1] = -1;
		/* events 0: waits for the reset (POLLERR/POLLHUP) alone. */
		pf.fd = p.fd[0];
		for (i = 0; i < 100 && !(pf.revents & (POLLERR | POLLHUP));
		     i++)
			poll(&pf, 1, 100);
		CHECK(pf.revents & (POLLERR | POLLHUP), "the reset came");
		n = tls_write(p.cli, data, 1000, err, sizeof(err));
	}
	expect("client's write after the reset", (int)n, err, -EACCES,
	       "authentication failed: the server refused our certificate: "
	       "it has expired; renew --cert");
	pair_end(&p);
}

/* A client that sends no certificate: plain OpenSSL, as dnd never is. */
static void test_no_cert(void)
{
	struct dnd_tls_cfg s = { 0 };
	struct pair p;
	SSL_CTX *ctx;
	SSL *ssl;
	char buf[16];

	if (pair_open(&p, DND_END_OPEN))
		{
		CHECK(0, "loopback pair");
		return;
	}
	certs(&s, "good.pem");
	p.srv.cfg = s;
	p.srv.cfg.server = true;
	pthread_create(&p.tid, NULL, end_run, &p.srv);
	ctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_load_verify_locations(ctx, path("ca.pem"), NULL);
	ssl = SSL_new(ctx);
	SSL_set_fd(ssl, p.fd[0]);
	if (SSL_connect(ssl) == 1)
		SSL_read(ssl, buf, sizeof(buf));
	pair_join(&p);
	expect("no client certificate: server", p.srv.rc, p.srv.err, -EACCES,
	       "no certificate from the peer (it needs --cert and "
	       "--cert-key)");
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	pair_end(&p);
}

/* Certificates and a key: both must hold. */
static void test_both(void)
{
	struct dnd_tls_cfg s = { 0 }, c = { 0 };
	struct pair p;

	certs(&s, "good.pem");
	certs(&c, "good.pem");
	psk(&s, key_a);
	psk(&c, key_a);
	run(&p, DND_END_OPEN, &s, &c);
	pair_join(&p);
	expect("certificates and key: client", p.rc, p.err, 0, NULL);
	expect("certificates and key: server", p.srv.rc, p.srv.err, 0, NULL);
	pair_end(&p);

	psk(&c, key_b);
	run(&p, DND_END_OPEN, &s, &c);
	pair_join(&p);
	expect("good certificates, wrong key: client", p.rc, p.err, -EACCES,
	       "authentication failed: the server does not hold this key" NOKEY_FIX);
	expect("good certificates, wrong key: server", p.srv.rc, p.srv.err,
	       -EACCES,
	       "authentication failed: the client does not hold this key" NOKEY_FIX);
	pair_end(&p);
}

/* TCP ends after some records but before close_notify. */
static void test_truncation(void)
{
	struct dnd_tls_cfg s = { 0 }, c = { 0 };
	char err[256];
	struct pair p;
	int i;

	psk(&s, key_a);
	psk(&c, key_a);
	run(&p, DND_END_DRAIN, &s, &c);
	for (i = 0; i < 3 && !p.rc; i++)
		CHECK(tls_write(p.cli, data, 1000, err, sizeof(err)) == 1000,
		      "record %d", i);
	shutdown(p.fd[0], SHUT_WR);
	pair_join(&p);
	CHECK(p.srv.moved == 3000, "server read %zu bytes", p.srv.moved);
	expect("cut: server", (int)p.srv.last, p.srv.last_err, -ECONNABORTED,
	       "the connection was cut before TLS closed");
	pair_end(&p);
}

/* ---- a relay on the path that flips one byte ---- */

struct relay {
	int a, b;		/* client side, server side */
	atomic_bool armed;
	bool flipped;
};

static void *relay_run(void *arg)
{
	struct relay *r = arg;
	double end = stats_now() + 20;
	uint8_t buf[65536];
	ssize_t n;

	while (stats_now() < end) {
		struct pollfd pf[2] = { { r->a, POLLIN, 0 },
					{ r->b, POLLIN, 0 } };

		if (poll(pf, 2, 100) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (!pf[i].revents)
				continue;
			n = read(pf[i].fd, buf, sizeof(buf));
			if (n <= 0)
				goto out;
			if (i == 0 && atomic_load(&r->armed) && !r->flipped) {
				buf[n > 20 ? 20 : n - 1] ^= 0x01;
				r->flipped = true;
			}
			if (write(i ? r->a : r->b, buf, (size_t)n) != n)
				goto out;
		}
	}
out:
	shutdown(r->a, SHUT_RDWR);
	shutdown(r->b, SHUT_RDWR);
	return NULL;
}

static void test_flip(void)
{
	struct dnd_tls_cfg s = { 0 }, c = { 0 };
	struct relay r = { 0 };
	int cfd[2], i;
	pthread_t rt;
	struct pair p;
	char err[256];

	if (pair_open(&p, DND_END_DRAIN) || tcp_pair(cfd))
		{
		CHECK(0, "loopback pairs");
		return;
	}
	/* client cfd[0] -> relay cfd[1] ... relay fd[0] -> server fd[1] */
	r.a = cfd[1];
	r.b = p.fd[0];
	pthread_create(&rt, NULL, relay_run, &r);
	psk(&s, key_a);
	psk(&c, key_a);
	p.srv.cfg = s;
	session(&p, cfd[0], &c);
	for (i = 0; i < 1000 && !atomic_load(&p.srv.opened); i++)
		usleep(10000);
	CHECK(p.rc == 0 && p.srv.rc == 0, "handshake through the relay");
	atomic_store(&r.armed, true);
	if (!p.rc)
		tls_write(p.cli, data, 1000, err, sizeof(err));
	pair_join(&p);
	CHECK(r.flipped, "the relay flipped a byte");
	expect("flipped byte: server", (int)p.srv.last, p.srv.last_err,
	       -EBADMSG, "a TLS record failed its check (bad record mac): the "
			 "data was changed on the way");
	CHECK(p.srv.moved == 0, "nothing of the changed record was read");
	shutdown(cfd[0], SHUT_RDWR);
	pthread_join(rt, NULL);
	close(cfd[0]);
	close(cfd[1]);
	pair_end(&p);
}

int main(void)
{
	char cmd[300];

	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return DND_T_FAIL;
	}
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + (i >> 9));
	make_certs();
	test_psk();
	test_wrong_psk();
	test_certs();
	test_refused_write();
	test_no_cert();
	test_both();
	test_truncation();
	test_flip();
	free_certs();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		CHECK(0, "cannot remove %s", dir);
	return CHECK_DONE();
}
