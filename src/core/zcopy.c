// SPDX-License-Identifier: MIT
/*
 * MSG_ZEROCOPY completions: a sock_extended_err behind SOL_IP/IP_RECVERR on
 * an IPv4 socket, behind SOL_IPV6/IPV6_RECVERR on an IPv6 one (msg_zerocopy
 * selftest). Checking only the first misses every IPv6 completion.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/errqueue.h>
#include <string.h>

#include "core/zcopy.h"

static bool zcopy_is_recverr(const struct cmsghdr *cm)
{
	return (cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
	       (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR);
}

int zcopy_parse(struct msghdr *msg, struct zcopy_done *d)
{
	struct sock_extended_err ee;
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		/* A short msg_control cuts the offender's address that
		 * follows ee (MSG_CTRUNC), not ee itself. */
		if (!zcopy_is_recverr(cm) ||
		    cm->cmsg_len < CMSG_LEN(sizeof(ee)))
			continue;
		/* CMSG_DATA may be unaligned for the struct: copy it out. */
		memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
		if (ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY)
			continue;
		if (ee.ee_errno)
			return -(int)ee.ee_errno;
		d->lo = ee.ee_info;
		d->hi = ee.ee_data;
		d->copied = ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED;
		return 1;
	}
	return 0;
}

uint64_t zcopy_calls(const struct zcopy_done *d)
{
	return (uint64_t)(uint32_t)(d->hi - d->lo) + 1;
}
