/* SPDX-License-Identifier: MIT */
/*
 * dnd's one wrapper around OpenSSL 3: a TLS 1.3 session over a connected
 * TCP socket, authenticated by the key file (an external PSK, always with
 * (EC)DHE), by certificates (mutual TLS against --ca), or by both.
 */
#ifndef DND_TLS_H
#define DND_TLS_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exporter labels of at most this many bytes; outputs of at most 64. */
#define DND_TLS_EXPORT_MAX 64

/* The external PSK: HKDF-SHA256 of the key file (tls_psk_derive). */
#define DND_TLS_PSK_LEN 32

/* What a session authenticates with. Strings are borrowed for tls_open(). */
struct dnd_tls_cfg {
	bool server;
	const uint8_t *psk;	/* DND_TLS_PSK_LEN bytes from tls_psk_derive()
				 * (a key file's), or NULL */
	const char *cert;	/* PEM chain, this end's certificate first */
	const char *cert_key;	/* PEM private key of cert */
	const char *ca;		/* PEM: the peer must chain to one of these */
	double deadline;	/* stats_now() seconds for the handshake */
};

struct dnd_tls;

/*
 * The external PSK from a key file's n bytes: HKDF-SHA256 under a label of
 * dnd's own, so that the file's bytes never serve two purposes. Done once
 * per process, so that the file's bytes can be wiped at once. 0 or -EPROTO.
 */
int tls_psk_derive(const uint8_t *key, size_t n,
		   uint8_t psk[DND_TLS_PSK_LEN]);

/*
 * Runs the TLS 1.3 handshake on fd (connected TCP, blocking or not) until
 * cfg->deadline. PSK only: cfg->psk is the external PSK, psk_dhe_ke only. With certificates: mutual TLS, and with a key as well
 * each end then proves it holds the key, bound to this session's exporter.
 * fd is non-blocking during the handshake and back in its own mode after;
 * the caller keeps owning it (tls_free() does not close it) and must ignore
 * SIGPIPE. A peer that rejects this end's certificate in TLS 1.3 says so
 * after its handshake ended here: the first tls_read() reports it.
 * Returns 0 with *out set; else *out is NULL, err says the cause and the
 * fix, and the result is -EINVAL (configuration or unreadable files),
 * -EACCES (authentication failed: wrong key, refused certificate),
 * -ETIMEDOUT, -EINTR (io_stop_signal), -ECONNRESET/-ECONNABORTED (peer
 * gone) or -EPROTO (another TLS failure).
 */
int tls_open(struct dnd_tls **out, int fd, const struct dnd_tls_cfg *cfg,
	     char *err, size_t len);

/*
 * The same handshake for a poll loop. tls_start() sets the session up on
 * fd without any I/O (0, or as tls_open() with *out NULL); fd must then be
 * non-blocking until tls_step() has returned 0. tls_step() goes as far as
 * fd allows: 0 once the peer is authenticated; -EAGAIN with *events
 * (POLLIN or POLLOUT) to poll fd for before the next call; or as
 * tls_open() (then tls_free() it). The deadline is the caller's to keep.
 */
int tls_start(struct dnd_tls **out, int fd, const struct dnd_tls_cfg *cfg,
	      char *err, size_t len);
int tls_step(struct dnd_tls *t, short *events, char *err, size_t len);

/*
 * Moves up to n bytes of plaintext. Returns the count; tls_read() returns 0
 * only for the peer's close_notify. Otherwise -errno with err set:
 * -ECONNABORTED when TCP ended without close_notify ("the connection was
 * cut before TLS closed"), -EBADMSG when a record fails its check,
 * -EACCES when the peer refused this end's certificate, -EAGAIN when fd is
 * non-blocking and not ready, -EINTR, or -EPIPE/-ECONNRESET/-EPROTO.
 */
ssize_t tls_read(struct dnd_tls *t, void *buf, size_t n, char *err,
		 size_t len);
ssize_t tls_write(struct dnd_tls *t, const void *buf, size_t n, char *err,
		  size_t len);

/*
 * Sends close_notify and waits until deadline for the peer's, discarding
 * data that arrives first. Returns 0, -ETIMEDOUT, -EINTR or as tls_read().
 */
int tls_shutdown(struct dnd_tls *t, double deadline, char *err, size_t len);

/*
 * Sends this end's close_notify and returns without waiting for the
 * peer's: a half close, after which tls_read() still works. 0 or as
 * tls_write().
 */
int tls_close_notify(struct dnd_tls *t, char *err, size_t len);

/* Frees the session; NULL is fine; fd stays open. */
void tls_free(struct dnd_tls *t);

/* "TLSv1.3", "TLS_AES_128_GCM_SHA256"; valid until tls_free(). */
const char *tls_version(const struct dnd_tls *t);
const char *tls_cipher(const struct dnd_tls *t);

/* The key exchange group ("x25519"), or NULL when none ran. */
const char *tls_group(const struct dnd_tls *t);

/* Whether the kernel encrypts (tx) or decrypts (rx) this session's records,
 * and, when either does not, why (the kernel's or OpenSSL's reason). */
bool tls_ktls_tx(const struct dnd_tls *t);
bool tls_ktls_rx(const struct dnd_tls *t);
const char *tls_ktls_why(const struct dnd_tls *t);

/* What authenticated the peer: "psk" (--key), "cert" (--cert, --cert-key,
 * --ca) or "psk+cert" (both). */
const char *tls_auth(const struct dnd_tls *t);

/*
 * n (<= DND_TLS_EXPORT_MAX) bytes of keying material for label, the same on
 * both ends of one session and unrelated in any other (RFC 8446 7.5).
 * Returns 0, or -EINVAL with err set.
 */
int tls_export(const struct dnd_tls *t, const char *label, uint8_t *out,
	       size_t n, char *err, size_t len);

#endif
