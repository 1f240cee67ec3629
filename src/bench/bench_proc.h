/* SPDX-License-Identifier: MIT */
/*
 * Child processes for bench: fork + exec (or a function) with the output
 * captured through pipes, optionally inside a network namespace or pinned
 * to a CPU, and always bounded by a deadline after which they are killed.
 */
#ifndef DND_BENCH_PROC_H
#define DND_BENCH_PROC_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>

#define BENCH_ERR_KEEP	2048

struct bench_child {
	pid_t pid;		/* 0 once reaped or never started */
	int fd_out, fd_err;	/* -1 when closed */
	char *out;		/* everything on stdout, NUL-terminated */
	size_t out_len, out_cap;
	char err[BENCH_ERR_KEEP];	/* the start of stderr */
	size_t err_len;
	int status;		/* waitpid() status once reaped */
	bool started, reaped, killed;
};

/*
 * Starts argv[0] (searched in PATH unless it has a '/') with argv. netns:
 * path of a network namespace to enter first (/run/netns/NAME), or NULL.
 * cpu >= 0 pins the child to that CPU. stdin is /dev/null. Returns 0, or
 * -errno (c is then not started; bench_child_free() is still safe).
 */
int bench_spawn(struct bench_child *c, char *const argv[], const char *netns,
		int cpu);

/*
 * Forks a child that runs fn(arg) and exits with what it returns, for work
 * that needs this process's state (an inherited listening socket). Its
 * stdout is collected like bench_spawn()'s (fn writes its report there with
 * write(1, ...), never stdio); its stderr is the caller's. Returns 0 or
 * -errno as bench_spawn().
 */
int bench_spawn_fn(struct bench_child *c, int (*fn)(void *arg), void *arg);

/*
 * Collects the output of the n children until all have exited. deadline is
 * in stats_now() seconds; once one child has exited the others get at most
 * grace seconds more. Children still running then, or when SIGINT/SIGTERM
 * arrives (io_stop_signal), are killed with SIGKILL and reaped.
 * Returns 0, -ETIMEDOUT (someone was killed at the deadline) or -EINTR.
 */
int bench_wait(struct bench_child *c, int n, double deadline, double grace);

/* Kills (if running) and reaps c, closes its pipes and frees its output. */
void bench_child_free(struct bench_child *c);

/* True when c exited by itself with status 0. */
bool bench_child_ok(const struct bench_child *c);

/* "exit 1: <first stderr line>", "killed by signal 9", "killed at the
 * deadline" ... for messages. Returns buf. */
const char *bench_child_why(const struct bench_child *c, char *buf,
			    size_t len);

/*
 * Runs argv to completion within timeout seconds (a helper tool such as
 * ip or tc). Returns its exit status (0..255), or -errno when it could not
 * run, was killed or timed out; err gets the reason and its first stderr
 * line.
 */
int bench_run_tool(char *const argv[], const char *netns, double timeout,
		   char *err, size_t len);

/* Finds the executable name in PATH, then in the sbin and bin directories;
 * true with its path in buf, else false. */
bool bench_find_tool(const char *name, char *buf, size_t len);

#endif
