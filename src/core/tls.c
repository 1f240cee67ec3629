// SPDX-License-Identifier: MIT
/*
 * TLS 1.3 sessions through OpenSSL 3: a handshake bounded by a deadline
 * over a non-blocking socket BIO (so that kTLS can take the records), the
 * data calls and the exporter. The context is tls_ctx.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "core/io.h"
#include "core/net.h"
#include "core/stats.h"
#include "core/tls.h"
#include "core/tls_ctx.h"
#include "core/tls_err.h"
#include "core/tls_ktls.h"


/* ---- driving a call to completion under a deadline ---- */

static int tls_call(struct dnd_tls *t, enum tls_op op, void *buf, size_t n,
		    size_t *done)
{
	ERR_clear_error();
	errno = 0;
	if (op == DND_TLS_READ)
		return SSL_read_ex(t->ssl, buf, n, done);
	if (op == DND_TLS_PEEK)
		return SSL_peek_ex(t->ssl, buf, n, done);
	if (op == DND_TLS_WRITE)
		return SSL_write_ex(t->ssl, buf, n, done);
	if (op == DND_TLS_FLUSH)
		return BIO_flush(SSL_get_wbio(t->ssl)) > 0;
	return SSL_do_handshake(t->ssl);
}

/* SSL_get_error() for a call that failed; a flush is the BIO's alone. */
static int tls_error(struct dnd_tls *t, enum tls_op op, int r)
{
	if (op != DND_TLS_FLUSH)
		return SSL_get_error(t->ssl, r);
	return BIO_should_retry(SSL_get_wbio(t->ssl)) ? SSL_ERROR_WANT_WRITE
						       : SSL_ERROR_SYSCALL;
}

/*
 * A read, retried on a non-blocking fd until it completes or deadline (the
 * close's). Returns 0 (*done bytes), 1 for close_notify, or -errno with err.
 */
static int tls_drive(struct dnd_tls *t, void *buf, size_t n, size_t *done,
		     double deadline, char *err, size_t len)
{
	int r, e, sys;

	for (;;) {
		r = tls_call(t, DND_TLS_READ, buf, n, done);
		sys = errno;
		if (r == 1)
			return 0;
		e = SSL_get_error(t->ssl, r);
		if (e == SSL_ERROR_ZERO_RETURN)
			return 1;
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
			r = net_wait_by(t->fd,
				     e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
				     deadline);
		else
			return tls_err_map(&t->why, e, sys, err, len);
		if (r == -ETIMEDOUT)
			snprintf(err, len, "TLS close timed out");
		else if (r)
			snprintf(err, len, "TLS: %s", strerror(-r));
		if (r)
			return r;
	}
}

/* ---- the handshake ---- */

static int tls_proof(const struct dnd_tls *t, bool server, uint8_t *out)
{
	uint8_t in[TLS_PROOF_LEN + 1];
	size_t n = 0;

	if (SSL_export_keying_material(t->ssl, in, TLS_PROOF_LEN, TLS_CONFIRM,
				       sizeof(TLS_CONFIRM) - 1, NULL, 0,
				       0) != 1)
		return -EPROTO;
	in[TLS_PROOF_LEN] = server ? 's' : 'c';
	if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, t->psk,
		       TLS_PSK_LEN, in, sizeof(in), out, TLS_PROOF_LEN, &n))
		return -EPROTO;
	return n == TLS_PROOF_LEN ? 0 : -EPROTO;
}

/* Why either direction stayed in user space. */
static void tls_ktls_explain(struct dnd_tls *t)
{
	struct tls_ktls_info k;
	char why[256];
	bool tx = tls_ktls_tx(t), rx = tls_ktls_rx(t);

	if (tx && rx)
		snprintf(t->ktls_why, sizeof(t->ktls_why),
			 "the kernel encrypts and decrypts");
	else if (tls_ktls_check(&k, why, sizeof(why)))
		snprintf(t->ktls_why, sizeof(t->ktls_why), "%s",
			 tls_ktls_reason(why));
	else
		snprintf(t->ktls_why, sizeof(t->ktls_why),
			 "OpenSSL kept %s in user space for %s %s",
			 tx ? "receive" : rx ? "send" : "both directions",
			 tls_version(t), tls_cipher(t));
}

/*
 * After the handshake, records that stay in user space move in batches:
 * the receiver reads ahead into the TLS_BATCH read buffer (one recv() for
 * many records instead of two per record), and the sender's records gather
 * in a buffer BIO that tls_write() flushes once per call. A direction the
 * kernel took (kTLS) keeps its socket BIO as it is.
 */
