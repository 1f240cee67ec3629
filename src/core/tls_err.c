// SPDX-License-Identifier: MIT
/*
 * TLS failures in dnd's words. OpenSSL reports a wrong PSK as a binder that
 * does not verify (server) and a decrypt_error alert (client), a refused
 * certificate as a verify failure here and an alert over there; each pair
 * becomes one message per end that names the cause and the fix.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "core/tls_err.h"

#define AUTH "authentication failed: "

/* The verdict of this end's own check of the peer's certificate. */
static int tls_err_verify(const struct tls_why *w, char *err, size_t len)
{
	/* Key only: the server declined the PSK and showed a certificate. */
	if (!w->ca) {
		snprintf(err, len, DND_TLS_NOKEY,
			 w->server ? "client" : "server");
		return -EACCES;
	}
	switch (w->verify_err) {
	case X509_V_ERR_CERT_HAS_EXPIRED:
		snprintf(err, len,
			 "the peer's certificate has expired (notAfter %s)",
			 w->not_after);
		break;
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
	case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
	case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
	case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
	case X509_V_ERR_CERT_SIGNATURE_FAILURE:
		snprintf(err, len,
			 "the peer's certificate does not chain to --ca %s",
			 w->ca);
		break;
	default:
		snprintf(err, len, "the peer's certificate was refused: %s",
			 X509_verify_cert_error_string(w->verify_err));
	}
	return -EACCES;
}

/* Reasons with a message of their own; 0 when the reason has none. */
static int tls_err_reason(const struct tls_why *w, int reason, char *err,
			  size_t len)
{
	const char *peer = w->server ? "client" : "server";

	switch (reason) {
	case SSL_R_BINDER_DOES_NOT_VERIFY:
		snprintf(err, len, DND_TLS_NOKEY, peer);
		return -EACCES;
	case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
	case SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER:
		/* OpenSSL 3.0 answers a binder that does not verify with
		 * illegal_parameter, later ones with decrypt_error. */
		if (!w->psk || w->server)
			return 0;
		snprintf(err, len, DND_TLS_NOKEY, peer);
		return -EACCES;
	case SSL_R_CERTIFICATE_VERIFY_FAILED:
		return tls_err_verify(w, err, len);
	case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
		snprintf(err, len,
			 "no certificate from the peer (it needs --cert and "
			 "--cert-key)");
		return -EACCES;
	case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
		snprintf(err, len,
			 AUTH "the %s requires a certificate; give --cert and "
			 "--cert-key", peer);
		return -EACCES;
	case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
		snprintf(err, len,
			 AUTH "the %s refused our certificate: it has expired; "
			 "renew --cert", peer);
		return -EACCES;
	case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
		snprintf(err, len,
			 AUTH "the %s refused our certificate: it does not "
			 "chain to the %s's --ca", peer, peer);
		return -EACCES;
	case SSL_R_UNEXPECTED_EOF_WHILE_READING:
		snprintf(err, len, "the connection was cut before TLS closed");
		return -ECONNABORTED;
	case SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC:
		snprintf(err, len,
			 "a TLS record failed its check (bad record mac): the "
			 "data was changed on the way");
		return -EBADMSG;
	case SSL_R_SSLV3_ALERT_BAD_RECORD_MAC:
		snprintf(err, len,
			 "a TLS record failed the peer's check (bad record "
			 "mac): the data was changed on the way");
		return -EBADMSG;
	}
	return 0;
}

int tls_err_map(const struct tls_why *w, int ssl_err, int sys_errno,
		char *err, size_t len)
{
	unsigned long e, first = 0;
	char buf[256];
	int ret = 0;

	/* The first SSL reason with a message wins; the queue is drained so
	 * that the next call on this thread starts clean. */
	while ((e = ERR_get_error())) {
		if (!first)
			first = e;
		if (!ret && ERR_GET_LIB(e) == ERR_LIB_SSL)
			ret = tls_err_reason(w, ERR_GET_REASON(e), err, len);
	}
	if (ret)
		return ret;
	if (ssl_err == SSL_ERROR_SYSCALL && sys_errno) {
		snprintf(err, len, "TLS connection: %s", strerror(sys_errno));
		return -sys_errno;
	}
	if (ssl_err == SSL_ERROR_SYSCALL || ssl_err == SSL_ERROR_ZERO_RETURN) {
		snprintf(err, len, "the connection was cut before TLS closed");
		return -ECONNABORTED;
	}
	if (first) {
		ERR_error_string_n(first, buf, sizeof(buf));
		snprintf(err, len, "TLS failed: %s", buf);
	} else {
		snprintf(err, len, "TLS failed (OpenSSL error %d)", ssl_err);
	}
	return -EPROTO;
}
