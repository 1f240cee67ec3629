/* SPDX-License-Identifier: MIT */
/*
 * Sockets whose bytes go through TLS in user space. Once a TLS session is
 * attached to a connected socket, every framed message (net_send_all,
 * net_recv_all) and every payload byte a method moves through user memory
 * (io_read, io_write, io_recv, io_send) on that fd is a TLS record, as kernel
 * TLS would make the fd itself: the callers above core/ do not change. A
 * method that moves bytes without user memory (sendfile, splice, vmsplice,
 * MSG_ZEROCOPY, io_uring's socket ops) would bypass it, so those are refused
 * with a key unless the kernel does the TLS (tls_ktls_tx/rx).
 *
 * Attach before the threads that use the fd start and detach after they
 * end: the table is read without a lock.
 */
#ifndef DND_CHAN_H
#define DND_CHAN_H

#include <sys/types.h>
#include <stddef.h>

struct dnd_tls;

#define DND_CHAN_MAX	65536	/* fds at or past this cannot carry TLS */

/* Attaches t to fd (t stays the caller's). 0, -EBADF or -EMFILE. */
int chan_attach(int fd, struct dnd_tls *t);

/* Detaches fd's session and returns it (NULL: none), for tls_free(). */
struct dnd_tls *chan_detach(int fd);

/* fd's session, or NULL for a plain socket (or any other fd). */
struct dnd_tls *chan_tls(int fd);

/* The sentence of fd's last TLS failure ("" if none): tls_read() and
 * tls_write() say more than their -errno does. */
const char *chan_err(int fd);

/* One tls_read()/tls_write() on an attached fd, its error kept for
 * chan_err(). Returns as those do (0 from chan_read: close_notify). */
ssize_t chan_read(int fd, void *buf, size_t n);
ssize_t chan_write(int fd, const void *buf, size_t n);

/* Sends fd's close_notify, not waiting for the peer's (tls_close_notify).
 * 0, or -errno with chan_err(fd) set; 0 on a plain socket. */
int chan_close_notify(int fd);

/* Frees fd's session, if any, and closes fd. */
void chan_close(int fd);

#endif