static int tls_batch(struct dnd_tls *t, char *err, size_t len)
{
	BIO *sock = SSL_get_wbio(t->ssl), *b;

	if (!tls_ktls_rx(t))
		SSL_set_read_ahead(t->ssl, 1);
	if (tls_ktls_tx(t))
		return 0;
	b = BIO_new(BIO_f_buffer());
	if (!b || !BIO_set_write_buffer_size(b, TLS_BATCH) ||
	    !BIO_up_ref(sock)) {
		BIO_free(b);
		ERR_clear_error();
		snprintf(err, len, "cannot set up a TLS session in OpenSSL");
		return -ENOMEM;
	}
	SSL_set0_wbio(t->ssl, BIO_push(b, sock));
	t->gather = true;
	return 0;
}

static void tls_forget_proofs(struct dnd_tls *t)
{
	OPENSSL_cleanse(t->mine, sizeof(t->mine));
	OPENSSL_cleanse(t->want, sizeof(t->want));
}

/*
 * The stage after one that completed (n bytes moved). Certificates and a
 * key: each end sends its proof of the key, bound to this session, and
 * checks the peer's. Both write first, so a wrong key is seen on both
 * ends. 0 or -errno with err.
 */
static int tls_advance(struct dnd_tls *t, size_t n, char *err, size_t len)
{
	const char *peer = t->why.server ? "client" : "server";

	switch (t->stage) {
	case TLS_ST_HANDSHAKE:
		if (!t->have_cert && !SSL_session_reused(t->ssl)) {
			snprintf(err, len, DND_TLS_NOKEY, peer);
			return -EACCES;
		}
		t->stage = TLS_ST_DONE;
		if (!t->have_cert || !t->have_psk)
			break;
		if (tls_proof(t, t->why.server, t->mine) ||
		    tls_proof(t, !t->why.server, t->want)) {
			ERR_clear_error();
			snprintf(err, len, "cannot derive the key's proof");
			return -EPROTO;
		}
		t->stage = TLS_ST_PROVE;
		return 0;
	case TLS_ST_PROVE:
		t->stage = TLS_ST_CHECK;
		return 0;
	case TLS_ST_CHECK:
		t->got_len += n;
		if (t->got_len < sizeof(t->got))
			return 0;
		if (CRYPTO_memcmp(t->got, t->want, sizeof(t->want))) {
			snprintf(err, len, DND_TLS_NOKEY, peer);
			return -EACCES;
		}
		tls_forget_proofs(t);
		t->stage = TLS_ST_DONE;
		break;
	case TLS_ST_DONE:
		return 0;
	}
	/* OpenSSL keeps what the session needs; this copy is done. */
	OPENSSL_cleanse(t->psk, sizeof(t->psk));
	tls_ktls_explain(t);
	return tls_batch(t, err, len);
}

int tls_step(struct dnd_tls *t, short *events, char *err, size_t len)
{
	size_t n = 0;
	int r, e, sys;

	while (t->stage != TLS_ST_DONE) {
		if (t->stage == TLS_ST_HANDSHAKE)
			r = tls_call(t, DND_TLS_HANDSHAKE, NULL, 0, NULL);
		else if (t->stage == TLS_ST_PROVE)
			r = tls_call(t, DND_TLS_WRITE, t->mine,
				     sizeof(t->mine), &n);
		else
			r = tls_call(t, DND_TLS_READ, t->got + t->got_len,
				     sizeof(t->got) - t->got_len, &n);
		sys = errno;
		e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(t->ssl, r);
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
			*events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
			return -EAGAIN;
		}
		if (e == SSL_ERROR_ZERO_RETURN) {
			snprintf(err, len, "the peer closed TLS during the "
					   "handshake");
			return -ECONNABORTED;
		}
		if (e != SSL_ERROR_NONE)
			return tls_err_map(&t->why, e, sys, err, len);
		r = tls_advance(t, n, err, len);
		if (r)
			return r;
	}
	return 0;
}

