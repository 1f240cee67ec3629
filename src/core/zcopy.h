/* SPDX-License-Identifier: MIT */
/*
 * MSG_ZEROCOPY completions as they come off a socket's error queue, for
 * IPv4 and IPv6 sockets alike.
 */
#ifndef DND_ZCOPY_H
#define DND_ZCOPY_H

#include <sys/socket.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Send calls lo..hi (the socket's 32-bit counter of MSG_ZEROCOPY sends,
 * which wraps) have let go of their pages. The kernel coalesces
 * consecutive completions into one range.
 */
struct zcopy_done {
	uint32_t lo, hi;
	bool copied;		/* SO_EE_CODE_ZEROCOPY_COPIED: the kernel
				 * copied the data after all */
};

/*
 * Parses one message that recvmsg(MSG_ERRQUEUE) returned: its IP_RECVERR
 * (IPv4) or IPV6_RECVERR (IPv6, and IPv4-mapped on an IPv6 socket) control
 * message. Returns 1 with *d filled when it is a MSG_ZEROCOPY completion,
 * 0 when the message holds none (another origin, no such control message,
 * or one cut shorter than struct sock_extended_err), or -errno when the
 * kernel reported a failed completion (ee_errno). Reads msg only.
 */
int zcopy_parse(struct msghdr *msg, struct zcopy_done *d);

/* How many send calls d covers: 1 to 2^32. */
uint64_t zcopy_calls(const struct zcopy_done *d);

#endif
