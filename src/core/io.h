/* SPDX-License-Identifier: MIT */
/*
 * Counted system calls for the data path. Each wrapper makes one call (or
 * retries it after a signal that does not stop the run), adds it to the
 * per-kind counters, and returns the count or -errno. Methods use only these,
 * so "system calls by kind with mean bytes per call" is exact by construction.
 */
#ifndef DND_IO_H
#define DND_IO_H

#include <sys/types.h>
#include <sys/uio.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/stats.h"

/* Set by the SIGINT/SIGTERM handler to the signal number; 0 while running.
 * Every blocking wrapper below returns -EINTR once it is set. */
extern volatile sig_atomic_t io_stop_signal;

/* The connected socket, or -1: the stop handler shuts it down so that a
 * call blocked on it returns at once. */
extern volatile sig_atomic_t io_stop_fd;

/* Installs handlers: SIGINT/SIGTERM/SIGHUP stop the run (no SA_RESTART, so
 * blocking calls return EINTR), SIGPIPE is ignored (EPIPE is reported). */
void io_install_signals(void);

/* Starts a thread with those three signals blocked in it, so that they
 * interrupt the main thread's blocking calls; the thread sees
 * io_stop_signal. 0 or -errno. */
int io_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg);

ssize_t io_read(struct dnd_syscalls *sc, int fd, void *buf, size_t n);
ssize_t io_pread(struct dnd_syscalls *sc, int fd, void *buf, size_t n,
		 off_t off);
ssize_t io_write(struct dnd_syscalls *sc, int fd, const void *buf, size_t n);
/* Writes all n bytes (looping over short writes); 0 or -errno. */
int io_write_all(struct dnd_syscalls *sc, int fd, const void *buf, size_t n);
ssize_t io_recv(struct dnd_syscalls *sc, int fd, void *buf, size_t n,
		int flags);
ssize_t io_sendfile(struct dnd_syscalls *sc, int out, int in, off_t *off,
		    size_t n);
/* kind is DND_SC_SPLICE_IN (into a pipe) or DND_SC_SPLICE_OUT (out of one). */
ssize_t io_splice(struct dnd_syscalls *sc, enum dnd_sc kind, int in,
		  loff_t *off_in, int out, loff_t *off_out, size_t n,
		  unsigned int flags);
/* tee(): duplicates up to n bytes of pipe in into pipe out, consuming
 * nothing; blocks until in holds data (0 when its writers are gone). */
ssize_t io_tee(struct dnd_syscalls *sc, int in, int out, size_t n);
ssize_t io_vmsplice(struct dnd_syscalls *sc, int fd, const struct iovec *iov,
		    unsigned long nr, unsigned int flags);
/* Maps len bytes; *addr is set on success. Returns 0 or -errno. */
int io_mmap(struct dnd_syscalls *sc, void **addr, size_t len, int prot,
	    int flags, int fd, off_t off);
int io_munmap(struct dnd_syscalls *sc, void *addr, size_t len);
int io_madvise(struct dnd_syscalls *sc, void *addr, size_t len, int advice);
/*
 * A method's data buffers: len bytes of private anonymous memory, faulted
 * in now, at setup, so that the first touch of each page is not paid
 * inside the timed window (on a VM that hands freed memory back to its
 * host, 32 MiB took 11.6 ms the first time and 0.75 ms the next).
 * huge: aligned to 2 MiB and backed by transparent huge pages where the
 * kernel gives them (MADV_HUGEPAGE), so that an O_DIRECT buffer is a few
 * physically contiguous segments, not one per 4 KiB page.
 * NULL when out of memory; io_buffers_free() with the same arguments.
 */
void *io_buffers(size_t len, bool huge);
void io_buffers_free(void *p, size_t len, bool huge);
/*
 * Maps and touches len bytes of such buffers now, before they are asked
 * for: the next io_buffers() calls of the same kind take their memory from
 * them while it lasts. A receiver does this while it listens, so that the
 * first touch is not paid after its accept, on the sender's clock.
 * io_buffers_unready() unmaps what was not taken.
 */
void io_buffers_ready(size_t len, bool huge);
void io_buffers_unready(void);
int io_ftruncate(struct dnd_syscalls *sc, int fd, off_t len);
int io_fdatasync(struct dnd_syscalls *sc, int fd);
/* sync_file_range(SYNC_FILE_RANGE_WRITE): starts writeback, no wait. */
int io_sync_range(struct dnd_syscalls *sc, int fd, off_t off, off_t len);
/* Opens fd's file again (/proc/self/fd) with flags | O_DIRECT, so fd keeps
 * the page cache for unaligned pieces. Returns the new fd or -errno
 * (-EINVAL: the file system refuses O_DIRECT). Not counted. */
int io_reopen_direct(int fd, int flags);
/* Before any transfer: opens path with flags | O_DIRECT and closes it.
 * Returns 0, or -EINVAL with why naming the file system's refusal and
 * "fix, or drop --direct"; any other failure is left to the transfer (0). */
int io_check_direct(const char *path, int flags, const char *fix,
		    char *why, size_t len);
/* fallocate(fd, 0, off, len): reserves blocks and extends the size. */
int io_fallocate(struct dnd_syscalls *sc, int fd, off_t off, off_t len);

struct msghdr;
struct tcp_zerocopy_receive;

/* send(); MSG_ZEROCOPY sends count here, their completions under recvmsg. */
ssize_t io_send(struct dnd_syscalls *sc, int fd, const void *buf, size_t n,
		int flags);
/* recvmsg(); with MSG_ERRQUEUE it never blocks (-EAGAIN when empty). */
ssize_t io_recvmsg(struct dnd_syscalls *sc, int fd, struct msghdr *msg,
		   int flags);
/* getsockopt(TCP_ZEROCOPY_RECEIVE): maps at most zc->length queued bytes at
 * zc->address (a mapping of fd); counts the bytes mapped. 0 or -errno. */
int io_tcp_zc_receive(struct dnd_syscalls *sc, int fd,
		      struct tcp_zerocopy_receive *zc);

#endif
