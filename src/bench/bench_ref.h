/* SPDX-License-Identifier: MIT */
/*
 * Reference rows measured in the same run as the cells, so each figure can
 * be read as a ratio: memcpy bandwidth, a pipe-only splice ceiling and, with
 * --compare, iperf3 on the same path.
 */
#ifndef DND_BENCH_REF_H
#define DND_BENCH_REF_H

#include <stdint.h>

#include "bench/bench_types.h"

/* Lists the reference rows in b->refs (nothing is measured yet). */
void bench_refs_plan(struct bench *b);

/*
 * Takes one more sample of every reference that has not failed. The runner
 * spreads these rounds over the whole run, so that the references see the
 * same load as the cells on a shared machine. net_bytes is what one
 * zero -> null run moves (the pipe ceiling and iperf3 move as much).
 * Returns 0, or -EINTR when stopped.
 */
int bench_refs_round(struct bench *b, uint64_t net_bytes);

/* Medians of the samples; frees the memcpy buffers. */
void bench_refs_finish(struct bench *b);

/* The reference with this key ("memcpy", "pipe", "iperf3", "iperf3-l1M"),
 * or NULL; for "pipe" the fastest pipe ceiling. Only measured ones. */
const struct bench_ref *bench_ref_find(const struct bench *b, const char *key);

#endif
