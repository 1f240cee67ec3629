// SPDX-License-Identifier: MIT
/* The file -> file references: a local buffered copy and the device's
 * O_DIRECT write rate (see bench_ref_disk.h). */
#include <sys/resource.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef DND_HAVE_LIBURING
#include <liburing.h>
#endif

#include "bench/bench_ref_disk.h"
#include "core/io.h"
#include "core/stats.h"

#define DISK_BLOCK	((size_t)1 << 20)
#define DISK_QD		16

static double disk_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* A fresh file beneath dir for one sample; -errno. */
static int disk_open(const char *dir, const char *name, int flags,
		     char *path, size_t plen)
{
	int fd;

	snprintf(path, plen, "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | flags, 0600);
	return fd < 0 ? -errno : fd;
}

/* Closes and removes a sample's file; fills the figures on success. */
static int disk_done(int fd, const char *path, int rc, uint64_t bytes,
		     double t0, double c0, double *mbps, double *usmb)
{
	double t1;

	if (!rc && fdatasync(fd))
		rc = -errno;
	t1 = stats_now();
	close(fd);
	unlink(path);
	if (!rc) {
		*mbps = (double)bytes / (t1 - t0) / 1e6;
		*usmb = (disk_cpu() - c0) * 1e6 / ((double)bytes / 1e6);
	}
	return rc;
}

int bench_disk_copy(const char *src, const char *dir, uint64_t bytes,
		    double *mbps, double *usmb, char *why, size_t len)
{
	struct dnd_syscalls sc;
	char path[512], *buf = io_buffers(DISK_BLOCK, false);
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, rc = 0;
	uint64_t done = 0;
	double t0, c0;

	memset(&sc, 0, sizeof(sc));
	if (!buf || in < 0) {
		rc = in < 0 ? -errno : -ENOMEM;
		snprintf(why, len, "%s", in < 0 ? "cannot open the source" :
			 "out of memory");
		goto out;
	}
	out = disk_open(dir, "ref-copy", 0, path, sizeof(path));
	if (out < 0) {
		rc = out;
		snprintf(why, len, "cannot create %s: %s", path, strerror(-rc));
		goto out;
	}
	t0 = stats_now();
	c0 = disk_cpu();
	while (!rc && done < bytes) {
		size_t want = bytes - done < DISK_BLOCK ?
			      (size_t)(bytes - done) : DISK_BLOCK;
		ssize_t n = io_pread(&sc, in, buf, want, (off_t)done);

		if (n <= 0)
			rc = n ? (int)n : -ENODATA;
		else
			rc = io_write_all(&sc, out, buf, (size_t)n);
		done += n > 0 ? (uint64_t)n : 0;
	}
	rc = disk_done(out, path, rc, bytes, t0, c0, mbps, usmb);
	if (rc)
		snprintf(why, len, "copying to %s: %s", path, strerror(-rc));
out:
	if (in >= 0)
		close(in);
	io_buffers_free(buf, DISK_BLOCK, false);
	return rc;
}

#ifdef DND_HAVE_LIBURING
/* DISK_QD writes of DISK_BLOCK in flight until bytes are written. The
 * buffers never change (the device only reads them), so a slot may be
 * handed out again before its last write completed. */
static int disk_write_ring(int fd, char *mem, uint64_t bytes)
{
	struct io_uring ring;
	uint64_t next = 0, left = bytes;
	unsigned int inflight = 0, i;
	int rc = io_uring_queue_init(DISK_QD, &ring, 0);

	if (rc)
		return rc;
	while (!rc && left) {
		struct io_uring_cqe *cqe;

		for (i = inflight; i < DISK_QD && next < bytes; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			size_t n = bytes - next < DISK_BLOCK ?
				   (size_t)(bytes - next) : DISK_BLOCK;

			io_uring_prep_write(sqe, fd, mem + i * DISK_BLOCK,
					    (unsigned int)n, next);
			io_uring_sqe_set_data64(sqe, n);
			next += n;
			inflight++;
		}
		rc = io_uring_submit_and_wait(&ring, 1);
		if (rc < 0 && rc != -EINTR)	/* what it left will not complete */
			inflight -= io_uring_sq_ready(&ring);
		rc = io_stop_signal ? -EINTR : rc < 0 && rc != -EINTR ? rc : 0;
		while (!rc && io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->res < 0 || (uint64_t)cqe->res !=
			    io_uring_cqe_get_data64(cqe))
				rc = cqe->res < 0 ? cqe->res : -EIO;
			else
				left -= (uint64_t)cqe->res;
			io_uring_cqe_seen(&ring, cqe);
			inflight--;
		}
	}
	/* The buffers may be freed only once nothing is in flight. */
	while (inflight) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&ring, &cqe))
			break;
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
	}
	io_uring_queue_exit(&ring);
	return rc;
}
#else
static int disk_write_ring(int fd, char *mem, uint64_t bytes)
{
	(void)fd, (void)mem, (void)bytes;
	return -ENOSYS;
}
#endif

int bench_disk_direct(const char *dir, uint64_t bytes, double *mbps,
		      double *usmb, char *why, size_t len)
{
	size_t memlen = DISK_BLOCK * DISK_QD;
	char path[512], *mem = io_buffers(memlen, true);
	uint64_t whole = bytes / 4096 * 4096;
	double t0, c0;
	int fd, rc;

	if (!mem) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	memset(mem, 0x5a, memlen);
	fd = disk_open(dir, "ref-direct", O_DIRECT, path, sizeof(path));
	if (fd < 0) {
		snprintf(why, len, "%s with O_DIRECT: %s", path,
			 fd == -EINVAL ? "the file system refuses it" :
			 strerror(-fd));
		io_buffers_free(mem, memlen, true);
		return fd;
	}
	t0 = stats_now();
	c0 = disk_cpu();
	rc = disk_write_ring(fd, mem, whole);
	rc = disk_done(fd, path, rc, whole, t0, c0, mbps, usmb);
	if (rc)
		snprintf(why, len, "O_DIRECT writes to %s: %s", path,
			 rc == -ENOSYS ? "built without liburing" :
			 strerror(-rc));
	io_buffers_free(mem, memlen, true);
	return rc;
}
