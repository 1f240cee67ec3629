// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dnd relay -m sockmap: the kernel forwards each flow. Both sockets of a
 * flow sit in `socks`; every skb a socket receives is redirected, in
 * softirq, to its peer's send side (no BPF_F_INGRESS), and its length
 * counted in `counts` for the relay's stats. The relay never reads or
 * writes a byte itself; it only sees each socket's FIN or reset (epoll).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "sockmap_abi.h"

/* max_entries are set by the loader from --max-conn. */
struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2);
	__type(key, __u64);
	__type(value, struct dnd_sm_peer);
} peers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct dnd_sm_count);
} counts SEC(".maps");

SEC("sk_skb/stream_verdict")
int dnd_relay_verdict(struct __sk_buff *skb)
{
	__u64 cookie = bpf_get_socket_cookie(skb);
	struct dnd_sm_peer *p = bpf_map_lookup_elem(&peers, &cookie);
	struct dnd_sm_count *c;
	__u32 self;

	if (!p)
		return SK_PASS;
	/*
	 * A bare FIN arrives as an empty skb. Redirected, the peer's send
	 * worker would get 0 from skb_send_sock() and take it for a broken
	 * pipe: EPIPE on the peer and no more sending [sk_psock_backlog()].
	 * The relay passes FINs on itself (it sees EPOLLRDHUP).
	 */
	if (!skb->len)
		return SK_DROP;
	self = p->self;
	c = bpf_map_lookup_elem(&counts, &self);
	/*
	 * Once one skb of this socket stayed behind (no peer in the map yet),
	 * every later one stays too: redirected, it would reach the peer
	 * ahead of the ones left here. The relay resets the flow.
	 */
	if (c && c->passed) {
		__sync_fetch_and_add(&c->passed, skb->len);
		return SK_PASS;
	}
	if (bpf_sk_redirect_map(skb, &socks, p->peer, 0) != SK_PASS) {
		/* The peer is not in the map: keep the bytes on this socket
		 * (the relay sees them and resets the flow). */
		if (c)
			__sync_fetch_and_add(&c->passed, skb->len);
		return SK_PASS;
	}
	if (c)
		__sync_fetch_and_add(&c->fwd, skb->len);
	return SK_PASS;	/* with the redirect the helper set */
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
