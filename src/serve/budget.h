/* SPDX-License-Identifier: MIT */
/*
 * What a dnd serve client may make the server hold in memory. A session's
 * demand is its streams x (the method's buffers of -b each + its pipes):
 * xfer buffers are touched at setup, so what is granted is spent at once.
 *
 * --max-buffer clamps -b (harmless: the transfer runs, with the smaller
 * buffer, and the client's report says so). --max-memory bounds the demand
 * of all sessions together: a session whose demand alone is above it has
 * its buffer clamped to fit (told, as above), or is refused when even a
 * page each does not fit; one that fits alone but not beside the sessions
 * running now is refused "server busy" (nothing started, retry later). So
 * a session's buffer never depends on what other clients are doing.
 */
#ifndef DND_BUDGET_H
#define DND_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dnd_method;

#define BUDGET_PIPE_MEM	(256ULL << 10)	/* a pipe method's pipes, a stream */
#define BUDGET_MIN_BUF	4096ULL		/* the smallest buffer it clamps to */

/* What the server grants a request. */
struct budget_grant {
	uint64_t asked;		/* the client's -b */
	uint64_t bsz;		/* the buffer the session runs with */
	uint64_t demand;	/* its memory, counted as above */
	char capped[200];	/* why bsz is less than asked, or "" */
};

/* A session's demand: streams x (m->nbuf x bsz + pipes). */
uint64_t budget_demand(const struct dnd_method *m, unsigned int streams,
		       uint64_t bsz);

/*
 * Fits a request of streams x -b asked of method m to --max-buffer and
 * --max-memory (bytes). 0 with g filled, or -1 with the reason (and the
 * fix) in why when it cannot fit even with the smallest buffer.
 */
int budget_fit(const struct dnd_method *m, unsigned int streams,
	       uint64_t asked, uint64_t max_buffer, uint64_t max_memory,
	       struct budget_grant *g, char *why, size_t len);

/*
 * Takes demand bytes of max_memory for slot (ours) in mem, the n slots'
 * demands shared by every session process: publishes it, then adds up all
 * slots. Two sessions that claim at once each see the other (sequentially
 * consistent), so the budget is never overdrawn; at worst both are told
 * busy. True when granted; false when the others hold too much (our slot
 * is then back at 0). The parent zeroes a slot when its session is reaped.
 */
bool budget_claim(uint64_t *mem, unsigned int n, unsigned int slot,
		  uint64_t demand, uint64_t max_memory);

#endif
