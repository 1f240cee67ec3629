/* SPDX-License-Identifier: MIT */
/*
 * Multipath TCP (--mptcp): whether this kernel makes IPPROTO_MPTCP sockets,
 * whether a connection kept MPTCP or fell back to plain TCP (a peer
 * without it), and its subflows with the bytes each carried. Apart from
 * net.h: it needs the kernel's struct tcp_info (bytes counters), which
 * glibc's lacks.
 */
#ifndef DND_NET_MPTCP_H
#define DND_NET_MPTCP_H

#include <sys/socket.h>
#include <stddef.h>
#include <stdint.h>

/*
 * 0 when an MPTCP socket can be made here, else -errno with the cause and
 * the fix in err: no CONFIG_MPTCP (EPROTONOSUPPORT), or net.mptcp.enabled
 * = 0 in this network namespace (ENOPROTOOPT).
 */
int net_mptcp_check(char *err, size_t len);

/* Where the kernel says whether MPTCP is on (per network namespace). */
#define NET_MPTCP_ENABLED "/proc/sys/net/mptcp/enabled"

/* The in-kernel path manager's limits as they apply to one connection
 * (MPTCP_INFO): what `ip mptcp limits` sets, plus the signal endpoints. */
struct net_mptcp_limits {
	unsigned int subflows_max;		/* ip mptcp limits ... subflow */
	unsigned int add_addr_accepted_max;	/* ... add_addr_accepted */
	unsigned int add_addr_signal_max;	/* "signal" endpoints */
};

/* Fills *l from MPTCP connection fd. 0, or -errno (a fallen-back one:
 * -ENOPROTOOPT or -EOPNOTSUPP). */
int net_mptcp_limits(int fd, struct net_mptcp_limits *l);

/*
 * 1: fd's connection runs MPTCP; 0: plain TCP (a peer without MPTCP, so
 * the kernel fell back, or a socket that never asked for it). From
 * TCP_IS_MPTCP, which a fallen-back socket passes to its TCP subflow.
 */
int net_mptcp_active(int fd);

struct net_subflow {
	struct sockaddr_storage local, remote;	/* family 0: not known */
	uint64_t bytes_acked;		/* this subflow's tcpi_bytes_acked:
					 * what it sent that arrived */
	uint64_t bytes_received;	/* its tcpi_bytes_received */
};

/*
 * The subflows of MPTCP connection fd (MPTCP_TCPINFO and
 * MPTCP_SUBFLOW_ADDRS), the first max of them into sf (zeroed first).
 * Returns how many the connection has (more than max: only max were
 * filled), or -errno
 * (-EOPNOTSUPP or -ENOPROTOOPT: it fell back to TCP).
 */
int net_mptcp_subflows(int fd, struct net_subflow *sf, unsigned int max);

#endif
