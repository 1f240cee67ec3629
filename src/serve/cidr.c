// SPDX-License-Identifier: MIT
/* Address prefixes for dnd serve --allow; see cidr.h. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/cidr.h"

/* One item "ADDR[/BITS]" of n bytes. 0 or -EINVAL. */
static int cidr_one(struct cidr *c, const char *s, size_t n)
{
	char buf[64], *slash, *end;
	unsigned long bits;
	unsigned int max;

	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = 0;
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	memset(c, 0, sizeof(*c));
	if (inet_pton(AF_INET, buf, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else {
		return -EINVAL;
	}
	c->bits = max;
	if (!slash)
		return 0;
	errno = 0;
	bits = strtoul(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end || bits > max)
		return -EINVAL;
	c->bits = (unsigned int)bits;
	return 0;
}

int cidr_parse(struct cidr_list *l, const char *spec, char *why, size_t len)
{
	const char *p = spec;

	l->n = 0;
	for (;;) {
		size_t n = strcspn(p, ",");

		if (l->n == DND_CIDR_MAX) {
			snprintf(why, len, "--allow takes at most %d prefixes",
				 DND_CIDR_MAX);
			return -EINVAL;
		}
		if (cidr_one(&l->c[l->n], p, n)) {
			snprintf(why, len, "--allow: '%.*s' is not an address "
				 "or ADDR/BITS (10.0.0.0/8, fd00::/8)",
				 (int)(n > 64 ? 64 : n), p);
			return -EINVAL;
		}
		l->n++;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static bool cidr_in(const struct cidr *c, const uint8_t *a)
{
	unsigned int full = c->bits / 8, rest = c->bits % 8;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));

	if (memcmp(c->addr, a, full))
		return false;
	return !rest || (c->addr[full] & mask) == (a[full] & mask);
}

bool cidr_match(const struct cidr_list *l, const struct sockaddr *sa,
		socklen_t sl)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	const uint8_t *a;
	int fam = sa->sa_family;
	unsigned int i;

	if (fam == AF_INET && sl >= sizeof(struct sockaddr_in)) {
		a = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	} else if (fam == AF_INET6 && sl >= sizeof(struct sockaddr_in6)) {
		a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		if (!memcmp(a, mapped, sizeof(mapped))) {
			fam = AF_INET;
			a += 12;
		}
	} else {
		return false;
	}
	for (i = 0; i < l->n; i++)
		if (l->c[i].family == fam && cidr_in(&l->c[i], a))
			return true;
	return false;
}
