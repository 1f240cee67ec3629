/* SPDX-License-Identifier: MIT */
/*
 * Where a TCP stream stands, from TCP_INFO fields that glibc's struct
 * tcp_info lacks (so this is apart from net.h, which uses glibc's).
 */
#ifndef DND_NET_BYTES_H
#define DND_NET_BYTES_H

#include <stdint.h>

/*
 * tcpi_bytes_acked (what the peer acknowledged; a connecting socket's SYN
 * counts one) and tcpi_bytes_received (what arrived in order; a FIN counts
 * one) of socket fd. Returns 0 or -errno.
 */
int net_tcp_bytes(int fd, uint64_t *acked, uint64_t *received);

#endif
