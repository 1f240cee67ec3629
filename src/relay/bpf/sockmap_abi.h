/* SPDX-License-Identifier: MIT */
/*
 * What the relay's BPF program (relay_sockmap.bpf.c) and its loader
 * (relay_bpf.c) share: the map values. Slot i of the sockmap holds one
 * socket of a flow; its peer is in another slot.
 */
#ifndef DND_SOCKMAP_ABI_H
#define DND_SOCKMAP_ABI_H

#include <linux/types.h>

/* peers: a socket's cookie -> its slot and its peer's slot. */
struct dnd_sm_peer {
	__u32 self;
	__u32 peer;
};

/* counts[slot]: what the program did with the bytes that socket received. */
struct dnd_sm_count {
	__u64 fwd;	/* redirected to the peer's send side */
	__u64 passed;	/* no peer in the map yet (or any more): kept in the
			 * socket's own queue, where the relay sees them */
};

#endif
