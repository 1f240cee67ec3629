// SPDX-License-Identifier: MIT
/*
 * The live kernel TLS check: is the "tls" ULP listed, does it attach to a
 * connected TCP socket, and was OpenSSL built to use it.
 */
#include <sys/socket.h>
#include <sys/utsname.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/opensslv.h>
#include <openssl/ssl.h>

#include "core/kernel.h"
#include "core/tls_ktls.h"

#define ULP_FILE "/proc/sys/net/ipv4/tcp_available_ulp"

static bool ktls_listed(void)
{
	char buf[256], *tok, *save = NULL;

	if (kernel_read_file(ULP_FILE, buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save))
		if (!strcmp(tok, "tls"))
			return true;
	return false;
}

/* The real test: the ULP attaches only to an ESTABLISHED TCP socket, and a
 * loopback connect() is established once it returns, before any accept. */
static int ktls_attach(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int lfd, fd = -1, err = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd == -1)
		return -errno;
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    listen(lfd, 1) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) == -1)
		goto fail;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1 || connect(fd, (struct sockaddr *)&a, sizeof(a)) == -1)
		goto fail;
	if (setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls")) == -1)
		goto fail;
	goto out;
fail:
	err = -errno;
out:
	if (fd != -1)
		close(fd);
	close(lfd);
	return err;
}

/* A modular kernel may hold tls.ko without having loaded it. */
static bool ktls_module_exists(void)
{
	static const char *const ext[] = { "", ".xz", ".zst", ".gz" };
	struct utsname u;
	char p[512];

	if (uname(&u) == -1)
		return false;
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(p, sizeof(p), "/lib/modules/%s/kernel/net/tls/tls.ko%s",
			 u.release, ext[i]);
		if (access(p, F_OK) == 0)
			return true;
	}
	return false;
}

static int ktls_kernel_why(const struct tls_ktls_info *k, char *why,
			   size_t len)
{
	if (!k->ulp_err) {
		snprintf(why, len, "the kernel's tls ULP attaches to TCP%s",
			 k->ulp_listed ? "" : " (its module was loaded now)");
		return 0;
	}
	if (k->ulp_err != -ENOENT) {
		snprintf(why, len, "setsockopt(TCP_ULP, \"tls\"): %s",
			 strerror(-k->ulp_err));
		return k->ulp_err;
	}
	if (ktls_module_exists())
		snprintf(why, len,
			 "tls module not loaded and not loadable by this "
			 "process; run 'modprobe tls' as root");
	else
		snprintf(why, len,
			 "CONFIG_TLS absent (no tls in " ULP_FILE
			 ", and TCP_ULP \"tls\" gives ENOENT)");
	return -ENOSYS;
}

#define KTLS_NO "no kernel TLS: "

const char *tls_ktls_reason(const char *why)
{
	return strncmp(why, KTLS_NO, strlen(KTLS_NO)) ? why :
	       why + strlen(KTLS_NO);
}

int tls_ktls_check(struct tls_ktls_info *k, char *why, size_t len)
{
	char kwhy[256];
	int err;

	k->ulp_listed = ktls_listed();
	k->ulp_err = ktls_attach();
#ifdef OPENSSL_NO_KTLS
	k->openssl = false;
#else
	k->openssl = true;
#endif
	err = ktls_kernel_why(k, kwhy, sizeof(kwhy));
	if (err) {
		snprintf(why, len, KTLS_NO "%s", kwhy);
		return err;
	}
	if (!k->openssl) {
		snprintf(why, len,
			 KTLS_NO "%s, but %s was built without kTLS "
			 "(OPENSSL_NO_KTLS)",
			 kwhy, OpenSSL_version(OPENSSL_VERSION));
		return -EOPNOTSUPP;
	}
	snprintf(why, len, "kernel TLS: %s and %s has kTLS", kwhy,
		 OpenSSL_version(OPENSSL_VERSION));
	return 0;
}
