// SPDX-License-Identifier: MIT
/*
 * sendfile: the kernel moves page-cache pages to the socket; no user copy.
 * Send only: sendfile() cannot take a socket as its input file.
 */
#include <sys/stat.h>
#include <errno.h>
#include <stdio.h>

#include "core/io.h"
#include "xfer/method.h"
#include "xfer/xfer.h"

static int sendfile_probe(char *why, size_t len)
{
	/* Exists when the call fails on the bad descriptors, not with ENOSYS. */
	if (io_sendfile(&(struct dnd_syscalls){ 0 }, -1, -1, NULL, 1) ==
	    -ENOSYS) {
		snprintf(why, len, "sendfile(2) is not in this kernel");
		return -ENOSYS;
	}
	return 0;
}

static int sendfile_check(const struct xfer_cfg *c, char *why, size_t len)
{
	if (c->ep == DND_EP_STREAM) {
		snprintf(why, len, "sendfile cannot read from a pipe or stream "
			 "(its input must be a file); use -m splice or -m rw");
		return -EINVAL;
	}
	return 0;
}

static int sendfile_setup(struct dnd_xfer *x)
{
	x->out.eff_bsz = x->cfg->bsz;
	return 0;
}

static ssize_t sendfile_send(struct dnd_xfer *x, size_t len)
{
	off_t off = x->pos;
	ssize_t n;

	/* Explicit offsets for files; /dev/zero has no position to keep. */
	n = io_sendfile(&x->out.sc, x->sock, x->fd,
			x->cfg->ep == DND_EP_FILE ? &off : NULL,
			len < x->cfg->bsz ? len : x->cfg->bsz);
	if (n < 0)
		return xfer_fail(x, (int)n, "sendfile source->socket");
	return n;
}

static void sendfile_teardown(struct dnd_xfer *x)
{
}

const struct dnd_method method_sendfile = {
	.name = "sendfile",
	.send_help = "sendfile() from the source to the socket",
	.flags = DND_M_ZEROCOPY | DND_M_SEEKS,
	.probe = sendfile_probe,
	.check = sendfile_check,
	.setup = sendfile_setup,
	.send = sendfile_send,
	.teardown = sendfile_teardown,
};
