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
 * One call, retried on a non-blocking fd until it completes or deadline.
 * Returns 0 (*done bytes moved), 1 for close_notify, or -errno with err.
 */
static int tls_drive(struct dnd_tls *t, enum tls_op op, void *buf, size_t n,
		     size_t *done, double deadline, char *err, size_t len)
{
	int r, e, sys;

	for (;;) {
		r = tls_call(t, op, buf, n, done);
		sys = errno;
		if (r == 1)
			return 0;
		e = tls_error(t, op, r);
		if (e == SSL_ERROR_ZERO_RETURN && op == DND_TLS_READ)
			return 1;
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
			r = net_wait_by(t->fd,
				     e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
				     deadline);
		else
			return tls_err_map(&t->why, e, sys, err, len);
		if (r == -ETIMEDOUT)
			snprintf(err, len, "TLS %s timed out",
				 op == DND_TLS_HANDSHAKE ? "handshake"
							 : "close");
		else if (r)
			snprintf(err, len, "TLS: %s", strerror(-r));
		if (r)
			return r;
	}
}

static int tls_drive_all(struct dnd_tls *t, enum tls_op op, uint8_t *buf,
			 size_t n, double deadline, char *err, size_t len)
{
	size_t off = 0, got;
	int r;

	while (off < n) {
		r = tls_drive(t, op, buf + off, n - off, &got, deadline, err,
			      len);
		if (r == 1) {
			snprintf(err, len, "the peer closed TLS during the "
					   "handshake");
			return -ECONNABORTED;
		}
		if (r)
			return r;
		off += got;
	}
	return 0;
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

/* Certificates and a key: each end sends its proof of the key, bound to
 * this session, and checks the peer's. Both write first, so a wrong key is
 * seen on both ends. */
static int tls_confirm(struct dnd_tls *t, double deadline, char *err,
		       size_t len)
{
	uint8_t mine[TLS_PROOF_LEN], want[TLS_PROOF_LEN], got[TLS_PROOF_LEN];
	bool server = t->why.server;
	int r;

	if (tls_proof(t, server, mine) || tls_proof(t, !server, want)) {
		ERR_clear_error();
		snprintf(err, len, "cannot derive the key's proof");
		return -EPROTO;
	}
	r = tls_drive_all(t, DND_TLS_WRITE, mine, sizeof(mine), deadline, err,
			  len);
	if (!r)
		r = tls_drive_all(t, DND_TLS_READ, got, sizeof(got), deadline,
				  err, len);
	if (!r && CRYPTO_memcmp(got, want, sizeof(want))) {
		snprintf(err, len, DND_TLS_NOKEY, server ? "client" :
			 "server");
		r = -EACCES;
	}
	OPENSSL_cleanse(mine, sizeof(mine));
	OPENSSL_cleanse(want, sizeof(want));
	return r;
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

static int tls_setup(struct dnd_tls *t, const struct dnd_tls_cfg *cfg,
		     char *err, size_t len)
{
	bool certs = cfg->cert || cfg->cert_key || cfg->ca;
	int r;

	if (!certs && !cfg->psk) {
		snprintf(err, len, "TLS needs a key (--key) or certificates "
				   "(--cert, --cert-key, --ca)");
		return -EINVAL;
	}
	if (cfg->psk && (cfg->psk_len < 16 || cfg->psk_len > 1024)) {
		snprintf(err, len, "a TLS key is 16 to 1024 bytes, not %zu",
			 cfg->psk_len);
		return -EINVAL;
	}
	t->why.server = cfg->server;
	t->why.psk = t->have_psk = cfg->psk;
	t->have_cert = certs;
	t->why.ca = cfg->ca;
	t->why.verify_err = X509_V_OK;
	if (cfg->psk && tls_psk_derive(t, cfg->psk, cfg->psk_len)) {
		ERR_clear_error();
		snprintf(err, len, "cannot derive the TLS key (HKDF-SHA256)");
		return -EPROTO;
	}
	r = tls_ctx_setup(t, cfg, certs, err, len);
	if (r)
		return r;
	t->ssl = SSL_new(t->ctx);
	if (!t->ssl || !SSL_set_fd(t->ssl, t->fd) ||
	    !SSL_set_app_data(t->ssl, t)) {
		ERR_clear_error();
		snprintf(err, len, "cannot set up a TLS session in OpenSSL");
		return -ENOMEM;
	}
	if (cfg->server)
		SSL_set_accept_state(t->ssl);
	else
		SSL_set_connect_state(t->ssl);
	r = tls_drive(t, DND_TLS_HANDSHAKE, NULL, 0, NULL, cfg->deadline, err,
		      len);
	if (!r && !certs && !SSL_session_reused(t->ssl)) {
		snprintf(err, len, DND_TLS_NOKEY,
			 cfg->server ? "client" : "server");
		return -EACCES;
	}
	if (!r && certs && cfg->psk)
		r = tls_confirm(t, cfg->deadline, err, len);
	return r;
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

int tls_open(struct dnd_tls **out, int fd, const struct dnd_tls_cfg *cfg,
	     char *err, size_t len)
{
	struct dnd_tls *t = calloc(1, sizeof(*t));
	int fl = fcntl(fd, F_GETFL), r;

	*out = NULL;
	if (!t || fl == -1) {
		r = t ? -errno : -ENOMEM;
		snprintf(err, len, "TLS: %s", strerror(-r));
		free(t);
		return r;
	}
	t->fd = fd;
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	r = tls_setup(t, cfg, err, len);
	fcntl(fd, F_SETFL, fl);
	if (!r)
		r = tls_batch(t, err, len);
	if (r) {
		tls_free(t);
		return r;
	}
	tls_ktls_explain(t);
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
 * it instead of the reset when it says so.
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
	a = tls_io(t, DND_TLS_READ, &b, 1, why, sizeof(why));
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
		r = tls_drive(t, DND_TLS_READ, junk, sizeof(junk), &got,
			      deadline, err, len);
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
