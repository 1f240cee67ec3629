// SPDX-License-Identifier: MIT
/*
 * What this kernel and process can do: kernel and pipe limits, io_uring's
 * opcodes, and the feature table that `dnd probe --require`, bench and the
 * tests share. The live checks are in probe_live.c (features) and
 * probe_relay.c (the splice-relay behaviours from HAProxy's 2009 netdev
 * thread).
 */
#include <sys/utsname.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef DND_HAVE_LIBURING
#include <liburing.h>
#endif

#include "core/kernel.h"
#include "xfer/method.h"
#include "core/pipe.h"
#include "core/tls_ktls.h"
#include "probe/probe.h"
#include "probe/probe_check.h"
#include "probe/probe_live.h"
#include "probe/probe_relay.h"
#include "relay/relay_bpf.h"

/* ---- kernel facts ---- */

static void probe_pipes(struct probe_kernel *k)
{
	long long want = k->pipe_max_size > 0 ? k->pipe_max_size : 1 << 20;
	struct dnd_pipe p;

	if (pipe_open(&p, 0))
		return;
	k->pipe_default = p.size;
	/* Halve from pipe-max-size: the per-user hard limit, or a size over
	 * pipe-max-size without CAP_SYS_RESOURCE, is refused with EPERM. */
	for (; want >= k->pipe_default && want <= INT_MAX; want /= 2) {
		if (fcntl(p.wr, F_SETPIPE_SZ, (int)want) != -1) {
			k->pipe_largest = fcntl(p.wr, F_GETPIPE_SZ);
			break;
		}
	}
	if (k->pipe_max_size > 0 && k->pipe_max_size <= INT_MAX / 2)
		k->pipe_beyond_max = fcntl(p.wr, F_SETPIPE_SZ,
					   (int)k->pipe_max_size * 2) != -1;
	pipe_close(&p);
}

void probe_kernel(struct probe_kernel *k)
{
	struct utsname u;

	memset(k, 0, sizeof(*k));
	k->pipe_default = k->pipe_largest = -1;
	if (uname(&u) == 0)
		snprintf(k->release, sizeof(k->release), "%s", u.release);
	k->page_size = sysconf(_SC_PAGESIZE);
	k->pipe_max_size = k->pipe_user_pages_soft = -1;
	k->pipe_user_pages_hard = k->io_uring_disabled = -1;
	kernel_read_ll("/proc/sys/fs/pipe-max-size", &k->pipe_max_size);
	kernel_read_ll("/proc/sys/fs/pipe-user-pages-soft",
		       &k->pipe_user_pages_soft);
	kernel_read_ll("/proc/sys/fs/pipe-user-pages-hard",
		       &k->pipe_user_pages_hard);
	kernel_read_ll("/proc/sys/kernel/io_uring_disabled",
		       &k->io_uring_disabled);
	probe_pipes(k);
}
/* ---- io_uring ---- */

static const char *const uring_op_names[DND_PROBE_URING_OPS] = {
	"READ", "WRITE",  "READ_FIXED", "WRITE_FIXED", "SEND",
	"RECV", "SPLICE", "TEE",	"SEND_ZC",     "SENDMSG_ZC",
};

#ifdef DND_HAVE_LIBURING
static const int uring_op_codes[DND_PROBE_URING_OPS] = {
	IORING_OP_READ,	       IORING_OP_WRITE, IORING_OP_READ_FIXED,
	IORING_OP_WRITE_FIXED, IORING_OP_SEND,	IORING_OP_RECV,
	IORING_OP_SPLICE,      IORING_OP_TEE,	IORING_OP_SEND_ZC,
	IORING_OP_SENDMSG_ZC,
};

static void uring_fill(struct probe_uring *u)
{
	struct io_uring ring;
	struct io_uring_probe *p;
	int e = io_uring_queue_init(4, &ring, 0);

	u->built = true;
	if (e < 0) {
		u->err = kernel_uring_why(e, u->why, sizeof(u->why));
		return;
	}
	p = io_uring_get_probe_ring(&ring);
	if (!p) {
		u->err = -EOPNOTSUPP;
		snprintf(u->why, sizeof(u->why),
			 "IORING_REGISTER_PROBE refused "
			 "(kernel older than 5.6): opcodes unknown");
	} else {
		u->last_op = p->last_op;
		for (int i = 0; i < u->nops; i++)
			u->op[i].ok =
				io_uring_opcode_supported(p, uring_op_codes[i]);
		io_uring_free_probe(p);
		snprintf(u->why, sizeof(u->why),
			 "a ring was set up; "
			 "IORING_REGISTER_PROBE knows opcodes 0..%d",
			 u->last_op);
	}
	io_uring_queue_exit(&ring);
}
#endif

