// SPDX-License-Identifier: MIT
/* stats_median(): odd and even counts, none, min and max, NaN kept last. */
#include <math.h>
#include <stddef.h>

#include "check.h"
#include "core/stats.h"

int main(void)
{
	double odd[] = { 5, 1, 4, 2, 3 }, even[] = { 8, 2, 6, 4 };
	double one[] = { 7.5 }, nan_last[] = { NAN, 3, 1, 2 };
	double none[1] = { 42 }, lo = -1, hi = -1;

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
	return CHECK_DONE();
}
