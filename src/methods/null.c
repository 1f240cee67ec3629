// SPDX-License-Identifier: MIT
/*
 * null: a receiver that discards with recv(MSG_TRUNC), so TCP hands the data
 * back without copying it anywhere. Measures the network alone, with no
 * disk and no copy to user space (iperf3's --skip-rx-copy).
 */
#include <sys/socket.h>
#include <errno.h>
#include <stdio.h>

#include "core/io.h"
#include "xfer/method.h"
#include "xfer/xfer.h"

static int null_check(const struct xfer_cfg *c, char *why, size_t len)
{
	if (c->ep != DND_EP_NULL) {
		snprintf(why, len, "-m null discards the data; give /dev/null "
			 "as FILE, or choose a method that writes");
		return -EINVAL;
	}
	return 0;
}

static int null_setup(struct dnd_xfer *x)
{
	x->out.eff_bsz = x->cfg->bsz;
	return 0;
}

static ssize_t null_recv(struct dnd_xfer *x, size_t len)
{
	ssize_t n = io_recv(&x->out.sc, x->sock, NULL, len < x->cfg->bsz ? len : x->cfg->bsz,
			    MSG_TRUNC);

	return n < 0 ? xfer_fail(x, (int)n, "recv(MSG_TRUNC) socket") : n;
}

static void null_teardown(struct dnd_xfer *x)
{
}

const struct dnd_method method_null = {
	.name = "null",
	.flags = DND_M_USERSOCK,
	.recv_help = "recv(MSG_TRUNC): discard without copying (sink /dev/null)",
	.check = null_check,
	.setup = null_setup,
	.recv = null_recv,
	.teardown = null_teardown,
};
