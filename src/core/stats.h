/* SPDX-License-Identifier: MIT */
/*
 * What a run costs: wall time, process and system CPU, system calls by kind;
 * and the median that every repeated measurement is summarized with.
 */
#ifndef DND_STATS_H
#define DND_STATS_H

#include <sys/resource.h>
#include <stdbool.h>
#include <stdint.h>

/* System calls on the data path, counted by the io_* wrappers in io.c. */
enum dnd_sc {
	DND_SC_READ = 0,
	DND_SC_WRITE,
	DND_SC_RECV,
	DND_SC_SENDFILE,
	DND_SC_SPLICE_IN,	/* splice() into a pipe */
	DND_SC_SPLICE_OUT,	/* splice() out of a pipe */
	DND_SC_VMSPLICE,
	DND_SC_MMAP,
	DND_SC_MUNMAP,
	DND_SC_MADVISE,
	DND_SC_FTRUNCATE,
	DND_SC_FALLOCATE,
	DND_SC_FDATASYNC,
	DND_SC_SEND,		/* send(), MSG_ZEROCOPY or not */
	DND_SC_RECVMSG,		/* recvmsg(), e.g. the error queue */
	DND_SC_URING_ENTER,	/* io_uring_enter(); bytes: socket payload */
	DND_SC_TCP_ZC_RECV,	/* getsockopt(TCP_ZEROCOPY_RECEIVE); bytes mapped */
	DND_SC_SYNC_RANGE,	/* sync_file_range(WRITE): writeback started */
	DND_SC_TEE,		/* tee(): a pipe's bytes copied to hash them */
	DND_SC_TLS_READ,	/* SSL_read on a keyed socket (core/chan.h) */
	DND_SC_TLS_WRITE,	/* SSL_write on a keyed socket */
	DND_SC_COUNT,
};

struct dnd_syscalls {
	uint64_t calls[DND_SC_COUNT];
	uint64_t bytes[DND_SC_COUNT];
	uint64_t eagain;	/* calls that returned EAGAIN (a timeout here) */
	uint64_t eintr;		/* calls interrupted by a signal and retried */
};

/*
 * What a zero-copy method saw the kernel do, so a run says whether bytes
 * really went without a copy. All zero (set false) for other methods.
 */
struct dnd_zc {
	bool set;		/* a method filled this in */
	uint64_t zc_bytes;	/* moved without a copy (mapped, or sent and
				 * not reported copied) */
	uint64_t copied_bytes;	/* copied after all */
	uint64_t completions;	/* send completions (notifications) reaped */
	uint64_t copied_completions;	/* of them, reported as copied */
	uint64_t enobufs;	/* sends refused with ENOBUFS, then retried */
};

/* A point in time with the CPU spent up to it. */
struct dnd_sample {
	double mono;		/* CLOCK_MONOTONIC seconds */
	struct rusage ru;	/* RUSAGE_SELF */
	uint64_t sys_busy;	/* /proc/stat: all CPUs, ticks that ran
				 * anything (not idle, iowait or steal) */
	uint64_t sys_softirq;	/* /proc/stat: softirq ticks, inside busy
				 * (loopback TCP's receive work, which no
				 * process is charged for) */
	uint64_t sys_steal;	/* /proc/stat: ticks the host ran something
				 * else while this VM's CPUs wanted to run */
	uint64_t sys_total;	/* /proc/stat: all CPUs, all ticks */
};

/* CPU and time between two samples, with per-MB figures. */
struct dnd_cost {
	double wall;		/* seconds */
	double user, sys;	/* process CPU seconds */
	double sys_busy_pct;	/* machine-wide busy, % of all CPUs */
	double sys_softirq_pct;	/* machine-wide softirq, % of all CPUs */
	double sys_steal_pct;	/* machine-wide steal, % of all CPUs */
	double usec_per_mb;	/* process CPU microseconds per 10^6 bytes */
	long nvcsw, nivcsw;	/* voluntary and involuntary context switches */
	int ncpu;
};

/* Short printable name of a syscall kind ("splice>pipe"). */
const char *stats_sc_name(enum dnd_sc sc);

/* Monotonic seconds. Cheap (vDSO); never fails on Linux. */
double stats_now(void);

/* A timeval (rusage times) in seconds. */
double stats_tv(const struct timeval *tv);

/* Fills *s. /proc/stat fields stay 0 when it cannot be read. */
void stats_sample(struct dnd_sample *s);

/* The ticks of /proc/stat's first ("cpu") line into s's sys_* fields; all 0
 * when the line is not one. */
void stats_parse_proc_stat(const char *line, struct dnd_sample *s);

/* Computes the cost of moving `bytes` between samples a and b. */
void stats_cost(const struct dnd_sample *a, const struct dnd_sample *b,
		uint64_t bytes, struct dnd_cost *c);

/*
 * The median of v[0..n), the mean of the middle two when n is even. Sorts v
 * in place (ascending, NaN last). lo and hi, when not NULL, get the smallest
 * and largest value. With n == 0 it returns 0 and sets *lo and *hi to 0.
 * Never fails, never allocates.
 */
double stats_median(double *v, unsigned int n, double *lo, double *hi);

#endif
