// SPDX-License-Identifier: MIT
/* TCP_INFO's byte counters, with the kernel's struct tcp_info. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "core/net_bytes.h"

int net_tcp_bytes(int fd, uint64_t *acked, uint64_t *received)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -errno;
	if (len < offsetof(struct tcp_info, tcpi_bytes_received) +
		  sizeof(ti.tcpi_bytes_received))
		return -EOPNOTSUPP;
	*acked = ti.tcpi_bytes_acked;
	*received = ti.tcpi_bytes_received;
	return 0;
}
