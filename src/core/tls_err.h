/* SPDX-License-Identifier: MIT */
/*
 * What went wrong in a TLS session, in one sentence with the fix: OpenSSL's
 * error queue, its alerts and the certificate verdict mapped to dnd's
 * messages (tls.c's only helper for errors).
 */
#ifndef DND_TLS_ERR_H
#define DND_TLS_ERR_H

/* A peer without our key: the message (its %s names the peer) and the
 * likely fix, the same whichever end failed, so it tells an attacker
 * nothing the failure does not. */
#define DND_TLS_NOKEY	"authentication failed: the %s does not hold this " \
			"key; both ends need the same key file ('dnd serve " \
			"--new-key FILE' makes one)"

#include <stdbool.h>
#include <stddef.h>

/* What the sentence depends on besides OpenSSL's queue. */
struct tls_why {
	bool server;		/* this end is the server */
	bool psk;		/* a key file is in use */
	const char *ca;		/* --ca, or NULL */
	long verify_err;	/* X509_V_OK, or the first refusal of the
				 * peer's certificate here */
	char not_after[40];	/* that certificate's notAfter, ISO 8601 */
};

/*
 * Maps a failed SSL call (ssl_err from SSL_get_error(), sys_errno the errno
 * right after the call) to -errno and a sentence in err, draining OpenSSL's
 * error queue of this thread. Returns -EACCES (authentication), -EBADMSG
 * (a record failed its check), -ECONNABORTED (TCP ended before
 * close_notify), the socket's -errno, or -EPROTO.
 */
int tls_err_map(const struct tls_why *w, int ssl_err, int sys_errno,
		char *err, size_t len);

#endif
