// SPDX-License-Identifier: MIT
/* libFuzzer: every decoder of dnd serve's handshake, with a re-encoding
 * oracle, then both ends of the handshake fed the input as the peer's. */
#include <sys/socket.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/stats.h"
#include "serve/auth.h"
#include "serve/handshake.h"

static struct dnd_key key = { 20, "fuzzing key 01234567" };

/* A heap copy of exactly n bytes (zero-padded), so ASan sees overreads. */
static uint8_t *exact(const uint8_t *d, size_t size, size_t n)
{
	uint8_t *p = calloc(1, n);

	if (p)
		memcpy(p, d, size < n ? size : n);
	return p;
}

/* What decodes must re-encode to the same bytes: the decoders accept
 * exactly one encoding of each message. */
static void fuzz_decoders(const uint8_t *d, size_t size)
{
	uint8_t *h = exact(d, size, DND_AUTH_HELLO_LEN);
	uint8_t *c = exact(d, size, DND_AUTH_CHAL_LEN);
	uint8_t *r = exact(d, size, DND_AUTH_RESP_LEN);
	uint8_t out[DND_AUTH_CHAL_LEN];
	struct dnd_auth_hello hello;
	struct dnd_auth_chal chal;
	struct dnd_auth_resp resp;
	struct dnd_auth_pre pre;
	uint16_t st, n;
	char why[512];

	if (!h || !c || !r)
		abort();
	auth_get_pre(h, false, DND_AUTH_VERSION, DND_AUTH_KEY, &pre, why,
		     sizeof(why));
	auth_get_pre(c, true, DND_AUTH_VERSION, DND_AUTH_NONE, &pre, why,
		     sizeof(why));
	if (!auth_get_hello(h, &hello, why, sizeof(why))) {
		auth_put_hello(out, &hello);
		if (memcmp(out, h, DND_AUTH_HELLO_LEN))
			abort();
	}
	if (!auth_get_chal(c, &chal, why, sizeof(why))) {
		auth_put_chal(out, &chal);
		if (memcmp(out, c, DND_AUTH_CHAL_LEN))
			abort();
	}
	if (!auth_get_resp(r, &resp, why, sizeof(why))) {
		auth_put_resp(out, &resp);
		if (memcmp(out, r, DND_AUTH_RESP_LEN))
			abort();
	}
	if (!auth_get_verdict(h, &st, &n, why, sizeof(why)) &&
	    n > DND_AUTH_REASON_MAX)
		abort();
	auth_check_reason(d, size);
	free(h);
	free(c);
	free(r);
}

/* Runs one end of the handshake with the input as all the peer ever sent. */
static void fuzz_end(const uint8_t *d, size_t size, bool server,
		     enum dnd_auth_mode mode)
{
	struct dnd_hs_cfg cfg = { mode, &key, DND_AUTH_VERSION,
				  stats_now() + 2 };
	struct dnd_auth *a = malloc(sizeof(*a));
	char why[512];
	int sp[2];

	if (!a || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp))
		abort();
	/* Fits the socket buffer, and the peer is done: nothing blocks. */
	if (write(sp[0], d, size) != (ssize_t)size)
		abort();
	shutdown(sp[0], SHUT_WR);
	if (server)
		hs_server(sp[1], &cfg, a, why, sizeof(why));
	else
		hs_client(sp[1], &cfg, "push f 1", 8, a, NULL, why, sizeof(why));
	if (a->params_len > DND_AUTH_PARAMS_MAX)
		abort();
	close(sp[0]);
	close(sp[1]);
	free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	if (size > 65536)
		return 0;
	fuzz_decoders(d, size);
	fuzz_end(d, size, true, DND_AUTH_KEY);
	fuzz_end(d, size, true, DND_AUTH_NONE);
	fuzz_end(d, size, false, DND_AUTH_KEY);
	fuzz_end(d, size, false, DND_AUTH_NONE);
	return 0;
}
