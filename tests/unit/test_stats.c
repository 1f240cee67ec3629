// SPDX-License-Identifier: MIT
/*
 * stats_median(): odd and even counts, none, min and max, NaN kept last.
 * stats_parse_proc_stat() and stats_cost(): busy without steal, softirq
 * inside busy, steal apart, guest not counted twice.
 */
#include <math.h>
#include <stddef.h>

#include "check.h"
#include "core/stats.h"

int main(void)
{
	double odd[] = { 5, 1, 4, 2, 3 }, even[] = { 8, 2, 6, 4 };
	double one[] = { 7.5 }, nan_last[] = { NAN, 3, 1, 2 };
	double none[1] = { 42 }, lo = -1, hi = -1;
	struct dnd_sample a = { 0 }, b = { 0 };
	struct dnd_cost c;

	CHECK(stats_median(odd, 5, &lo, &hi) == 3 && lo == 1 && hi == 5,
	      "odd count: median 3 of 1..5, min %g max %g", lo, hi);
	CHECK(odd[0] == 1 && odd[4] == 5, "v is left sorted");
	CHECK(stats_median(even, 4, NULL, NULL) == 5,
	      "even count: the mean of the middle two (4 and 6)");
	CHECK(stats_median(one, 1, &lo, &hi) == 7.5 && lo == 7.5 && hi == 7.5,
	      "a single value is its own median, min and max");
	lo = hi = -1;
	CHECK(stats_median(none, 0, &lo, &hi) == 0 && lo == 0 && hi == 0 &&
	      none[0] == 42, "n == 0: 0, min and max 0, v untouched");
	CHECK(stats_median(NULL, 0, NULL, NULL) == 0, "n == 0 reads nothing");
	/* NaN sorts after every number: 1 2 3 NaN, median (2 + 3) / 2. */
	CHECK(stats_median(nan_last, 4, &lo, NULL) == 2.5 && lo == 1 &&
	      isnan(nan_last[3]), "NaN is sorted last, not into the middle");

	/* user nice system idle iowait irq softirq steal guest guest_nice */
	stats_parse_proc_stat("cpu  100 5 50 1000 20 3 7 11 40 2\n"
			      "cpu0 50 2 25 500 10 1 3 5 20 1\n", &a);
	CHECK(a.sys_total == 1196 && a.sys_busy == 165 &&
	      a.sys_softirq == 7 && a.sys_steal == 11,
	      "total 1196 (no guest), busy 165 (no idle, iowait, steal), "
	      "softirq 7, steal 11: got %llu %llu %llu %llu",
	      (unsigned long long)a.sys_total, (unsigned long long)a.sys_busy,
	      (unsigned long long)a.sys_softirq,
	      (unsigned long long)a.sys_steal);
	stats_parse_proc_stat("cpu  300 5 150 1300 20 3 57 111 40 2\n", &b);
	stats_cost(&a, &b, 0, &c);
	/* 750 ticks: busy +350 (softirq +50 inside), idle +300, steal +100. */
	CHECK(fabs(c.sys_busy_pct - 350.0 / 7.5) < 1e-9 &&
	      fabs(c.sys_softirq_pct - 50.0 / 7.5) < 1e-9 &&
	      fabs(c.sys_steal_pct - 100.0 / 7.5) < 1e-9,
	      "busy %.3f%%, softirq %.3f%%, steal %.3f%% of 750 ticks",
	      c.sys_busy_pct, c.sys_softirq_pct, c.sys_steal_pct);
	/* Kernels before 2.6.11 had no steal column; no line is no ticks. */
	stats_parse_proc_stat("cpu  100 5 50 1000 20 3 7\n", &a);
	CHECK(a.sys_total == 1185 && a.sys_busy == 165 && a.sys_steal == 0,
	      "without a steal column: total 1185, busy 165, steal 0");
	stats_parse_proc_stat("intr 1 2 3\n", &a);
	CHECK(!a.sys_total && !a.sys_busy && !a.sys_steal,
	      "a line that is not 'cpu' gives no ticks");
	return CHECK_DONE();
}
