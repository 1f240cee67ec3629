// SPDX-License-Identifier: MIT
/* MPTCP sockets: can one be made, did a connection keep it, its subflows. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <linux/mptcp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/kernel.h"
#include "core/net_mptcp.h"

#ifndef TCP_IS_MPTCP
#define TCP_IS_MPTCP 43		/* linux/tcp.h from 5.16 on */
#endif

#define NET_SUBFLOWS_READ 16	/* subflows read at once */

int net_mptcp_check(char *err, size_t len)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_MPTCP);
	int e = errno;
	long long on = -1;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (e == EPROTONOSUPPORT || e == EINVAL) {
		snprintf(err, len, "--mptcp: this kernel has no MPTCP "
			 "(socket(IPPROTO_MPTCP): %s); use a kernel built with "
			 "CONFIG_MPTCP, or drop --mptcp", strerror(e));
		return -e;
	}
	kernel_read_ll(NET_MPTCP_ENABLED, &on);
	if (e == ENOPROTOOPT)
		snprintf(err, len, "--mptcp: MPTCP is off in this network "
			 "namespace (net.mptcp.enabled = %lld); turn it on with "
			 "'sysctl -w net.mptcp.enabled=1', or drop --mptcp", on);
	else
		snprintf(err, len, "--mptcp: cannot make an MPTCP socket: %s; "
			 "drop --mptcp", strerror(e));
	return -e;
}

int net_mptcp_limits(int fd, struct net_mptcp_limits *l)
{
	struct mptcp_info mi;
	socklen_t len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	if (getsockopt(fd, SOL_MPTCP, MPTCP_INFO, &mi, &len))
		return -errno;
	if (len < offsetof(struct mptcp_info, mptcpi_flags))
		return -EOPNOTSUPP;
	l->subflows_max = mi.mptcpi_subflows_max;
	l->add_addr_accepted_max = mi.mptcpi_add_addr_accepted_max;
	l->add_addr_signal_max = mi.mptcpi_add_addr_signal_max;
	return 0;
}

int net_mptcp_active(int fd)
{
	int v = 0;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, IPPROTO_TCP, TCP_IS_MPTCP, &v, &l))
		return 0;
	return v != 0;
}

/*
 * One getsockopt of SOL_MPTCP optname: a struct mptcp_subflow_data, then
 * up to NET_SUBFLOWS_READ elements of elem bytes into buf. Returns the
 * connection's count of subflows, with *got those filled, or -errno.
 */
static int net_subflow_opt(int fd, int optname, void *buf, size_t elem,
			   unsigned int *got)
{
	struct mptcp_subflow_data *d = buf;
	socklen_t l = (socklen_t)(sizeof(*d) + NET_SUBFLOWS_READ * elem);

	memset(buf, 0, l);
	d->size_subflow_data = sizeof(*d);
	d->size_user = (uint32_t)elem;
	if (getsockopt(fd, SOL_MPTCP, optname, buf, &l))
		return -errno;
	*got = l > sizeof(*d) && d->size_user ? (unsigned int)((l - sizeof(*d)) /
						d->size_user) : 0;
	if (*got > NET_SUBFLOWS_READ)
		*got = NET_SUBFLOWS_READ;
	return (int)d->num_subflows;
}

int net_mptcp_subflows(int fd, struct net_subflow *sf, unsigned int max)
{
	struct {
		struct mptcp_subflow_data d;
		struct tcp_info ti[NET_SUBFLOWS_READ];
	} info;
	struct {
		struct mptcp_subflow_data d;
		struct mptcp_subflow_addrs a[NET_SUBFLOWS_READ];
	} addr;
	struct tcp_info t;
	unsigned int ni, na, i;
	size_t have;
	int n;

	memset(sf, 0, max * sizeof(*sf));
	n = net_subflow_opt(fd, MPTCP_TCPINFO, &info, sizeof(info.ti[0]), &ni);
	if (n < 0)
		return n;
	/* The same walk of the same list: entry i is the same subflow in
	 * both answers (a subflow joining in between shows as a count). */
	if (net_subflow_opt(fd, MPTCP_SUBFLOW_ADDRS, &addr,
			    sizeof(addr.a[0]), &na) < 0)
		na = 0;
	/* The kernel's stride is its size_user: ours, or its own struct
	 * tcp_info's size when that is smaller (an older kernel). */
	have = info.d.size_user < sizeof(t) ? info.d.size_user : sizeof(t);
	for (i = 0; i < ni && i < max; i++) {
		memset(&t, 0, sizeof(t));
		memcpy(&t, (const char *)info.ti + (size_t)i * info.d.size_user,
		       have);
		if (have >= offsetof(struct tcp_info, tcpi_bytes_received) +
			    sizeof(t.tcpi_bytes_received)) {
			sf[i].bytes_acked = t.tcpi_bytes_acked;
			sf[i].bytes_received = t.tcpi_bytes_received;
		}
		if (i < na) {
			memcpy(&sf[i].local, &addr.a[i].ss_local,
			       sizeof(sf[i].local));
			memcpy(&sf[i].remote, &addr.a[i].ss_remote,
			       sizeof(sf[i].remote));
		}
	}
	return n;
}
