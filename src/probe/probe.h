/* SPDX-License-Identifier: MIT */
/*
 * What this kernel and this process can do, checked live where it matters,
 * plus the splice-relay behaviours from HAProxy's 2009 netdev thread. Used by `dnd probe`, the bench
 * runner and the tests; method usability itself stays in method_probe().
 */
#ifndef DND_PROBE_H
#define DND_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#define DND_PROBE_NVAL 4
#define DND_PROBE_UNSET (-1LL)	/* a val[] the check did not get to */

/* A splice-relay behaviour (pass/fail) rather than a feature. */
#define DND_PF_SPLICE_RELAY (1u << 0)

/* The outcome of one check. */
struct probe_result {
	int err;		/* 0 present (or pass), else -errno */
	char why[320];		/* what was seen, or why it is missing */
	long long val[DND_PROBE_NVAL];	/* numbers behind why, or UNSET */
};

struct probe_feature {
	const char *name;	/* for --require: "splice-socket-pipe" */
	const char *what;	/* one line: what the check does */
	unsigned int flags;	/* DND_PF_* */
	const char *keys[DND_PROBE_NVAL];	/* JSON names of val[] */
	int (*check)(struct probe_result *r);
};

/* The feature table, ended by an entry whose name is NULL. */
const struct probe_feature *probe_features(void);

/* The feature called name, or NULL (method names are not features). */
const struct probe_feature *probe_feature_find(const char *name);

/*
 * Runs f's check into *r; when a method has the same name, its probe hook
 * runs first and a "no" from it is the answer. Live checks use loopback
 * TCP, pipes and a temporary file, each bounded to about a second, and
 * close everything they open.
 * Returns r->err: 0 present, else -ENOSYS (kernel lacks it), -EOPNOTSUPP
 * (not built, or refused for this use), -EPERM/-EACCES (not allowed to this
 * process), -ETIMEDOUT or another -errno; never -ENOENT.
 */
int probe_run(const struct probe_feature *f, struct probe_result *r);

/*
 * Checks a name: a feature of the table or a method of the registry (whose
 * probe hook answers). Returns as probe_run(), or -ENOENT for an unknown
 * name. why (may be NULL when len is 0) gets what was seen or why not.
 */
int probe_feature(const char *name, char *why, size_t len);

/* Every name probe_feature() knows, comma-separated, methods first. */
const char *probe_names(char *buf, size_t len);

/* Kernel and pipe limits. Numbers read from /proc are -1 when unreadable. */
struct probe_kernel {
	char release[65];
	long page_size;
	long long pipe_max_size;	/* /proc/sys/fs/pipe-max-size */
	long long pipe_user_pages_soft;	/* 0: no limit */
	long long pipe_user_pages_hard;	/* 0: no limit */
	long long pipe_default;		/* F_GETPIPE_SZ of a new pipe */
	long long pipe_largest;		/* largest F_SETPIPE_SZ granted, up to
					 * pipe-max-size */
	bool pipe_beyond_max;		/* 2x pipe-max-size granted too
					 * (CAP_SYS_RESOURCE) */
	long long io_uring_disabled;	/* /proc/sys/kernel/io_uring_disabled */
};

/* Fills *k; never fails (unknown numbers stay -1). */
void probe_kernel(struct probe_kernel *k);

#define DND_PROBE_URING_OPS 10

/* io_uring and its opcodes as IORING_REGISTER_PROBE reports them. */
struct probe_uring {
	bool built;		/* dnd was built with liburing */
	int err;		/* 0 a ring could be set up, else -errno */
	char why[160];
	int last_op;		/* highest opcode the kernel knows, or -1 */
	struct {
		const char *name;	/* "SPLICE" */
		bool ok;
	} op[DND_PROBE_URING_OPS];
	int nops;
};

/* Fills *u. Without liburing: built false, err -EOPNOTSUPP, "not built". */
void probe_uring(struct probe_uring *u);

#endif