int tls_start(struct dnd_tls **out, int fd, const struct dnd_tls_cfg *cfg,
	      char *err, size_t len)
{
	bool certs = cfg->cert || cfg->cert_key || cfg->ca;
	struct dnd_tls *t;
	int r;

	*out = NULL;
	if (!certs && !cfg->psk) {
		snprintf(err, len, "TLS needs a key (--key) or certificates "
				   "(--cert, --cert-key, --ca)");
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, len, "TLS: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	t->fd = fd;
	t->why.server = cfg->server;
	t->why.psk = t->have_psk = cfg->psk;
	t->have_cert = certs;
	t->why.ca = cfg->ca;
	t->why.verify_err = X509_V_OK;
	if (cfg->psk)
		memcpy(t->psk, cfg->psk, sizeof(t->psk));
	r = tls_ctx_setup(t, cfg, certs, err, len);
	if (!r) {
		t->ssl = SSL_new(t->ctx);
		if (!t->ssl || !SSL_set_fd(t->ssl, fd) ||
		    !SSL_set_app_data(t->ssl, t)) {
			ERR_clear_error();
			snprintf(err, len, "cannot set up a TLS session in "
				 "OpenSSL");
			r = -ENOMEM;
		}
	}
	if (r) {
		tls_free(t);
		return r;
	}
	if (cfg->server)
		SSL_set_accept_state(t->ssl);
	else
		SSL_set_connect_state(t->ssl);
	*out = t;
	return 0;
}

int tls_open(struct dnd_tls **out, int fd, const struct dnd_tls_cfg *cfg,
	     char *err, size_t len)
{
	int fl = fcntl(fd, F_GETFL), r;
	struct dnd_tls *t;
	short ev = 0;

	*out = NULL;
	if (fl == -1) {
		r = -errno;
		snprintf(err, len, "TLS: %s", strerror(-r));
		return r;
	}
	r = tls_start(&t, fd, cfg, err, len);
	if (r)
		return r;
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while ((r = tls_step(t, &ev, err, len)) == -EAGAIN) {
		r = net_wait_by(fd, ev, cfg->deadline);
		if (r == -ETIMEDOUT)
			snprintf(err, len, "TLS handshake timed out");
		else if (r)
			snprintf(err, len, "TLS: %s", strerror(-r));
		if (r)
			break;
	}
	fcntl(fd, F_SETFL, fl);
	if (r) {
		tls_free(t);
		return r;
	}
	*out = t;
	return 0;
}

/* ---- data ---- */

static ssize_t tls_io(struct dnd_tls *t, enum tls_op op, void *buf, size_t n,
		      char *err, size_t len)
{
	size_t done = 0;
	int r, sys, e;

	/* A signal that does not stop the run (the progress timer) on a
	 * blocking socket looks like "retry" to OpenSSL: take it again. */
	do {
		errno = 0;
		r = tls_call(t, op, buf, n, &done);
		sys = errno;
		if (r == 1)
			return (ssize_t)done;
		e = tls_error(t, op, r);
	} while ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) &&
		 sys == EINTR && !io_stop_signal);
	if (e == SSL_ERROR_ZERO_RETURN && op == DND_TLS_READ)
		return 0;
	/* A signal on a blocking socket looks like "retry" to OpenSSL. */
	if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) &&
	    io_stop_signal) {
		snprintf(err, len, "interrupted");
		return -EINTR;
	}
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		snprintf(err, len, "TLS: would block");
		return -EAGAIN;
	}
	return tls_err_map(&t->why, e, sys, err, len);
}

ssize_t tls_read(struct dnd_tls *t, void *buf, size_t n, char *err,
		 size_t len)
{
	return tls_io(t, DND_TLS_READ, buf, n, err, len);
}

/*
 * A write that found the connection reset: the peer may have refused this
 * end's certificate (TLS 1.3 says so after the handshake ended here) or a
 * record of ours that was changed on the way, and closed on our unread
 * bytes. Its alert is still queued before the reset: read it, and report
 * it instead of the reset when it says so. Only peeked: a record of data
 * there (a dnd serve reply with its reason) stays for the caller's read.
 */
static ssize_t tls_write_reset(struct dnd_tls *t, ssize_t r, char *err,
			       size_t len)
{
	int fl = fcntl(t->fd, F_GETFL);
	char why[256];
	uint8_t b;
	ssize_t a;

	if (fl == -1 || fcntl(t->fd, F_SETFL, fl | O_NONBLOCK) == -1)
		return r;
	a = tls_io(t, DND_TLS_PEEK, &b, 1, why, sizeof(why));
	fcntl(t->fd, F_SETFL, fl);
	if (a != -EACCES && a != -EBADMSG)
		return r;
	snprintf(err, len, "%s", why);
	return a;
}

