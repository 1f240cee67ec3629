/* SPDX-License-Identifier: MIT */
/*
 * The BPF side of `dnd relay -m sockmap`: loading the program and maps
 * (relay/bpf/relay_sockmap.bpf.c, built into a skeleton), pairing a flow's
 * two sockets in them, and reading the bytes the kernel forwarded for them.
 */
#ifndef DND_RELAY_BPF_H
#define DND_RELAY_BPF_H

#include <stddef.h>
#include <stdint.h>

struct relay_bpf;

/* What the program did with the bytes one socket received. */
struct relay_bpf_count {
	uint64_t fwd;		/* redirected to its peer's send side */
	uint64_t passed;	/* left in its own queue: no peer in the map */
};

/*
 * Loads and attaches the program with room for `slots` sockets. Returns 0
 * with *out set, or -errno with why (cause and fix) in msg:
 * -EPERM: no CAP_BPF and CAP_NET_ADMIN; -EOPNOTSUPP: the kernel has no
 * sockmap (CONFIG_BPF_STREAM_PARSER, CONFIG_NET_SOCK_MSG); -EINVAL: the
 * verifier rejected the program (its last log line in msg).
 */
int relay_bpf_open(unsigned int slots, struct relay_bpf **out, char *msg,
		   size_t n);

struct bpf_object;

/*
 * relay_bpf_open() with edit (when not NULL) run on the opened object just
 * before it is loaded: for the unit test that makes the verifier reject
 * the program (tests/unit/test_relay_bpf.c). No option or variable of dnd
 * reaches it.
 */
int relay_bpf_open_edit(unsigned int slots,
			void (*edit)(struct bpf_object *obj),
			struct relay_bpf **out, char *msg, size_t n);

/* Detaches and frees; NULL is ignored. Sockets still in the map leave it. */
void relay_bpf_close(struct relay_bpf *b);

/*
 * Pairs fd[0] (slot[0]) with fd[1] (slot[1]): from now on the kernel
 * forwards what each receives to the other, including what already waits
 * in its receive queue. fd[1] goes in first, so that fd[0]'s bytes (a
 * client that sends at once) always find their peer. cookie[] gets each
 * socket's SO_COOKIE for relay_bpf_unpair(). Returns 0 or -errno.
 */
int relay_bpf_pair(struct relay_bpf *b, const int fd[2],
		   const uint32_t slot[2], uint64_t cookie[2]);

/* Takes both sockets of a pair out of the maps (before their close()). */
void relay_bpf_unpair(struct relay_bpf *b, const uint32_t slot[2],
		      const uint64_t cookie[2]);

/* The counts of slot; zeros if it cannot be read. */
void relay_bpf_count(struct relay_bpf *b, uint32_t slot,
		     struct relay_bpf_count *c);

/*
 * The live check of `dnd probe`: loads the program, pairs two loopback
 * connections and sees bytes cross in the kernel. 0, or -errno with why.
 */
int relay_bpf_selftest(char *msg, size_t n);

#endif
