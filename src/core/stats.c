// SPDX-License-Identifier: MIT
/*
 * Process CPU from getrusage() and machine CPU from /proc/stat. Both are
 * kept because loopback TCP does much of its work in softirq context that may
 * be charged to another task (netperf's point): the process figure alone
 * can flatter a method.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/kernel.h"
#include "core/stats.h"

static const char *const sc_names[DND_SC_COUNT] = {
	[DND_SC_READ] = "read",
	[DND_SC_WRITE] = "write",
	[DND_SC_RECV] = "recv",
	[DND_SC_SENDFILE] = "sendfile",
	[DND_SC_SPLICE_IN] = "splice>pipe",
	[DND_SC_SPLICE_OUT] = "splice<pipe",
	[DND_SC_VMSPLICE] = "vmsplice",
	[DND_SC_MMAP] = "mmap",
	[DND_SC_MUNMAP] = "munmap",
	[DND_SC_MADVISE] = "madvise",
	[DND_SC_FTRUNCATE] = "ftruncate",
	[DND_SC_FALLOCATE] = "fallocate",
	[DND_SC_FDATASYNC] = "fdatasync",
	[DND_SC_SEND] = "send",
	[DND_SC_RECVMSG] = "recvmsg",
	[DND_SC_URING_ENTER] = "io_uring_enter",
	[DND_SC_TCP_ZC_RECV] = "tcp_zc_recv",
	[DND_SC_SYNC_RANGE] = "sync_file_range",
	[DND_SC_TEE] = "tee",
	[DND_SC_TLS_READ] = "SSL_read",
	[DND_SC_TLS_WRITE] = "SSL_write",
};

const char *stats_sc_name(enum dnd_sc sc)
{
	return sc < DND_SC_COUNT ? sc_names[sc] : "?";
}

double stats_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * busy: user, nice, system, irq and softirq; steal is apart: on a VM it is
 * the time the host ran something else while these CPUs had work, which
 * makes every rate of the run lower without any process spending it.
 */
void stats_parse_proc_stat(const char *line, struct dnd_sample *s)
{
	unsigned long long v[10] = { 0 };
	int i, n;

	s->sys_busy = s->sys_softirq = s->sys_steal = s->sys_total = 0;
	n = sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
		   "%llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
		   &v[7], &v[8], &v[9]);
	if (n < 5)
		return;
	/* guest and guest_nice (8, 9) are already inside user and nice. */
	for (i = 0; i < n && i < 8; i++)
		s->sys_total += v[i];
	s->sys_softirq = v[6];
	s->sys_steal = v[7];
	s->sys_busy = s->sys_total - v[3] - v[4] - v[7];
}

void stats_sample(struct dnd_sample *s)
{
	char line[512];

	memset(s, 0, sizeof(*s));
	getrusage(RUSAGE_SELF, &s->ru);
	if (kernel_read_file("/proc/stat", line, sizeof(line)) >= 0)
		stats_parse_proc_stat(line, s);
	s->mono = stats_now();
}

double stats_tv(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec * 1e-6;
}

void stats_cost(const struct dnd_sample *a, const struct dnd_sample *b,
		uint64_t bytes, struct dnd_cost *c)
{
	uint64_t dt = b->sys_total - a->sys_total;

	memset(c, 0, sizeof(*c));
	c->wall = b->mono - a->mono;
	c->user = stats_tv(&b->ru.ru_utime) - stats_tv(&a->ru.ru_utime);
	c->sys = stats_tv(&b->ru.ru_stime) - stats_tv(&a->ru.ru_stime);
	c->nvcsw = b->ru.ru_nvcsw - a->ru.ru_nvcsw;
	c->nivcsw = b->ru.ru_nivcsw - a->ru.ru_nivcsw;
	c->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (dt) {
		c->sys_busy_pct = 100.0 * (double)(b->sys_busy - a->sys_busy) /
				  (double)dt;
		c->sys_softirq_pct = 100.0 *
				     (double)(b->sys_softirq - a->sys_softirq) /
				     (double)dt;
		c->sys_steal_pct = 100.0 *
				   (double)(b->sys_steal - a->sys_steal) /
				   (double)dt;
	}
	if (bytes)
		c->usec_per_mb = (c->user + c->sys) * 1e6 / ((double)bytes / 1e6);
}

/* Ascending, NaN after every number, so the order is total. */
static int stats_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	if (isnan(x) || isnan(y))
		return isnan(x) - isnan(y);
	return x < y ? -1 : x > y;
}

double stats_median(double *v, unsigned int n, double *lo, double *hi)
{
	if (lo)
		*lo = 0;
	if (hi)
		*hi = 0;
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), stats_cmp);
	if (lo)
		*lo = v[0];
	if (hi)
		*hi = v[n - 1];
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
