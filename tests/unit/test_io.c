// SPDX-License-Identifier: MIT
/* core/io.c's helpers that are not a plain syscall: io_fallocate and
 * io_sync_range past 2 GiB (their length once came back through an int
 * and failed), and the methods' pre-faulted buffers. */
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/io.h"

static void fallocate_big(void)
{
	char path[] = "/var/tmp/dnd-test-io.XXXXXX";
	struct dnd_syscalls sc;
	struct statvfs vfs;
	struct stat st = { 0 };
	off_t len = ((off_t)3 << 30) + 5;	/* bit 31 set in its low word */
	int fd = mkstemp(path), r;

	memset(&sc, 0, sizeof(sc));
	if (fd < 0) {
		CHECK(0, "mkstemp in /var/tmp");
		return;
	}
	unlink(path);
	if (fstatvfs(fd, &vfs) || (uint64_t)vfs.f_bavail * vfs.f_frsize <
				  (uint64_t)len + (1ull << 30)) {
		printf("# less than 4 GiB free in /var/tmp: 3 GiB fallocate "
		       "not tried\n");
		close(fd);
		return;
	}
	r = io_fallocate(&sc, fd, 0, (off_t)2 << 30);
	if (r == -EOPNOTSUPP) {
		printf("# /var/tmp's file system has no fallocate\n");
		close(fd);
		return;
	}
	CHECK(r == 0, "fallocate of exactly 2 GiB: %d", r);
	r = io_fallocate(&sc, fd, 0, len);
	CHECK(r == 0 && !fstat(fd, &st) && st.st_size == len,
	      "fallocate of 3 GiB + 5: %d, size %lld", r,
	      (long long)st.st_size);
	r = io_sync_range(&sc, fd, 0, len);
	CHECK(r == 0, "sync_file_range over 3 GiB + 5: %d", r);
	CHECK(sc.calls[DND_SC_FALLOCATE] == 2 &&
	      sc.bytes[DND_SC_FALLOCATE] == ((uint64_t)2 << 30) + (uint64_t)len,
	      "counted: 2 calls and their bytes");
	close(fd);
}

static void buffers(bool huge)
{
	size_t len = (5u << 20) + 4096 + 7, i, zero = 0;
	unsigned char *p = io_buffers(len, huge);
	uintptr_t align = huge ? 2u << 20 : (uintptr_t)sysconf(_SC_PAGESIZE);

	CHECK(p && (uintptr_t)p % align == 0, "%s buffers: aligned to %lu",
	      huge ? "huge" : "small", (unsigned long)align);
	if (!p)
		return;
	for (i = 0; i < len; i++)
		zero += !p[i];
	CHECK(zero == len, "%s buffers: zero-filled", huge ? "huge" : "small");
	memset(p, 0xa5, len);
	CHECK(p[len - 1] == 0xa5, "%s buffers: all of len writable",
	      huge ? "huge" : "small");
	io_buffers_free(p, len, huge);
}

int main(void)
{
	fallocate_big();
	buffers(false);
	buffers(true);
	return CHECK_DONE();
}
