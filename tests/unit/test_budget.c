// SPDX-License-Identifier: MIT
/* dnd serve's --max-buffer and --max-memory (serve/budget.h). */
#include <string.h>

#include "check.h"
#include "serve/budget.h"
#include "xfer/method.h"

#define MI (1ULL << 20)

int main(void)
{
	const struct dnd_method *rw = method_find("rw");
	const struct dnd_method *sf = method_find("sendfile");
	const struct dnd_method *vms = method_find("vmsplice");
	struct budget_grant g;
	uint64_t mem[4] = { 0 };
	char why[256] = "";

	CHECK(rw && sf && vms && rw->nbuf == 1 && !sf->nbuf, "methods");
	CHECK(budget_demand(rw, 4, 16 * MI) == 64 * MI, "rw: streams x -b");
	CHECK(budget_demand(vms, 2, MI) == 2 * (MI + BUDGET_PIPE_MEM),
	      "a pipe method: its pipes too");

	CHECK(!budget_fit(rw, 1, 64 * 1024, 16 * MI, 512 * MI, &g, why,
			  sizeof(why)) && g.bsz == 64 * 1024 && !g.capped[0] &&
	      g.demand == 64 * 1024 && g.asked == 64 * 1024,
	      "within both: as asked, nothing said");
	CHECK(!budget_fit(rw, 1, 1ULL << 30, 16 * MI, 512 * MI, &g, why,
			  sizeof(why)) && g.bsz == 16 * MI &&
	      !strcmp(g.capped, "the server capped -b 1Gi to its "
		      "--max-buffer 16Mi"), "--max-buffer caps: %s", g.capped);
	CHECK(!budget_fit(rw, 4, 16 * MI, 16 * MI, 40 * MI, &g, why,
			  sizeof(why)) && g.bsz == 10 * MI &&
	      g.demand == 40 * MI && strstr(g.capped, "capped -b 16Mi to "
					    "10Mi: 4 stream(s)"),
	      "above --max-memory alone: capped to fit: %s", g.capped);
	CHECK(!budget_fit(rw, 3, 16 * MI, 16 * MI, 40 * MI, &g, why,
			  sizeof(why)) && g.bsz % 4096 == 0 &&
	      g.demand <= 40 * MI && g.bsz > 13 * MI,
	      "capped to whole pages within the budget");
	CHECK(!budget_fit(sf, 64, 1ULL << 30, 1ULL << 30, MI, &g, why,
			  sizeof(why)) && g.demand == 0,
	      "a method without buffers costs nothing");
	CHECK(budget_fit(vms, 64, MI, 16 * MI, MI, &g, why, sizeof(why)) &&
	      strstr(why, "64 stream(s) of -m vmsplice need") &&
	      strstr(why, "--max-memory 1Mi; use fewer streams"),
	      "not even a page each fits: refused: %s", why);

	CHECK(budget_claim(mem, 4, 0, 16 * MI, 40 * MI) && mem[0] == 16 * MI,
	      "the first claim");
	CHECK(budget_claim(mem, 4, 2, 16 * MI, 40 * MI), "the second");
	CHECK(!budget_claim(mem, 4, 1, 16 * MI, 40 * MI) && !mem[1],
	      "a third does not fit beside them: its slot stays 0");
	CHECK(budget_claim(mem, 4, 1, 8 * MI, 40 * MI), "a smaller one fits");
	mem[0] = 0;
	CHECK(budget_claim(mem, 4, 3, 16 * MI, 40 * MI),
	      "once one ended (the parent zeroed it), it fits");
	return CHECK_DONE();
}
