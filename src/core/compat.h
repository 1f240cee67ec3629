/* SPDX-License-Identifier: MIT */
/*
 * Fallbacks for UAPI constants newer than the build host's headers (Debian
 * 12 ships linux-libc-dev 6.1 and liburing 2.3). The values are kernel ABI;
 * whether the running kernel knows them is found out at run time.
 */
#ifndef DND_COMPAT_H
#define DND_COMPAT_H

#include <sys/socket.h>
#include <linux/errqueue.h>

/* MSG_ZEROCOPY and its completions on the error queue: Linux 4.14. */
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

/* getsockopt(TCP_ZEROCOPY_RECEIVE): Linux 4.18. */
#ifndef TCP_ZEROCOPY_RECEIVE
#define TCP_ZEROCOPY_RECEIVE 35
#endif

#ifdef DND_HAVE_LIBURING
#include <liburing.h>

/*
 * liburing 2.3's io_uring.h predates the SEND_ZC usage report (Linux 6.2):
 * with REPORT_USAGE set, a notification's res carries ZC_COPIED when the
 * kernel copied the data after all (as it does on loopback).
 */
#ifndef IORING_SEND_ZC_REPORT_USAGE
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3)
#endif
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31)
#endif
#endif /* DND_HAVE_LIBURING */

#endif
