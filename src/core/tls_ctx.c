// SPDX-License-Identifier: MIT
/*
 * What a TLS session authenticates with (tls_ctx.h): the key file as an
 * external PSK, certificates against --ca, and the OpenSSL context.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "core/tls_ctx.h"

/* ---- the key file as an external PSK ---- */

int tls_psk_derive(const uint8_t *key, size_t n, uint8_t psk[DND_TLS_PSK_LEN])
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *kc = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
						 "SHA256", 0),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
						  (void *)key, n),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
						  TLS_PSK_INFO,
						  sizeof(TLS_PSK_INFO) - 1),
		OSSL_PARAM_construct_end(),
	};
	int ok = kc && EVP_KDF_derive(kc, psk, DND_TLS_PSK_LEN, p) == 1;

	EVP_KDF_CTX_free(kc);
	EVP_KDF_free(kdf);
	if (!ok)
		ERR_clear_error();
	return ok ? 0 : -EPROTO;
}

static SSL_SESSION *tls_psk_session(SSL *ssl)
{
	static const unsigned char aes128gcm[] = { 0x13, 0x01 };
	struct dnd_tls *t = SSL_get_app_data(ssl);
	const SSL_CIPHER *c = SSL_CIPHER_find(ssl, aes128gcm);
	SSL_SESSION *s = SSL_SESSION_new();

	if (!s || !c || !SSL_SESSION_set1_master_key(s, t->psk, TLS_PSK_LEN) ||
	    !SSL_SESSION_set_cipher(s, c) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return NULL;
	}
	return s;
}

/* Client: offers the PSK; after a HelloRetryRequest md is the suite's hash,
 * and a non-SHA-256 suite cannot use it. */
static int tls_psk_use(SSL *ssl, const EVP_MD *md, const unsigned char **id,
		       size_t *idlen, SSL_SESSION **sess)
{
	*sess = NULL;
	if (md && !EVP_MD_is_a(md, "SHA256"))
		return 1;
	*sess = tls_psk_session(ssl);
	*id = (const unsigned char *)TLS_PSK_ID;
	*idlen = sizeof(TLS_PSK_ID) - 1;
	return *sess != NULL;
}

/* Server: only our identity; OpenSSL then checks the binder, whose failure
 * is the "does not hold this key" of tls_err.c. */
static int tls_psk_find(SSL *ssl, const unsigned char *id, size_t idlen,
			SSL_SESSION **sess)
{
	*sess = NULL;
	if (idlen != sizeof(TLS_PSK_ID) - 1 || memcmp(id, TLS_PSK_ID, idlen))
		return 1;
	*sess = tls_psk_session(ssl);
	return *sess != NULL;
}

/* ---- certificates ---- */

/* Keeps the first refusal and its certificate's notAfter for the message. */
static int tls_verify_cb(int ok, X509_STORE_CTX *xs)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(
		xs, SSL_get_ex_data_X509_STORE_CTX_idx());
	struct dnd_tls *t = ssl ? SSL_get_app_data(ssl) : NULL;
	X509 *x = X509_STORE_CTX_get_current_cert(xs);
	BIO *b;

	if (ok || !t || t->why.verify_err != X509_V_OK)
		return ok;
	t->why.verify_err = X509_STORE_CTX_get_error(xs);
	b = BIO_new(BIO_s_mem());
	if (b && x &&
	    ASN1_TIME_print_ex(b, X509_get0_notAfter(x), ASN1_DTFLGS_ISO8601))
		BIO_read(b, t->why.not_after, sizeof(t->why.not_after) - 1);
	BIO_free(b);
	return ok;
}

static int tls_load(SSL_CTX *ctx, const struct dnd_tls_cfg *cfg, char *err,
		    size_t len)
{
	const char *opt = "--cert", *file = cfg->cert;
	char e[200];

	if (!cfg->cert || !cfg->cert_key || !cfg->ca) {
		snprintf(err, len,
			 "certificates need all of --cert, --cert-key and --ca");
		return -EINVAL;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, file) != 1)
		goto fail;
	opt = "--cert-key";
	file = cfg->cert_key;
	if (SSL_CTX_use_PrivateKey_file(ctx, file, SSL_FILETYPE_PEM) != 1)
		goto fail;
	if (SSL_CTX_check_private_key(ctx) != 1) {
		ERR_clear_error();
		snprintf(err, len, "--cert-key %s is not the key of --cert %s",
			 cfg->cert_key, cfg->cert);
		return -EINVAL;
	}
	opt = "--ca";
	file = cfg->ca;
	if (SSL_CTX_load_verify_locations(ctx, file, NULL) == 1)
		return 0;
fail:
	ERR_error_string_n(ERR_peek_last_error(), e, sizeof(e));
	ERR_clear_error();
	snprintf(err, len, "cannot read %s %s: %s; give a PEM file", opt, file,
		 e);
	return -EINVAL;
}

/* ---- the context ---- */

int tls_ctx_setup(struct dnd_tls *t, const struct dnd_tls_cfg *cfg,
		  bool certs, char *err, size_t len)
{
	int mode = SSL_VERIFY_PEER;

	t->ctx = SSL_CTX_new(cfg->server ? TLS_server_method()
					 : TLS_client_method());
	/* Never SSL_OP_ALLOW_NO_DHE_KEX: a PSK alone (psk_ke) would let a
	 * stolen key file decrypt recorded sessions. */
	if (!t->ctx ||
	    !SSL_CTX_set_min_proto_version(t->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(t->ctx, TLS_SUITES) ||
	    !SSL_CTX_set_num_tickets(t->ctx, 0)) {
		snprintf(err, len, "cannot set up TLS 1.3 in OpenSSL");
		return -ENOMEM;
	}
	SSL_CTX_set_options(t->ctx, SSL_OP_ENABLE_KTLS | SSL_OP_NO_TICKET);
	SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE);
	/* Room for the records tls_batch() reads ahead; allocated by the
	 * handshake, read ahead only after it (kTLS takes no read-ahead). */
	SSL_CTX_set_default_read_buffer_len(t->ctx, TLS_BATCH);
	/* A server that verifies peers refuses to resume (here: to take
	 * the PSK) without a session id context. */
	if (cfg->server &&
	    !SSL_CTX_set_session_id_context(t->ctx, (const unsigned char *)
					    TLS_PSK_ID, sizeof(TLS_PSK_ID) - 1)) {
		snprintf(err, len, "cannot set up TLS 1.3 in OpenSSL");
		return -ENOMEM;
	}
	if (!certs) {
		/* A PSK handshake sends no certificates at all (RFC 8446). A
		 * server that declines the PSK and shows a certificate could
		 * be anyone: with an empty trust store the client refuses it,
		 * and tls_err.c says the server does not hold the key. */
		if (cfg->server)
			SSL_CTX_set_psk_find_session_callback(t->ctx,
							      tls_psk_find);
		else
			SSL_CTX_set_psk_use_session_callback(t->ctx,
							     tls_psk_use);
		SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
		return 0;
	}
	if (cfg->server)
		mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
	SSL_CTX_set_verify(t->ctx, mode, tls_verify_cb);
	return tls_load(t->ctx, cfg, err, len);
}
