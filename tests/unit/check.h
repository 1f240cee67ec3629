/* SPDX-License-Identifier: MIT */
/* Tiny test harness: CHECK() works under -DNDEBUG and prints TAP lines. */
#ifndef DND_CHECK_H
#define DND_CHECK_H

#include <stdio.h>

#define DND_T_PASS 0
#define DND_T_FAIL 1
#define DND_T_SKIP 77

static int check_n, check_failed;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		check_n++;                                                     \
		if (cond) {                                                    \
			printf("ok %d - ", check_n);                           \
		} else {                                                       \
			check_failed++;                                        \
			printf("not ok %d - %s:%d: ", check_n, __FILE__,       \
			       __LINE__);                                      \
		}                                                              \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
	} while (0)

/* The exit code for main(): fail if any CHECK failed. */
#define CHECK_DONE()                                                           \
	(printf("1..%d\n", check_n), check_failed ? DND_T_FAIL : DND_T_PASS)

#endif
