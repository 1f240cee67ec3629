// SPDX-License-Identifier: MIT
/*
 * Level-triggered epoll loop [redis ae.c, ae_epoll.c]. Level triggering keeps
 * the relay simple: a flow that stops early (byte budget, full pipe) is simply
 * reported again by the next epoll_wait, with no ready list of our own.
 */
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relay/evloop.h"
#include "core/stats.h"

/* The four places that talk to epoll. */

static int evloop_api_create(struct evloop *el)
{
	el->api = calloc((size_t)el->maxevents, sizeof(struct epoll_event));
	if (!el->api)
		return -ENOMEM;
	el->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (el->epfd == -1)
		return -errno;
	return 0;
}

static int evloop_api_ctl(struct evloop *el, int fd, unsigned int old,
			  unsigned int mask)
{
	struct epoll_event ee = { .events = 0, .data.fd = fd };

	/* RDHUP rides along with reads: it tells a short read from the end.
	 * EPOLLEXCLUSIVE refuses it (EINVAL), and a listener needs none. */
	if (mask & DND_EV_READ)
		ee.events |= EPOLLIN | EPOLLRDHUP;
	if (mask & DND_EV_RDHUP)
		ee.events |= EPOLLRDHUP;
	if (mask & DND_EV_WRITE)
		ee.events |= EPOLLOUT;
	if (mask & DND_EV_EXCL) {
		ee.events &= ~(uint32_t)EPOLLRDHUP;
		ee.events |= EPOLLEXCLUSIVE;
	}
	el->ctl_calls++;
	if (epoll_ctl(el->epfd, old ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd,
		      &ee) == -1)
		return -errno;
	return 0;
}

static void evloop_api_del(struct evloop *el, int fd)
{
	struct epoll_event ee = { 0 };

	el->ctl_calls++;
	epoll_ctl(el->epfd, EPOLL_CTL_DEL, fd, &ee);
}

static int evloop_api_poll(struct evloop *el, int timeout_ms)
{
	struct epoll_event *ev = el->api;
	int n, i;

	n = epoll_wait(el->epfd, ev, el->maxevents, timeout_ms);
	el->now = stats_now();
	if (n == -1)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		unsigned int m = 0;

		if (ev[i].events & EPOLLIN)
			m |= DND_EV_READ;
		if (ev[i].events & EPOLLOUT)
			m |= DND_EV_WRITE;
		if (ev[i].events & EPOLLRDHUP)
			m |= DND_EV_READ | DND_EV_RDHUP;
		/* Errors surface from the next read or write, so wake both. */
		if (ev[i].events & (EPOLLERR | EPOLLHUP))
			m |= DND_EV_READ | DND_EV_WRITE | DND_EV_ERR;
		el->fired[i].fd = ev[i].data.fd;
		el->fired[i].mask = m;
	}
	if (n > 0) {
		el->wakeups++;
		el->events += (uint64_t)n;
	}
	return n;
}

int evloop_init(struct evloop *el, int setsize, int maxevents)
{
	int r;

	memset(el, 0, sizeof(*el));
	el->epfd = -1;
	if (setsize < 1 || maxevents < 1)
		return -EINVAL;
	el->setsize = setsize;
	el->maxevents = maxevents;
	el->files = calloc((size_t)setsize, sizeof(*el->files));
	el->fired = calloc((size_t)maxevents, sizeof(*el->fired));
	if (!el->files || !el->fired) {
		r = -ENOMEM;
		goto fail;
	}
	r = evloop_api_create(el);
	if (r)
		goto fail;
	el->now = stats_now();
	return 0;
fail:
	evloop_free(el);
	return r;
}

void evloop_free(struct evloop *el)
{
	if (el->epfd != -1)
		close(el->epfd);
	el->epfd = -1;
	free(el->files);
	free(el->fired);
	free(el->api);
	el->files = NULL;
	el->fired = NULL;
	el->api = NULL;
}

int evloop_set(struct evloop *el, int fd, unsigned int mask, evloop_fn rfn,
	       evloop_fn wfn, void *data)
{
	struct evloop_file *fe;
	bool want_err = mask == DND_EV_ERR;
	int r;

	if (fd < 0 || fd >= el->setsize)
		return -ERANGE;
	fe = &el->files[fd];
	if (rfn)
		fe->rfn = rfn;
	if (wfn)
		fe->wfn = wfn;
	if (data)
		fe->data = data;
	mask &= DND_EV_READ | DND_EV_WRITE | DND_EV_EXCL | DND_EV_RDHUP;
	if (mask == DND_EV_EXCL)
		mask = 0;
	/* Errors only: in epoll with no events (EPOLLERR|EPOLLHUP are implied). */
	if (!mask && want_err)
		mask = DND_EV_ERR;
	if (mask == fe->mask)
		return 0;
	if (!mask) {
		evloop_api_del(el, fd);
	} else {
		r = evloop_api_ctl(el, fd, fe->mask, mask);
		if (r)
			return r;
	}
	fe->mask = mask;
	return 0;
}

void evloop_del(struct evloop *el, int fd)
{
	if (fd < 0 || fd >= el->setsize)
		return;
	if (el->files[fd].mask)
		evloop_api_del(el, fd);
	memset(&el->files[fd], 0, sizeof(el->files[fd]));
}

unsigned int evloop_mask(const struct evloop *el, int fd)
{
	return fd >= 0 && fd < el->setsize ? el->files[fd].mask : 0;
}

int evloop_poll(struct evloop *el, int timeout_ms)
{
	int n = evloop_api_poll(el, timeout_ms), i;

	for (i = 0; i < n; i++) {
		int fd = el->fired[i].fd;
		unsigned int m = el->fired[i].mask;
		struct evloop_file *fe = &el->files[fd];
		bool did_read = false;

		if ((fe->mask & m & DND_EV_READ) ||
		    ((fe->mask & DND_EV_RDHUP) &&
		     (m & (DND_EV_RDHUP | DND_EV_ERR))) ||
		    (fe->mask == DND_EV_ERR && (m & DND_EV_ERR))) {
			fe->rfn(el, fd, fe->data, m);
			did_read = true;
		}
		/* The callback may have removed fd or changed its entry. */
		fe = &el->files[fd];
		if ((fe->mask & m & DND_EV_WRITE) &&
		    (!did_read || fe->wfn != fe->rfn))
			fe->wfn(el, fd, fe->data, m);
	}
	return n;
}

int evloop_signalfd(struct evloop *el, sigset_t *old, evloop_fn fn,
		    void *data)
{
	struct sigaction sa;
	sigset_t set;
	int fd, e;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, old) == -1)
		return -errno;
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd == -1)
		return -errno;
	e = evloop_set(el, fd, DND_EV_READ, fn, fn, data);
	if (e) {
		close(fd);
		return e;
	}
	return fd;
}

int evloop_signal_next(int fd)
{
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}
