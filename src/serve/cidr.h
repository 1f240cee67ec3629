/* SPDX-License-Identifier: MIT */
/* dnd serve --allow: a list of address prefixes, and whether a peer is in. */
#ifndef DND_CIDR_H
#define DND_CIDR_H

#include <sys/socket.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DND_CIDR_MAX	32

struct cidr {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
	unsigned int bits;
};

struct cidr_list {
	unsigned int n;
	struct cidr c[DND_CIDR_MAX];
};

/* Parses "A[/BITS][,A[/BITS]...]" (IPv4 or IPv6; no /BITS: the whole
 * address) into l. Returns 0 or -EINVAL with why naming the bad item. */
int cidr_parse(struct cidr_list *l, const char *spec, char *why, size_t len);

/* True when the peer's address is inside one of l's prefixes; an IPv4
 * peer seen as ::ffff:a.b.c.d matches IPv4 prefixes. */
bool cidr_match(const struct cidr_list *l, const struct sockaddr *sa,
		socklen_t sl);

#endif