void probe_uring(struct probe_uring *u)
{
	memset(u, 0, sizeof(*u));
	u->last_op = -1;
	u->nops = DND_PROBE_URING_OPS;
	for (int i = 0; i < u->nops; i++)
		u->op[i].name = uring_op_names[i];
#ifdef DND_HAVE_LIBURING
	uring_fill(u);
#else
	u->err = -EOPNOTSUPP;
	snprintf(u->why, sizeof(u->why),
		 "not built: liburing was not found "
		 "when dnd was built; install liburing-dev and rebuild");
#endif
}

static int check_uring(struct probe_result *r)
{
	struct probe_uring u;

	probe_uring(&u);
	r->val[0] = u.last_op;
	return probe_res(r, u.err, "%s", u.why);
}

static int uring_op(struct probe_result *r, const char *name, const char *since)
{
	struct probe_uring u;

	probe_uring(&u);
	if (u.err)
		return probe_res(r, u.err, "%s", u.why);
	for (int i = 0; i < u.nops; i++)
		if (!strcmp(u.op[i].name, name))
			return u.op[i].ok
				       ? probe_res(r, 0,
						   "IORING_OP_%s supported",
						   name)
				       : probe_res(r, -EOPNOTSUPP,
						   "this kernel lacks "
						   "IORING_OP_%s (Linux %s+)",
						   name, since);
	return probe_res(r, -EOPNOTSUPP, "IORING_OP_%s is not probed", name);
}

static int check_uring_splice(struct probe_result *r)
{
	return uring_op(r, "SPLICE", "5.7");
}

static int check_uring_send_zc(struct probe_result *r)
{
	return uring_op(r, "SEND_ZC", "6.0");
}
/* ---- features ---- */

static int check_pipe_resize(struct probe_result *r)
{
	struct dnd_pipe p;
	int e = pipe_open(&p, 0), want;

	if (e)
		return probe_res(r, e, "pipe: %s", strerror(-e));
	r->val[0] = p.size;
	want = (int)p.size * 2;
	e = fcntl(p.wr, F_SETPIPE_SZ, want) == -1 ? -errno : 0;
	if (!e)
		r->val[1] = fcntl(p.wr, F_GETPIPE_SZ);
	pipe_close(&p);
	if (e == -EINVAL)
		return probe_res(r, -ENOSYS,
				 "F_SETPIPE_SZ is not in this kernel "
				 "(Linux 2.6.35+)");
	if (e)
		return probe_res(r, e,
				 "F_SETPIPE_SZ %d: %s (see "
				 "/proc/sys/fs/pipe-user-pages-hard)",
				 want, strerror(-e));
	return probe_res(r, 0, "F_SETPIPE_SZ %d on a %lld-byte pipe: got %lld",
			 want, r->val[0], r->val[1]);
}

/* Kernel TLS: what tls.c says when a session stays in user space. */
static int check_ktls(struct probe_result *r)
{
	struct tls_ktls_info k;
	int err = tls_ktls_check(&k, r->why, sizeof(r->why));

	r->val[0] = k.ulp_listed;
	r->val[1] = -k.ulp_err;
	r->val[2] = k.openssl;
	r->err = err;
	return err;
}

/*
 * dnd relay -m sockmap: the program loads and two loopback sockets paired
 * in its map pass bytes. -EPERM: no privileges; -EOPNOTSUPP: no sockmap
 * in this kernel; -EINVAL: the verifier said no; -EIO: nothing crossed.
 */
static int check_sockmap(struct probe_result *r)
{
	r->err = relay_bpf_selftest(r->why, sizeof(r->why));
	if (r->err == -EOPNOTSUPP)
		r->err = -ENOSYS;
	return r->err;
}

