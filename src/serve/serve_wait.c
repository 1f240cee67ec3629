// SPDX-License-Identifier: MIT
/* dnd serve's waiting connections (serve_wait.h). */
#include <sys/resource.h>
#include <sys/socket.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int serve_wait_peek(const struct serve_waiting *w, char *what, size_t len)
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
