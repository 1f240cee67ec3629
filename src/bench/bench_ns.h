/* SPDX-License-Identifier: MIT */
/*
 * bench --netns: two network namespaces joined by a veth pair, made and
 * removed by dnd, with an MTU, an optional tbf rate and, where the kernel
 * has sch_netem, delay and loss.
 */
#ifndef DND_BENCH_NS_H
#define DND_BENCH_NS_H

#include <stdint.h>

#include "bench/bench_types.h"

/*
 * Builds the namespaces and points b->host, b->bind and the namespace paths
 * at them. Returns 0; 2 (printed) when this machine or user cannot (no
 * root, no namespaces, no netem); 1 (printed) on another failure. Whatever
 * was made is removed again on failure.
 */
int bench_ns_setup(struct bench *b);

/* Removes the namespaces (and with them the veth pair and qdiscs). Safe to
 * call when nothing was made; runs even after SIGINT. */
void bench_ns_teardown(struct bench *b);

#endif
