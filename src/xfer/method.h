/* SPDX-License-Identifier: MIT */
/*
 * A data path: one const struct per file in src/methods/, listed explicitly
 * in method.c. Only the transfer driver (xfer.c) calls the hooks; direction
 * hooks are optional and it tests them for NULL. A hook reads its settings
 * from x->cfg, keeps its state in x->priv and reports in x->out.
 */
#ifndef DND_METHOD_H
#define DND_METHOD_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>

struct dnd_xfer;
struct xfer_cfg;

#define DND_M_PIPE	(1u << 0)	/* moves data through a pipe */
#define DND_M_USERBUF	(1u << 1)	/* the sender's bytes pass through user
					 * memory, in order: it hashes them
					 * there (xfer_hash_inline) */
#define DND_M_ZEROCOPY	(1u << 2)	/* avoids a copy on some side */
#define DND_M_ACKWAIT	(1u << 3)	/* the sender gets a buffer back only
					 * when ACKs free its skbs (SEND_ZC,
					 * MSG_ZEROCOPY completions) */
#define DND_M_USERSOCK	(1u << 4)	/* every socket byte passes through
					 * user memory (io_read/io_write/
					 * io_recv/io_send): it runs keyed
					 * without kernel TLS (core/chan.h) */
#define DND_M_RECVBUF	(1u << 5)	/* the receiver's bytes pass through
					 * user memory, in order: it hashes
					 * them there (xfer_hash_inline) */
#define DND_M_SEEKS	(1u << 6)	/* each call moves the file's bytes at
					 * x->pos (its explicit offset, or the
					 * file position the driver lseeks
					 * to), so the driver can skip holes
					 * between calls (not with --direct) */

struct dnd_method {
	const char *name;
	const char *send_help;	/* one line for --help; NULL if cannot send */
	const char *recv_help;	/* one line for --help; NULL if cannot recv */
	unsigned int flags;
	/* How many buffers of -b one stream holds at the default --qd (0:
	 * none, the kernel moves the data): what dnd serve's --max-memory
	 * counts a session's -b by. */
	unsigned int nbuf;
	/* 0 when this kernel and process can use the method, else -errno and
	 * a reason in why. Single source of truth for probe, checks and bench. */
	int (*probe)(char *why, size_t len);
	/* 0 when the method can serve this end (c->sender, c->ep, c->fmode),
	 * else -EINVAL and a reason naming the fix. NULL: anything goes. */
	int (*check)(const struct xfer_cfg *c, char *why, size_t len);
	/* Allocates x->priv; the ends are open. 0 or -errno. */
	int (*setup)(struct dnd_xfer *x);
	/* The io_buffers() memory (of kind *huge) one stream's setup will
	 * ask for, so it can be made ready before the ends are open; 0 or
	 * NULL: none worth it. */
	size_t (*ready_mem)(const struct xfer_cfg *c, bool *huge);
	/* Moves at most len bytes file -> socket (send) or socket -> file
	 * (recv): the count, 0 at the end of the data, or -errno. */
	ssize_t (*send)(struct dnd_xfer *x, size_t len);
	ssize_t (*recv)(struct dnd_xfer *x, size_t len);
	/* The file half alone: lands n bytes of user memory at x->pos in
	 * x->fd, all or -errno. Used by recv and by filebench. NULL: none. */
	ssize_t (*put)(struct dnd_xfer *x, const void *buf, size_t n);
	/* Memory that put lands from fastest (io_uring's registered
	 * buffers), *len bytes of it; NULL: any memory does as well. */
	void *(*put_mem)(struct dnd_xfer *x, size_t *len);
	/* Waits for what is still in flight (completions, CQEs). 0/-errno. */
	int (*finish)(struct dnd_xfer *x);
	/* Frees x->priv; must accept a partly set-up x. */
	void (*teardown)(struct dnd_xfer *x);
};

/* Looks a method up by name; NULL when unknown. */
const struct dnd_method *method_find(const char *name);

/* The registry, NULL-terminated, in the order help and bench list them. */
const struct dnd_method *const *method_all(void);

/* "rw, mmap, sendfile, …" of the methods that can send (or receive). */
const char *method_names(bool send, char *buf, size_t len);

/*
 * Keyed (TLS), a method must move the socket's bytes through user memory
 * (DND_M_USERSOCK), unless this kernel does TLS (CONFIG_TLS): 0, or -1
 * with why: "-m sendfile with --key needs kernel TLS (...); use -m rw or
 * -m mmap" (flag names the option: "-m", "--peer-method").
 */
int method_keyed(const struct dnd_method *m, const char *flag, char *why,
		 size_t len);

/*
 * On an MPTCP socket (--mptcp), what the kernel refuses (6.18: SO_ZEROCOPY
 * and io_uring's SEND_ZC when sending, TCP_ZEROCOPY_RECEIVE's mapping when
 * receiving): 0, or -1 with why: "-m zerocopy cannot send on an MPTCP
 * socket: ...; use -m sendfile or -m rw" (flag names the option).
 */
int method_mptcp(const struct dnd_method *m, bool sender, const char *flag,
		 char *why, size_t len);

/* Runs m->probe, or reports usable when it has none. */
int method_probe(const struct dnd_method *m, char *why, size_t len);

#endif
