// SPDX-License-Identifier: MIT
/*
 * fork + exec for bench's children. Everything a child prints is read while
 * it runs (a full pipe would stall it), and every wait has a deadline: a
 * stuck transfer becomes a failed cell, never a hung benchmark.
 */
#include <sys/types.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_proc.h"
#include "core/io.h"
#include "core/stats.h"

/* In the child, after bench_fork(): never returns. */
static void bench_exec(char *const argv[], const char *ns, int cpu)
{
	if (ns) {
		int nfd = open(ns, O_RDONLY | O_CLOEXEC);

		if (nfd == -1 || setns(nfd, CLONE_NEWNET) == -1) {
			dprintf(2, "dnd: cannot enter network namespace %s: "
				"%s\n", ns, strerror(errno));
			_exit(127);
		}
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) == -1) {
			dprintf(2, "dnd: cannot pin to CPU %d: %s\n", cpu,
				strerror(errno));
			_exit(127);
		}
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	dprintf(2, "dnd: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/*
 * Forks with stdin on /dev/null and stdout (and stderr when err) into pipes
 * the parent reads. Returns 0 in both (c->pid is 0 in the child), or -errno.
 */
static int bench_fork(struct bench_child *c, bool err)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, r, fd;

	memset(c, 0, sizeof(*c));
	c->fd_out = c->fd_err = -1;
	if (pipe2(po, O_CLOEXEC) == -1 || (err && pipe2(pe, O_CLOEXEC) == -1))
		goto fail;
	fflush(NULL);		/* or the child could write our buffers again */
	c->pid = fork();
	if (c->pid == -1)
		goto fail;
	if (c->pid == 0) {
		fd = open("/dev/null", O_RDONLY);
		if (fd == -1 || dup2(fd, 0) == -1 || dup2(po[1], 1) == -1 ||
		    (err && dup2(pe[1], 2) == -1))
			_exit(127);
		return 0;
	}
	close(po[1]);
	c->fd_out = po[0];
	fcntl(c->fd_out, F_SETFL, O_NONBLOCK);
	if (err) {
		close(pe[1]);
		c->fd_err = pe[0];
		fcntl(c->fd_err, F_SETFL, O_NONBLOCK);
	}
	c->started = true;
	return 0;
fail:
	r = -errno;
	for (int i = 0; i < 2; i++) {
		if (po[i] != -1)
			close(po[i]);
		if (pe[i] != -1)
			close(pe[i]);
	}
	c->pid = 0;
	return r;
}

int bench_spawn(struct bench_child *c, char *const argv[], const char *netns,
		int cpu)
{
	int r = bench_fork(c, true);

	if (!r && c->pid == 0)
		bench_exec(argv, netns, cpu);
	return r;
}

int bench_spawn_fn(struct bench_child *c, int (*fn)(void *arg), void *arg)
{
	int r = bench_fork(c, false);

	if (!r && c->pid == 0)
		_exit(fn(arg));
	return r;
}

/* Reads what is there; closes the fd at end of file. */
static void bench_drain(struct bench_child *c, int *fd)
{
	char buf[16384];
	ssize_t n;

	for (;;) {
		n = read(*fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(*fd);
			*fd = -1;
			return;
		}
		if (fd == &c->fd_err) {
			size_t room = sizeof(c->err) - 1 - c->err_len;
			size_t k = (size_t)n < room ? (size_t)n : room;

			memcpy(c->err + c->err_len, buf, k);
			c->err_len += k;
			c->err[c->err_len] = '\0';
			continue;
		}
		if (c->out_len + (size_t)n + 1 > c->out_cap) {
			size_t cap = c->out_cap ? c->out_cap : 8192;
			char *p;

			while (c->out_len + (size_t)n + 1 > cap)
				cap *= 2;
			p = realloc(c->out, cap);
			if (!p)
				continue;	/* keep what fits; parse will fail */
			c->out = p;
			c->out_cap = cap;
		}
		memcpy(c->out + c->out_len, buf, (size_t)n);
		c->out_len += (size_t)n;
		c->out[c->out_len] = '\0';
	}
}

static void bench_kill(struct bench_child *c)
{
	if (c->pid > 0 && !c->reaped) {
		kill(c->pid, SIGKILL);
		c->killed = true;
	}
}

/* Reaps c if it has exited (or waits when block). True once reaped. */
static bool bench_reap(struct bench_child *c, bool block)
{
	pid_t r;

	if (!c->started || c->reaped)
		return true;
	do
		r = waitpid(c->pid, &c->status, block ? 0 : WNOHANG);
	while (r == -1 && errno == EINTR);
	if (r == c->pid || (r == -1 && errno == ECHILD)) {
		c->reaped = true;
		return true;
	}
	return false;
}

