// SPDX-License-Identifier: MIT
/* libFuzzer: arbitrary bytes as a serve request. Anything accepted must
 * obey the request's rules (a special end has no name and a known end; a
 * named end a name) and encode back to the very same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/params.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	uint8_t *in = malloc(size ? size : 1), out[SERVE_PARAMS_FIXED +
						    SERVE_METHOD_MAX + PATH_MAX];
	struct serve_params p;
	char why[256];
	size_t n;

	if (!in)
		abort();
	memcpy(in, d, size);	/* exact size: ASan sees overreads */
	if (!params_get(in, size, &p, why, sizeof(why))) {
		if (p.end >= SERVE_END_COUNT || !p.name_len != (p.end != 0) ||
		    (p.end == SERVE_END_ZERO && p.op != SERVE_PULL) ||
		    (p.end == SERVE_END_NULL && p.op != SERVE_PUSH) ||
		    (p.op == SERVE_PULL && p.end &&
		     !(p.flags & SERVE_PF_KNOWN)))
			abort();
		n = params_put(out, sizeof(out), &p);
		if (n != size || memcmp(out, in, size))
			abort();
	} else if (!strstr(why, "malformed request")) {
		abort();
	}
	free(in);
	return 0;
}
