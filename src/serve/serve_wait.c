// SPDX-License-Identifier: MIT
/* dnd serve's waiting connections (serve_wait.h). */
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/net.h"
#include "serve/handshake.h"
#include "serve/serve_wait.h"

unsigned int serve_wait_max(unsigned int fds)
{
	rlim_t want = (rlim_t)SERVE_WAIT_MAX + fds, room;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return 16;
	if (rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	room = rl.rlim_cur > (rlim_t)fds ? rl.rlim_cur - fds : 0;
	if (room < 16)
		room = 16;
	return room < SERVE_WAIT_MAX ? (unsigned int)room : SERVE_WAIT_MAX;
}

void serve_wait_init(struct serve_waiting *w, int fd,
		     const struct sockaddr *sa, socklen_t sl,
		     const struct dnd_tls_cfg *tls, double now)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	struct dnd_hello h = {
		.role = DND_WIRE_SERVE,
		.version = DND_WIRE_VERSION,
		.tls = tls,
		.deadline = now + DND_HS_TIMEOUT,
	};

	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->t0 = now;
	w->events = POLLIN;
	hello_acceptor_init(&w->hs, &h);
	if (sa->sa_family == AF_INET && sl >= sizeof(*s4)) {
		w->src[10] = w->src[11] = 0xff;
		memcpy(w->src + 12, &s4->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6 && sl >= sizeof(*s6)) {
		memcpy(w->src, &s6->sin6_addr, 16);
	}
	net_addr_str(sa, sl, w->peer, sizeof(w->peer));
}

/* Whether a readable connection holds a byte: 0, or -1 and the reason it
 * never will (closed, reset) in what. */
static int serve_wait_peek(const struct serve_waiting *w, char *what,
			   size_t len)
{
	char c;
	ssize_t n = recv(w->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n == 1 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return 0;
	if (n == 0)
		snprintf(what, len, "the peer closed the connection before "
			 "the client's hello");
	else
		snprintf(what, len, "handshake client's hello: %s",
			 strerror(errno));
	return -1;
}

/* After a failed opening: our last bytes (a preamble that names the
 * mismatch, TLS's alert) must reach the client, and closing with its
 * unread bytes in our queue would reset the connection and drop them. So:
 * FIN, then read and discard what it still sends, for a second at most. */
static enum serve_wait_st serve_wait_linger(struct serve_waiting *w,
					    short re, double now)
{
	char junk[4096];
	ssize_t n = 1;

	if (re)
		n = recv(w->fd, junk, sizeof(junk), MSG_DONTWAIT);
	if (now < w->linger && (n > 0 || (n < 0 && errno == EAGAIN)))
		return SERVE_WAIT_ON;
	serve_wait_close(w);
	return SERVE_WAIT_GONE;
}

enum serve_wait_st serve_wait_poll(struct serve_waiting *w, short re,
				   double now, char *what, size_t len)
{
	int r;

	if (w->linger)
		return serve_wait_linger(w, re, now);
	if (w->ready)
		return SERVE_WAIT_READY;
	/* A client that trickles its bytes is late all the same. */
	if (now >= w->hs.h.deadline) {
		if (w->hs.got)
			hello_accept_late(&w->hs, what, len);
		else
			snprintf(what, len, "handshake timed out at the "
				 "client's hello");
		return SERVE_WAIT_DROP;
	}
	if (!re)
		return SERVE_WAIT_ON;
	if (!w->hs.got && serve_wait_peek(w, what, len))
		return SERVE_WAIT_DROP;
	/* Keyless has no proof: its first byte is all it takes. */
	r = w->hs.h.tls ? hello_accept_step(w->fd, &w->hs, &w->events, what,
					    len) : 0;
	if (r == -EAGAIN)
		return SERVE_WAIT_ON;
	if (!r) {
		w->ready = true;
		return SERVE_WAIT_READY;
	}
	hello_acceptor_free(&w->hs);
	if (!w->hs.sent)
		return SERVE_WAIT_FAILED;
	shutdown(w->fd, SHUT_WR);
	w->linger = now + 1;
	w->events = POLLIN;
	return SERVE_WAIT_FAILED;
}

void serve_wait_close(struct serve_waiting *w)
{
	hello_acceptor_free(&w->hs);
	close(w->fd);
	w->fd = -1;
}

struct serve_waiting serve_wait_take(struct serve_waiting *w,
				     struct pollfd *pfd, unsigned int *n,
				     unsigned int i)
{
	struct serve_waiting e = w[i];
	unsigned int left = *n - i - 1;

	memmove(w + i, w + i + 1, left * sizeof(*w));
	if (pfd)
		memmove(pfd + i, pfd + i + 1, left * sizeof(*pfd));
	(*n)--;
	return e;
}

/* By address, then oldest first. */
static int serve_src_cmp(const void *a, const void *b)
{
	const struct serve_src *x = a, *y = b;
	int c = memcmp(x->a, y->a, sizeof(x->a));

	if (c)
		return c;
	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

unsigned int serve_wait_heaviest(struct serve_src *s, unsigned int n)
{
	unsigned int i, run = 0, best = 0, best_run = 0;

	qsort(s, n, sizeof(*s), serve_src_cmp);
	for (i = 0; i < n; i++) {
		if (i && memcmp(s[i].a, s[i - 1].a, sizeof(s[i].a)))
			run = 0;
		if (++run > best_run) {
			best_run = run;
			best = i + 1 - run;
		}
	}
	return s[best].i;
}
