/* SPDX-License-Identifier: MIT */
/*
 * Can this machine hand TLS records to the kernel? The kernel's "tls" ULP
 * (CONFIG_TLS), tried live, and OpenSSL's kTLS support. Used by tls.c to
 * explain a session that stayed in user space, and by `dnd probe`.
 */
#ifndef DND_TLS_KTLS_H
#define DND_TLS_KTLS_H

#include <stdbool.h>
#include <stddef.h>

struct tls_ktls_info {
	bool ulp_listed;	/* "tls" in /proc/sys/net/ipv4/tcp_available_ulp */
	int ulp_err;		/* setsockopt(TCP_ULP, "tls"): 0 or -errno */
	bool openssl;		/* this OpenSSL was built with kTLS */
};

/*
 * Fills *k and why (what was seen, or why not and the fix). Attaching the
 * ULP is tried on a connected loopback TCP socket, closed before return;
 * that may load the tls module. Returns 0 when the kernel and OpenSSL both
 * can; -ENOSYS when the kernel has no CONFIG_TLS, or its module is not
 * loaded and cannot be; -EOPNOTSUPP when OpenSSL lacks kTLS; another
 * -errno when the ULP is refused otherwise.
 */
int tls_ktls_check(struct tls_ktls_info *k, char *why, size_t len);

/* A why of tls_ktls_check() without its "no kernel TLS: ", for a message
 * that already says so. */
const char *tls_ktls_reason(const char *why);

#endif
