// SPDX-License-Identifier: MIT
/*
 * The method registry: an explicit list rather than constructors, so it can
 * be grepped and nothing depends on link order.
 */
#include <stdio.h>
#include <string.h>

#include "core/tls_ktls.h"
#include "xfer/method.h"

extern const struct dnd_method method_rw;
extern const struct dnd_method method_mmap;
extern const struct dnd_method method_sendfile;
extern const struct dnd_method method_splice;
extern const struct dnd_method method_vmsplice;
extern const struct dnd_method method_null;
extern const struct dnd_method method_zerocopy;
#ifdef DND_HAVE_LIBURING
extern const struct dnd_method method_uring;
extern const struct dnd_method method_uring_splice;
#endif
extern const struct dnd_method method_tcpmmap;

static const struct dnd_method *const methods[] = {
	&method_rw,
	&method_mmap,
	&method_sendfile,
	&method_splice,
	&method_vmsplice,
	&method_null,
	&method_zerocopy,
#ifdef DND_HAVE_LIBURING
	&method_uring,
	&method_uring_splice,
#endif
	&method_tcpmmap,
	NULL,
};

const struct dnd_method *const *method_all(void)
{
	return methods;
}

const struct dnd_method *method_find(const char *name)
{
	const struct dnd_method *const *m;

	for (m = methods; *m; m++)
		if (!strcmp((*m)->name, name))
			return *m;
	return NULL;
}

const char *method_names(bool send, char *buf, size_t len)
{
	const struct dnd_method *const *m;
	size_t off = 0;

	buf[0] = '\0';
	for (m = methods; *m && off < len; m++) {
		if (send ? !(*m)->send : !(*m)->recv)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					off ? ", " : "", (*m)->name);
	}
	return buf;
}

int method_probe(const struct dnd_method *m, char *why, size_t len)
{
	if (len)
		why[0] = '\0';
	return m->probe ? m->probe(why, len) : 0;
}

int method_mptcp(const struct dnd_method *m, bool sender, const char *flag,
		 char *why, size_t len)
{
	const char *w = NULL;

	if (sender && !strcmp(m->name, "zerocopy"))
		w = "MPTCP sockets refuse SO_ZEROCOPY";
	else if (sender && !strcmp(m->name, "uring"))
		w = "MPTCP sockets refuse io_uring's SEND_ZC";
	else if (!sender && !strcmp(m->name, "tcpmmap"))
		w = "TCP_ZEROCOPY_RECEIVE maps plain TCP sockets only";
	if (!w)
		return 0;
	snprintf(why, len, "%s %s cannot %s on an MPTCP socket: %s; use %s %s "
		 "or %s rw", flag, m->name, sender ? "send" : "receive", w,
		 flag, sender ? "sendfile" : "splice", flag);
	return -1;
}

int method_keyed(const struct dnd_method *m, const char *flag, char *why,
		 size_t len)
{
	struct tls_ktls_info k;
	char kwhy[256];
	const char *w;

	if (m->flags & DND_M_USERSOCK)
		return 0;
	/* The kernel encrypts: session_hello() checks that it took the
	 * session. Not testable on a kernel without CONFIG_TLS. */
	if (!tls_ktls_check(&k, kwhy, sizeof(kwhy)))
		return 0;
	w = strstr(kwhy, "CONFIG_TLS absent") ?
	    "this kernel has no CONFIG_TLS" : tls_ktls_reason(kwhy);
	snprintf(why, len, "%s %s with --key needs kernel TLS (%s); use -m "
		 "rw or -m mmap", flag, m->name, w);
	return -1;
}
