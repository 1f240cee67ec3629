/* SPDX-License-Identifier: MIT */
/*
 * A TLS session's insides, shared by tls.c (the handshake and the data)
 * and tls_ctx.c (what the session authenticates with: the key file as an
 * external PSK, certificates, the OpenSSL context). Nothing else uses it:
 * the rest of dnd sees struct dnd_tls only through tls.h.
 */
#ifndef DND_TLS_CTX_H
#define DND_TLS_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "core/tls.h"
#include "core/tls_err.h"

/* The PSK's HKDF label (tls_psk_derive) and identity. PSK binders are
 * SHA-256 ones, hence the session's TLS_AES_128_GCM_SHA256. */
#define TLS_PSK_INFO	"dnd tls13 external psk v1"
#define TLS_PSK_ID	"dnd1"
#define TLS_PSK_LEN	DND_TLS_PSK_LEN
#define TLS_SUITES	"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:" \
			"TLS_CHACHA20_POLY1305_SHA256"
/* With certificates and a key, each end proves the key over the session. */
#define TLS_CONFIRM	"dnd psk confirm v1"
#define TLS_PROOF_LEN	32
/* Records in user space gather up to this much ciphertext per send() and
 * come in up to this much per recv(): one system call per 16 KiB record,
 * two on the receiver (header, then body), cost more than the copy. */
#define TLS_BATCH	(256 * 1024)

/* How far tls_step() has come. */
enum tls_stage {
	TLS_ST_HANDSHAKE = 0,
	TLS_ST_PROVE,		/* certificates and a key: our proof out */
	TLS_ST_CHECK,		/* the peer's proof in */
	TLS_ST_DONE,
};

struct dnd_tls {
	SSL_CTX *ctx;
	SSL *ssl;
	int fd;
	bool have_psk, have_cert;
	bool gather;		/* the write BIO gathers records: flush them */
	uint8_t psk[TLS_PSK_LEN];	/* wiped once the handshake is done */
	enum tls_stage stage;
	uint8_t mine[TLS_PROOF_LEN], want[TLS_PROOF_LEN], got[TLS_PROOF_LEN];
	size_t got_len;
	struct tls_why why;
	char ktls_why[320];
};

enum tls_op {
	DND_TLS_HANDSHAKE = 0,
	DND_TLS_READ,
	DND_TLS_PEEK,		/* a read that leaves the bytes to the next */
	DND_TLS_WRITE,
	DND_TLS_FLUSH,		/* the records gathered in the write BIO */
};

/* t->ctx for cfg: TLS 1.3 only, with the PSK's callbacks, or with
 * certs the peer's verification and this end's chain. 0 or -errno with
 * err saying the cause and the fix. */
int tls_ctx_setup(struct dnd_tls *t, const struct dnd_tls_cfg *cfg,
		  bool certs, char *err, size_t len);

#endif
