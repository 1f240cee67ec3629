// SPDX-License-Identifier: MIT
/* Counted system call wrappers; see io.h for why they exist. */
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/io.h"

volatile sig_atomic_t io_stop_signal;

volatile sig_atomic_t io_stop_fd = -1;

/*
 * A signal that lands between the flag check and a blocking call would be
 * missed until --timeout; shutting the socket down wakes that call at once
 * (shutdown() is async-signal-safe).
 */
static void io_on_stop(int sig)
{
	int saved = errno;

	io_stop_signal = sig;
	if (io_stop_fd >= 0)
		shutdown(io_stop_fd, SHUT_RDWR);
	errno = saved;
}

void io_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = io_on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);	/* a dropped ssh session: clean up */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

int io_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	sigset_t block, old;
	int r;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	r = pthread_create(tid, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -r;
}

/*
 * Accounts one call. A signal that is not a stop request (the progress
 * timer, say) is retried; a stop request surfaces as -EINTR.
 */
static bool io_retry(struct dnd_syscalls *sc, long ret)
{
	if (ret != -1 || errno != EINTR || io_stop_signal)
		return false;
	sc->eintr++;
	return true;
}

static ssize_t io_done(struct dnd_syscalls *sc, enum dnd_sc kind, ssize_t ret)
{
	sc->calls[kind]++;
	if (ret == -1) {
		if (errno == EAGAIN)
			sc->eagain++;
		return -errno;
	}
	sc->bytes[kind] += (uint64_t)ret;
	return ret;
}

/*
 * A keyed socket (core/chan.h): the bytes go through TLS in user space, one
 * SSL_read or SSL_write counted under its own kind (the read()s and
 * write()s OpenSSL makes beneath are not). Without buf (the null sink's
 * discard), records are read into a scratch buffer: TLS has no MSG_TRUNC.
 */
static ssize_t io_chan(struct dnd_syscalls *sc, enum dnd_sc kind, int fd,
		       void *buf, size_t n)
{
	static __thread uint8_t scratch[64 * 1024];
	ssize_t r;

	if (io_stop_signal)
		return -EINTR;
	if (kind == DND_SC_TLS_WRITE) {
		r = chan_write(fd, buf, n);
	} else {
		if (!buf && n > sizeof(scratch))
			n = sizeof(scratch);
		r = chan_read(fd, buf ? buf : scratch, n);
	}
	sc->calls[kind]++;
	if (r == -EAGAIN)
		sc->eagain++;
	if (r > 0)
		sc->bytes[kind] += (uint64_t)r;
	return r;
}

ssize_t io_read(struct dnd_syscalls *sc, int fd, void *buf, size_t n)
{
	ssize_t r;

	if (chan_tls(fd))
		return io_chan(sc, DND_SC_TLS_READ, fd, buf, n);
	if (io_stop_signal)
		return -EINTR;
	do
		r = read(fd, buf, n);
	while (io_retry(sc, r));
	return io_done(sc, DND_SC_READ, r);
}

ssize_t io_pread(struct dnd_syscalls *sc, int fd, void *buf, size_t n,
		 off_t off)
{
	ssize_t r;

	if (io_stop_signal)
		return -EINTR;
	do
		r = pread(fd, buf, n, off);
	while (io_retry(sc, r));
	return io_done(sc, DND_SC_READ, r);
}

ssize_t io_write(struct dnd_syscalls *sc, int fd, const void *buf, size_t n)
{
	ssize_t r;

	if (chan_tls(fd))
		return io_chan(sc, DND_SC_TLS_WRITE, fd, (void *)buf, n);
	if (io_stop_signal)
		return -EINTR;
	do
		r = write(fd, buf, n);
	while (io_retry(sc, r));
	return io_done(sc, DND_SC_WRITE, r);
}

