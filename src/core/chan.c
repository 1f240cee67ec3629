// SPDX-License-Identifier: MIT
/* Sockets whose bytes go through TLS in user space (chan.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/tls.h"

struct chan {
	struct dnd_tls *tls;
	char err[256];
};

/* Indexed by fd, allocated on the first attach: a process that never
 * uses a key pays nothing. */
static struct chan *chan_tab;

static struct chan *chan_of(int fd)
{
	if (!chan_tab || fd < 0 || fd >= DND_CHAN_MAX || !chan_tab[fd].tls)
		return NULL;
	return &chan_tab[fd];
}

int chan_attach(int fd, struct dnd_tls *t)
{
	if (fd < 0 || !t)
		return -EBADF;
	if (fd >= DND_CHAN_MAX)
		return -EMFILE;
	if (!__atomic_load_n(&chan_tab, __ATOMIC_ACQUIRE)) {
		struct chan *tab = calloc(DND_CHAN_MAX, sizeof(*tab)), *none = NULL;

		if (!tab)
			return -ENOMEM;
		/* Two threads' first attaches: one table wins. */
		if (!__atomic_compare_exchange_n(&chan_tab, &none, tab, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			free(tab);
	}
	chan_tab[fd].tls = t;
	chan_tab[fd].err[0] = '\0';
	return 0;
}

struct dnd_tls *chan_detach(int fd)
{
	struct chan *c = chan_of(fd);
	struct dnd_tls *t;

	if (!c)
		return NULL;
	t = c->tls;
	c->tls = NULL;
	return t;
}

struct dnd_tls *chan_tls(int fd)
{
	struct chan *c = chan_of(fd);

	return c ? c->tls : NULL;
}

const char *chan_err(int fd)
{
	struct chan *c = chan_of(fd);

	return c ? c->err : "";
}

ssize_t chan_read(int fd, void *buf, size_t n)
{
	struct chan *c = chan_of(fd);

	if (!c)
		return -EBADF;
	return tls_read(c->tls, buf, n, c->err, sizeof(c->err));
}

ssize_t chan_write(int fd, const void *buf, size_t n)
{
	struct chan *c = chan_of(fd);

	if (!c)
		return -EBADF;
	return tls_write(c->tls, buf, n, c->err, sizeof(c->err));
}

int chan_close_notify(int fd)
{
	struct chan *c = chan_of(fd);

	return c ? tls_close_notify(c->tls, c->err, sizeof(c->err)) : 0;
}

void chan_close(int fd)
{
	tls_free(chan_detach(fd));
	close(fd);
}
