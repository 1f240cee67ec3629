// SPDX-License-Identifier: MIT
/* dnd serve's --max-buffer and --max-memory; see budget.h. */
#include <stdio.h>

#include "cli/opts.h"
#include "serve/budget.h"
#include "xfer/method.h"

uint64_t budget_demand(const struct dnd_method *m, unsigned int streams,
		       uint64_t bsz)
{
	uint64_t pipes = m->flags & DND_M_PIPE ? BUDGET_PIPE_MEM : 0;

	return streams * (m->nbuf * bsz + pipes);
}

int budget_fit(const struct dnd_method *m, unsigned int streams,
	       uint64_t asked, uint64_t max_buffer, uint64_t max_memory,
	       struct budget_grant *g, char *why, size_t len)
{
	uint64_t each = max_memory / streams, pipes;
	char a[32], b[32], c[32];

	g->asked = asked;
	g->bsz = asked < max_buffer ? asked : max_buffer;
	g->capped[0] = 0;
	if (g->bsz < asked)
		snprintf(g->capped, sizeof(g->capped), "the server capped -b "
			 "%s to its --max-buffer %s",
			 opt_fmt_size(asked, a, sizeof(a)),
			 opt_fmt_size(max_buffer, b, sizeof(b)));
	g->demand = budget_demand(m, streams, g->bsz);
	if (g->demand <= max_memory)
		return 0;
	pipes = budget_demand(m, 1, 0);
	if (!m->nbuf || each < pipes ||
	    (each - pipes) / m->nbuf < BUDGET_MIN_BUF) {
		snprintf(why, len, "%u stream(s) of -m %s need %s at the "
			 "least, above the server's --max-memory %s; use fewer "
			 "streams (-P)", streams, m->name,
			 opt_fmt_size(budget_demand(m, streams, BUDGET_MIN_BUF),
				      a, sizeof(a)),
			 opt_fmt_size(max_memory, b, sizeof(b)));
		return -1;
	}
	g->bsz = (each - pipes) / m->nbuf / BUDGET_MIN_BUF * BUDGET_MIN_BUF;
	g->demand = budget_demand(m, streams, g->bsz);
	snprintf(g->capped, sizeof(g->capped), "the server capped -b %s to "
		 "%s: %u stream(s) of -m %s, %u buffer(s) each, must fit its "
		 "--max-memory %s", opt_fmt_size(asked, a, sizeof(a)),
		 opt_fmt_size(g->bsz, b, sizeof(b)), streams, m->name, m->nbuf,
		 opt_fmt_size(max_memory, c, sizeof(c)));
	return 0;
}

bool budget_claim(uint64_t *mem, unsigned int n, unsigned int slot,
		  uint64_t demand, uint64_t max_memory)
{
	uint64_t sum = 0;
	unsigned int i;

	__atomic_store_n(&mem[slot], demand, __ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++)
		sum += __atomic_load_n(&mem[i], __ATOMIC_SEQ_CST);
	if (sum <= max_memory)
		return true;
	__atomic_store_n(&mem[slot], 0, __ATOMIC_SEQ_CST);
	return false;
}