int io_write_all(struct dnd_syscalls *sc, int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t r = io_write(sc, fd, p, n);

		if (r < 0)
			return (int)r;
		if (r == 0)
			return -EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

ssize_t io_recv(struct dnd_syscalls *sc, int fd, void *buf, size_t n,
		int flags)
{
	ssize_t r;

	/*
	 * recv(MSG_TRUNC) with no buffer discards TCP data in the kernel. Made
	 * as a raw system call because sanitizer interceptors would treat the
	 * returned length as bytes written at NULL.
	 */
	if (chan_tls(fd))
		return io_chan(sc, DND_SC_TLS_READ, fd, buf, n);
	if (io_stop_signal)
		return -EINTR;
	do
		r = buf ? recv(fd, buf, n, flags) :
			  syscall(SYS_recvfrom, fd, NULL, n, flags, NULL, NULL);
	while (io_retry(sc, r));
	return io_done(sc, DND_SC_RECV, r);
}

ssize_t io_sendfile(struct dnd_syscalls *sc, int out, int in, off_t *off,
		    size_t n)
{
	ssize_t r;

	if (io_stop_signal)
		return -EINTR;
	do
		r = sendfile(out, in, off, n);
	while (io_retry(sc, r));
	return io_done(sc, DND_SC_SENDFILE, r);
}

ssize_t io_splice(struct dnd_syscalls *sc, enum dnd_sc kind, int in,
		  loff_t *off_in, int out, loff_t *off_out, size_t n,
		  unsigned int flags)
{
	ssize_t r;

	if (io_stop_signal)
		return -EINTR;
	do
		r = splice(in, off_in, out, off_out, n, flags);
	while (io_retry(sc, r));
	return io_done(sc, kind, r);
}

ssize_t io_vmsplice(struct dnd_syscalls *sc, int fd, const struct iovec *iov,
		    unsigned long nr, unsigned int flags)
{
	ssize_t r;

	if (io_stop_signal)
		return -EINTR;
	do
		r = vmsplice(fd, iov, nr, flags);
	while (io_retry(sc, r));
	return io_done(sc, DND_SC_VMSPLICE, r);
}

int io_mmap(struct dnd_syscalls *sc, void **addr, size_t len, int prot,
	    int flags, int fd, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	sc->calls[DND_SC_MMAP]++;
	if (p == MAP_FAILED)
		return -errno;
	sc->bytes[DND_SC_MMAP] += len;
	*addr = p;
	return 0;
}

int io_munmap(struct dnd_syscalls *sc, void *addr, size_t len)
{
	sc->calls[DND_SC_MUNMAP]++;
	if (munmap(addr, len) == -1)
		return -errno;
	sc->bytes[DND_SC_MUNMAP] += len;
	return 0;
}

#define IO_HUGE	((size_t)2 << 20)

static size_t io_buffers_len(size_t len, bool huge)
{
	size_t unit = huge ? IO_HUGE : (size_t)sysconf(_SC_PAGESIZE);

	return (len + unit - 1) / unit * unit;
}

/* Memory io_buffers_ready() mapped and touched ahead, that io_buffers()
 * hands out from its start: [ready, ready + ready_len). */
static char *ready;
static size_t ready_len;
static bool ready_huge;

/* Maps n bytes (a multiple of the unit), 2 MiB-aligned if huge. */
static char *io_buffers_map(size_t n, bool huge)
{
	size_t slack = huge ? IO_HUGE : 0;
	char *m = mmap(NULL, n + slack, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

	if (m == MAP_FAILED)
		return NULL;
	a = m;
	if (huge) {
		/* Keep the 2 MiB-aligned middle; advice only: a kernel
		 * without THP gives small pages, as before. */
		a = (char *)(((uintptr_t)m + IO_HUGE - 1) & ~(IO_HUGE - 1));
		if (a > m)
			munmap(m, (size_t)(a - m));
		munmap(a + n, (size_t)(m + slack - a));	/* > 0: a < m + slack */
		madvise(a, n, MADV_HUGEPAGE);
	}
	return a;
}

void io_buffers_ready(size_t len, bool huge)
{
	size_t n = io_buffers_len(len, huge), page = (size_t)sysconf(_SC_PAGESIZE);
	size_t i;

	io_buffers_unready();
	ready = n ? io_buffers_map(n, huge) : NULL;
	if (!ready)
		return;
	for (i = 0; i < n; i += page)
		((volatile char *)ready)[i] = 0;
	ready_len = n;
	ready_huge = huge;
}

void io_buffers_unready(void)
{
	if (ready)
		munmap(ready, ready_len);
	ready = NULL;
	ready_len = 0;
}

void *io_buffers(size_t len, bool huge)
{
	size_t n = io_buffers_len(len, huge), page = (size_t)sysconf(_SC_PAGESIZE);
	size_t i;
	char *a;

	/* Pieces of whole units keep the next one aligned; each is its own
	 * mapping once io_buffers_free() unmaps it. */
	if (ready && ready_huge == huge && n <= ready_len) {
		a = ready;
		ready = n < ready_len ? ready + n : NULL;
		ready_len -= n;
		return a;
	}
	a = io_buffers_map(n, huge);
	if (!a)
		return NULL;
	for (i = 0; i < n; i += page)
		((volatile char *)a)[i] = 0;
	return a;
}

void io_buffers_free(void *p, size_t len, bool huge)
{
	if (p)
		munmap(p, io_buffers_len(len, huge));
}

int io_madvise(struct dnd_syscalls *sc, void *addr, size_t len, int advice)
{
	sc->calls[DND_SC_MADVISE]++;
	if (madvise(addr, len, advice) == -1)
		return -errno;
	sc->bytes[DND_SC_MADVISE] += len;
	return 0;
}

int io_ftruncate(struct dnd_syscalls *sc, int fd, off_t len)
{
	int r;

	do
		r = ftruncate(fd, len);
	while (io_retry(sc, r));
	return (int)io_done(sc, DND_SC_FTRUNCATE, r);
}

ssize_t io_tee(struct dnd_syscalls *sc, int in, int out, size_t n)
{
	ssize_t r;

	if (io_stop_signal)
		return -EINTR;
	do
		r = tee(in, out, n, 0);
	while (io_retry(sc, r));
	return io_done(sc, DND_SC_TEE, r);
}

/* io_done for a call that returns 0 or -1 and covers len bytes: 0 or
 * -errno. The count stays wide: 2 GiB through an int is negative. */
static int io_done_range(struct dnd_syscalls *sc, enum dnd_sc kind, int r,
			 off_t len)
{
	ssize_t d = io_done(sc, kind, r ? r : (ssize_t)len);

	return d < 0 ? (int)d : 0;
}

int io_sync_range(struct dnd_syscalls *sc, int fd, off_t off, off_t len)
{
	int r;

	do
		r = sync_file_range(fd, off, len, SYNC_FILE_RANGE_WRITE);
	while (io_retry(sc, r));
	return io_done_range(sc, DND_SC_SYNC_RANGE, r, len);
}

int io_fallocate(struct dnd_syscalls *sc, int fd, off_t off, off_t len)
{
	int r;

	do
		r = fallocate(fd, 0, off, len);
	while (io_retry(sc, r));
	return io_done_range(sc, DND_SC_FALLOCATE, r, len);
}

int io_reopen_direct(int fd, int flags)
{
	char path[40];
	int r;

	/* A new open file description: O_DIRECT on a dup() would take the
	 * page cache away from the original too. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = open(path, flags | O_DIRECT | O_CLOEXEC);
	return r == -1 ? -errno : r;
}

int io_check_direct(const char *path, int flags, const char *fix,
		    char *why, size_t len)
{
	int fd = open(path, flags | O_DIRECT | O_CLOEXEC, 0600);

	if (fd != -1) {
		close(fd);
		return 0;
	}
	if (errno != EINVAL)
		return 0;
	snprintf(why, len, "--direct: the file system of %s refuses "
		 "O_DIRECT; %s, or drop --direct", path, fix);
	return -EINVAL;
}

int io_fdatasync(struct dnd_syscalls *sc, int fd)
{
	int r;

	do
		r = fdatasync(fd);
	while (io_retry(sc, r));
	return (int)io_done(sc, DND_SC_FDATASYNC, r);
}

ssize_t io_send(struct dnd_syscalls *sc, int fd, const void *buf, size_t n,
		int flags)
{
	ssize_t r;

	if (chan_tls(fd))
		return io_chan(sc, DND_SC_TLS_WRITE, fd, (void *)buf, n);
	if (io_stop_signal)
		return -EINTR;
	do
		r = send(fd, buf, n, flags);
	while (io_retry(sc, r));
	return io_done(sc, DND_SC_SEND, r);
}

ssize_t io_recvmsg(struct dnd_syscalls *sc, int fd, struct msghdr *msg,
		   int flags)
{
	ssize_t r;

	if (io_stop_signal)
		return -EINTR;
	do
		r = recvmsg(fd, msg, flags);
	while (io_retry(sc, r));
	return io_done(sc, DND_SC_RECVMSG, r);
}

int io_tcp_zc_receive(struct dnd_syscalls *sc, int fd,
		      struct tcp_zerocopy_receive *zc)
{
	socklen_t len = sizeof(*zc);
	ssize_t d;
	int r;

	do
		r = getsockopt(fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, zc, &len);
	while (io_retry(sc, r));
	d = io_done(sc, DND_SC_TCP_ZC_RECV, r);
	if (d < 0)
		return (int)d;
	sc->bytes[DND_SC_TCP_ZC_RECV] += zc->length;
	return 0;
}