/* Each SSL_write_ex() takes one record (SSL_MODE_ENABLE_PARTIAL_WRITE):
 * all of buf goes in as records, gathered, then out in one flush. */
ssize_t tls_write(struct dnd_tls *t, const void *buf, size_t n, char *err,
		  size_t len)
{
	size_t off = 0;
	ssize_t r;

	do {
		r = tls_io(t, DND_TLS_WRITE, (uint8_t *)buf + off, n - off,
			   err, len);
		off += r > 0 ? (size_t)r : 0;
	} while (r > 0 && off < n && t->gather);
	if (r > 0 && t->gather)
		r = tls_io(t, DND_TLS_FLUSH, NULL, 0, err, len);
	if (r >= 0)
		return (ssize_t)off;
	return r == -ECONNRESET || r == -EPIPE ? tls_write_reset(t, r, err,
								 len) : r;
}

int tls_shutdown(struct dnd_tls *t, double deadline, char *err, size_t len)
{
	int fl = fcntl(t->fd, F_GETFL), r = 0, e;
	uint8_t junk[4096];
	size_t got;

	if (fl == -1) {
		snprintf(err, len, "TLS close: %s", strerror(errno));
		return -errno;
	}
	fcntl(t->fd, F_SETFL, fl | O_NONBLOCK);
	ERR_clear_error();
	/* 0: our close_notify is out (or queued in the BIO, flushed by the
	 * reads below); then the peer's ends the reads with 1. */
	errno = 0;
	e = SSL_shutdown(t->ssl);
	if (e < 0 && SSL_get_error(t->ssl, e) != SSL_ERROR_WANT_WRITE)
		r = tls_err_map(&t->why, SSL_get_error(t->ssl, e), errno, err,
				len);
	while (!r && e != 1) {
		r = tls_drive(t, junk, sizeof(junk), &got, deadline, err,
			      len);
		if (r == 1) {
			r = 0;
			break;
		}
	}
	fcntl(t->fd, F_SETFL, fl);
	return r;
}

int tls_close_notify(struct dnd_tls *t, char *err, size_t len)
{
	int e;

	ERR_clear_error();
	errno = 0;
	e = SSL_shutdown(t->ssl);
	return e < 0 ? tls_err_map(&t->why, SSL_get_error(t->ssl, e), errno,
				   err, len) : 0;
}

void tls_free(struct dnd_tls *t)
{
	if (!t)
		return;
	SSL_free(t->ssl);
	SSL_CTX_free(t->ctx);
	OPENSSL_cleanse(t->psk, sizeof(t->psk));
	tls_forget_proofs(t);
	free(t);
}

/* ---- what ran ---- */

const char *tls_version(const struct dnd_tls *t)
{
	return SSL_get_version(t->ssl);
}

const char *tls_cipher(const struct dnd_tls *t)
{
	return SSL_get_cipher_name(t->ssl);
}

/* The peer's key share is kept only when (EC)DHE ran: a psk_ke-only
 * handshake would have none on either end. */
const char *tls_group(const struct dnd_tls *t)
{
	EVP_PKEY *pk = NULL;
	const char *name;

	if (SSL_get_peer_tmp_key(t->ssl, &pk) != 1)
		return NULL;
	EVP_PKEY_free(pk);
	name = SSL_group_to_name(t->ssl, SSL_get_negotiated_group(t->ssl));
	return name ? name : "unnamed";
}

bool tls_ktls_tx(const struct dnd_tls *t)
{
	return BIO_get_ktls_send(SSL_get_wbio(t->ssl));
}

bool tls_ktls_rx(const struct dnd_tls *t)
{
	return BIO_get_ktls_recv(SSL_get_rbio(t->ssl));
}

const char *tls_ktls_why(const struct dnd_tls *t)
{
	return t->ktls_why;
}

const char *tls_auth(const struct dnd_tls *t)
{
	return !t->have_cert ? "psk" : t->have_psk ? "psk+cert" : "cert";
}

int tls_export(const struct dnd_tls *t, const char *label, uint8_t *out,
	       size_t n, char *err, size_t len)
{
	if (n > DND_TLS_EXPORT_MAX || !label ||
	    SSL_export_keying_material(t->ssl, out, n, label, strlen(label),
				       NULL, 0, 0) != 1) {
		ERR_clear_error();
		snprintf(err, len, "cannot export %zu bytes of TLS keying "
				   "material", n);
		return -EINVAL;
	}
	return 0;
}