/* Polls the open pipes of all children for up to ms milliseconds. */
static void bench_poll(struct bench_child *c, int n, int ms)
{
	struct pollfd pfd[16];
	struct bench_child *owner[16];
	int *which[16];
	int k = 0, i;

	for (i = 0; i < n && k < 15; i++) {
		int *fds[2] = { &c[i].fd_out, &c[i].fd_err };

		for (int f = 0; f < 2; f++) {
			if (*fds[f] == -1)
				continue;
			pfd[k] = (struct pollfd){ .fd = *fds[f], .events = POLLIN };
			owner[k] = &c[i];
			which[k++] = fds[f];
		}
	}
	if (!k) {
		poll(NULL, 0, ms);
		return;
	}
	if (poll(pfd, (nfds_t)k, ms) <= 0)
		return;
	for (i = 0; i < k; i++)
		if (pfd[i].revents)
			bench_drain(owner[i], which[i]);
}

int bench_wait(struct bench_child *c, int n, double deadline, double grace)
{
	bool any_done = false;
	int i, alive, ret = 0;

	for (;;) {
		double now = stats_now();

		if (io_stop_signal || now >= deadline) {
			ret = io_stop_signal ? -EINTR : -ETIMEDOUT;
			for (i = 0; i < n; i++)
				bench_kill(&c[i]);
			break;
		}
		bench_poll(c, n, (int)((deadline - now) * 1000 < 100 ?
				       (deadline - now) * 1000 + 1 : 100));
		for (i = 0, alive = 0; i < n; i++) {
			if (!bench_reap(&c[i], false)) {
				alive++;
			} else if (!any_done && c[i].started) {
				any_done = true;
				if (now + grace < deadline)
					deadline = now + grace;
			}
		}
		if (!alive)
			break;
	}
	for (i = 0; i < n; i++) {
		bench_reap(&c[i], true);
		/* The child is gone: whatever is still in its pipes is final. */
		while (c[i].fd_out != -1 || c[i].fd_err != -1) {
			if (c[i].fd_out != -1)
				bench_drain(&c[i], &c[i].fd_out);
			if (c[i].fd_err != -1)
				bench_drain(&c[i], &c[i].fd_err);
			if (c[i].fd_out != -1 || c[i].fd_err != -1)
				bench_poll(&c[i], 1, 100);
			if (stats_now() > deadline + 2)
				break;	/* a grandchild holds the pipe open */
		}
	}
	return ret;
}

void bench_child_free(struct bench_child *c)
{
	bench_kill(c);
	bench_reap(c, true);
	if (c->fd_out != -1)
		close(c->fd_out);
	if (c->fd_err != -1)
		close(c->fd_err);
	c->fd_out = c->fd_err = -1;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_cap = 0;
	c->started = false;
	c->pid = 0;
}

bool bench_child_ok(const struct bench_child *c)
{
	return c->reaped && !c->killed && WIFEXITED(c->status) &&
	       WEXITSTATUS(c->status) == 0;
}

const char *bench_child_why(const struct bench_child *c, char *buf,
			    size_t len)
{
	char line[512];
	size_t k = strcspn(c->err, "\n");

	if (k >= sizeof(line))
		k = sizeof(line) - 1;
	memcpy(line, c->err, k);
	line[k] = '\0';
	if (!c->started)
		snprintf(buf, len, "not started");
	else if (c->killed)
		snprintf(buf, len, "killed at the deadline%s%s",
			 line[0] ? ": " : "", line);
	else if (WIFSIGNALED(c->status))
		snprintf(buf, len, "died by signal %d (%s)%s%s",
			 WTERMSIG(c->status), strsignal(WTERMSIG(c->status)),
			 line[0] ? ": " : "", line);
	else
		snprintf(buf, len, "exit %d%s%s", WEXITSTATUS(c->status),
			 line[0] ? ": " : "", line);
	return buf;
}

int bench_run_tool(char *const argv[], const char *netns, double timeout,
		   char *err, size_t len)
{
	struct bench_child c;
	char why[600];
	int r = bench_spawn(&c, argv, netns, -1);

	if (r) {
		snprintf(err, len, "cannot start %s: %s", argv[0], strerror(-r));
		return r;
	}
	r = bench_wait(&c, 1, stats_now() + timeout, timeout);
	if (!r && c.reaped && WIFEXITED(c.status)) {
		r = WEXITSTATUS(c.status);
		if (r)
			snprintf(err, len, "%s: %s", argv[0],
				 bench_child_why(&c, why, sizeof(why)));
	} else {
		snprintf(err, len, "%s: %s", argv[0],
			 bench_child_why(&c, why, sizeof(why)));
		r = r ? r : -ECHILD;
	}
	bench_child_free(&c);
	return r;
}

bool bench_find_tool(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[1024];
	const char *p;

	/* Tools like ip and tc live in sbin, which a user's PATH may lack. */
	snprintf(dirs, sizeof(dirs), "%s:/usr/local/sbin:/usr/local/bin:"
		 "/usr/sbin:/usr/bin:/sbin:/bin", path ? path : "");
	for (p = dirs; *p;) {
		size_t k = strcspn(p, ":");

		snprintf(buf, len, "%.*s/%s", (int)k, p, name);
		if (k && access(buf, X_OK) == 0)
			return true;
		p += k;
		if (*p == ':')
			p++;
	}
	buf[0] = '\0';
	return false;
}
