/* SPDX-License-Identifier: MIT */
/*
 * The two references of a file -> file table, measured on the scratch
 * directory's file system with the same bytes and the same sync policy as
 * the cells (one fdatasync before the clock stops):
 *   copy:   a local buffered copy of the bench's source file, 1 MiB
 *           read()/write() (what `dd bs=1M conv=fdatasync` does);
 *   device: the device's own O_DIRECT write rate, 1 MiB writes with 16 in
 *           flight through io_uring (what `fio --direct=1 --bs=1M
 *           --iodepth=16` does), from buffers on huge pages.
 * A landing over the network can at best approach the second; the first
 * is what the page cache gives without any network.
 */
#ifndef DND_BENCH_REF_DISK_H
#define DND_BENCH_REF_DISK_H

#include <stddef.h>
#include <stdint.h>

/* One sample each: 0 with MB/s and process CPU µs per MB, or -errno with
 * the reason in why. The file written in dir is removed either way. */
int bench_disk_copy(const char *src, const char *dir, uint64_t bytes,
		    double *mbps, double *usmb, char *why, size_t len);
int bench_disk_direct(const char *dir, uint64_t bytes, double *mbps,
		      double *usmb, char *why, size_t len);

#endif