/* Names are what --require takes; "what" fits the table's 50 columns. */
static const struct probe_feature features[] = {
	{ "pipe-resize", "F_SETPIPE_SZ doubles a new pipe", 0,
	  { "default_bytes", "granted_bytes" }, check_pipe_resize },
	{ "splice-socket-pipe", "splice(loopback socket -> pipe), data intact",
	  0, { "bytes" }, probe_live_splice_sock_pipe },
	{ "splice-pipe-file", "splice(pipe -> temporary file), data intact", 0,
	  { "bytes" }, probe_live_splice_pipe_file },
	{ "vmsplice", "vmsplice(user pages -> pipe), data intact", 0,
	  { "bytes" }, probe_live_vmsplice },
	{ "sendfile", "sendfile(temporary file -> loopback socket)", 0,
	  { "bytes" }, probe_live_sendfile },
	{ "io_uring", "an io_uring ring can be set up (liburing)", 0,
	  { "last_op" }, check_uring },
	{ "uring-splice", "io_uring has IORING_OP_SPLICE", 0, { NULL },
	  check_uring_splice },
	{ "uring-send-zc", "io_uring has IORING_OP_SEND_ZC", 0, { NULL },
	  check_uring_send_zc },
	{ "msg-zerocopy", "send(MSG_ZEROCOPY) on loopback, and its completion",
	  0, { "accepted", "sent_bytes", "completions", "copied_completions" },
	  probe_live_msg_zerocopy },
	{ "tcp-zerocopy-receive", "getsockopt(TCP_ZEROCOPY_RECEIVE), loopback",
	  0, { NULL }, probe_live_tcp_zc_receive },
	{ "netns", "unshare(CLONE_NEWNET) in a child (ip netns)", 0, { NULL },
	  probe_live_netns },
	{ "ktls", "kernel TLS: the tls ULP attaches, OpenSSL has kTLS", 0,
	  { "ulp_listed", "ulp_errno", "openssl_ktls" }, check_ktls },
	{ "mptcp", "MPTCP on loopback; the path manager's limits", 0,
	  { "enabled", "active", "subflows_max", "add_addr_accepted_max" },
	  probe_live_mptcp },
	{ "sockmap-redirect", "BPF sk_skb redirect socket -> socket (relay)",
	  0, { NULL }, check_sockmap },
	{ "splice-relay-a", "(a) one splice takes many queued segments",
	  DND_PF_SPLICE_RELAY, { "mss_bytes", "queued_bytes", "spliced_bytes" },
	  probe_splice_relay_a },
	{ "splice-relay-b", "(b) splice(len 1000) never returns more than 1000",
	  DND_PF_SPLICE_RELAY,
	  { "asked_bytes", "max_returned_bytes", "calls", "min_queued_bytes" },
	  probe_splice_relay_b },
	{ "splice-relay-c", "(c) full pipe, data queued: splice says EAGAIN",
	  DND_PF_SPLICE_RELAY,
	  { "pipe_bytes", "socket_queued_bytes", "splice_errno",
	    "empty_socket_errno" },
	  probe_splice_relay_c },
	{ "splice-relay-d", "(d) SO_RCVLOWAT delays epoll; then splice reads",
	  DND_PF_SPLICE_RELAY,
	  { "lowat_bytes", "ready_below", "ready_at", "spliced_bytes" },
	  probe_splice_relay_d },
	{ NULL, NULL, 0, { NULL }, NULL },
};

const struct probe_feature *probe_features(void)
{
	return features;
}

const struct probe_feature *probe_feature_find(const char *name)
{
	const struct probe_feature *f;

	for (f = features; f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

int probe_run(const struct probe_feature *f, struct probe_result *r)
{
	const struct dnd_method *m;

	r->err = 0;
	r->why[0] = '\0';
	for (int i = 0; i < DND_PROBE_NVAL; i++)
		r->val[i] = DND_PROBE_UNSET;
	/* A feature named like a method (vmsplice, sendfile, ...) also needs
	 * that method's probe to say yes: one name, one answer. */
	m = method_find(f->name);
	if (!m || !(r->err = method_probe(m, r->why, sizeof(r->why))))
		f->check(r);
	/* -ENOENT is kept for unknown names (probe_feature); the cause
	 * stays in why. */
	if (r->err == -ENOENT)
		r->err = -EOPNOTSUPP;
	return r->err;
}

int probe_feature(const char *name, char *why, size_t len)
{
	const struct probe_feature *f = probe_feature_find(name);
	const struct dnd_method *m;
	struct probe_result r;

	if (f)
		probe_run(f, &r);
	else if ((m = method_find(name))) {
		r.err = method_probe(m, r.why, sizeof(r.why));
		if (!r.err && !r.why[0])
			snprintf(r.why, sizeof(r.why), "method %s is usable",
				 name);
	} else {
		r.err = -ENOENT;
		snprintf(r.why, sizeof(r.why), "unknown name '%s'", name);
	}
	if (len)
		snprintf(why, len, "%s", r.why);
	return r.err;
}

const char *probe_names(char *buf, size_t len)
{
	const struct dnd_method *const *m;
	const struct probe_feature *f;
	size_t off = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (m = method_all(); *m && off < len; m++)
		if (!probe_feature_find((*m)->name))
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? ", " : "", (*m)->name);
	for (f = features; f->name && off < len; f++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					off ? ", " : "", f->name);
	return buf;
}
