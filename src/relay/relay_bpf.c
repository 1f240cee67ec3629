// SPDX-License-Identifier: MIT
/*
 * Loads the sockmap relay's BPF program (relay/bpf/relay_sockmap.bpf.c,
 * compiled by clang, wrapped by `bpftool gen skeleton`) with libbpf, and
 * pairs flows in its maps. Why it cannot run is told apart: privileges,
 * a kernel without sockmap, a verifier rejection.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "relay/bpf/sockmap_abi.h"
#include "relay/relay_bpf.h"
#include "relay_sockmap.skel.h"

struct relay_bpf {
	struct relay_sockmap *skel;
	int socks, peers, counts;	/* map fds */
	int prog;
	bool attached;
};

/* libbpf's warnings while loading, kept for the verifier's last word. */
static char bpf_log[8192];
static size_t bpf_log_len;

static int relay_bpf_print(enum libbpf_print_level lvl, const char *fmt,
			   va_list ap)
{
	int n;

	if (lvl == LIBBPF_DEBUG || bpf_log_len >= sizeof(bpf_log) - 1)
		return 0;
	n = vsnprintf(bpf_log + bpf_log_len, sizeof(bpf_log) - bpf_log_len,
		      fmt, ap);
	if (n > 0)
		bpf_log_len += (size_t)n;
	if (bpf_log_len > sizeof(bpf_log) - 1)
		bpf_log_len = sizeof(bpf_log) - 1;
	return 0;
}

/*
 * The verifier's verdict: the last non-empty line of its log, which
 * libbpf prints between "-- BEGIN PROG LOAD LOG --" and "-- END ...",
 * but not its closing statistics ("processed N insns ...").
 */
static void relay_bpf_last_line(char *out, size_t n)
{
	char *end = strstr(bpf_log, "-- END");
	char *p, *line = NULL;

	if (!end)
		end = bpf_log + bpf_log_len;
	*end = '\0';
	for (p = strtok(bpf_log, "\n"); p; p = strtok(NULL, "\n"))
		if (strspn(p, " \t") < strlen(p) &&
		    strncmp(p, "processed ", 10) &&
		    strncmp(p, "verification time ", 18) &&
		    strncmp(p, "stack depth ", 12))
			line = p;
	snprintf(out, n, "%s", line ? line : "no log");
}

static int relay_bpf_why(struct relay_bpf *b, int e, char *msg, size_t n)
{
	char last[160];

	if (e == -EPERM) {
		snprintf(msg, n, "-m sockmap needs CAP_BPF and CAP_NET_ADMIN "
			 "(loading a BPF program and a sockmap); run as root "
			 "or grant them (setcap cap_bpf,cap_net_admin+ep), or "
			 "use -m splice");
		return -EPERM;
	}
	/* Not the sockmap's fd: a failed load closes every map it made. */
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_SOCKMAP, NULL) != 1) {
		snprintf(msg, n, "this kernel cannot create a BPF sockmap (%s): "
			 "-m sockmap needs CONFIG_BPF_SYSCALL, "
			 "CONFIG_BPF_STREAM_PARSER and CONFIG_NET_SOCK_MSG; "
			 "use -m splice", strerror(-e));
		return -EOPNOTSUPP;
	}
	relay_bpf_last_line(last, sizeof(last));
	snprintf(msg, n, "the kernel's BPF verifier rejected the sockmap "
		 "program (%s): %s; use -m splice", strerror(-e), last);
	return -EINVAL;
}

int relay_bpf_open(unsigned int slots, struct relay_bpf **out, char *msg,
		   size_t n)
{
	return relay_bpf_open_edit(slots, NULL, out, msg, n);
}

int relay_bpf_open_edit(unsigned int slots,
			void (*edit)(struct bpf_object *obj),
			struct relay_bpf **out, char *msg, size_t n)
{
	libbpf_print_fn_t old = libbpf_set_print(relay_bpf_print);
	struct relay_bpf *b = calloc(1, sizeof(*b));
	int e = -ENOMEM;

	*out = NULL;
	bpf_log_len = 0;
	bpf_log[0] = '\0';
	if (slots < 2)
		slots = 2;
	if (!b || !(b->skel = relay_sockmap__open())) {
		snprintf(msg, n, "cannot open the sockmap program: %s",
			 strerror(b ? errno : ENOMEM));
		goto fail;
	}
	bpf_map__set_max_entries(b->skel->maps.socks, slots);
	bpf_map__set_max_entries(b->skel->maps.peers, slots);
	bpf_map__set_max_entries(b->skel->maps.counts, slots);
	if (edit)
		edit(b->skel->obj);
	e = relay_sockmap__load(b->skel);
	if (e) {
		e = relay_bpf_why(b, e < 0 ? e : -errno, msg, n);
		goto fail;
	}
	b->socks = bpf_map__fd(b->skel->maps.socks);
	b->peers = bpf_map__fd(b->skel->maps.peers);
	b->counts = bpf_map__fd(b->skel->maps.counts);
	b->prog = bpf_program__fd(b->skel->progs.dnd_relay_verdict);
	if (bpf_prog_attach(b->prog, b->socks, BPF_SK_SKB_STREAM_VERDICT, 0)) {
		e = -errno;
		snprintf(msg, n, "cannot attach the sockmap program to its map: "
			 "%s; use -m splice", strerror(errno));
		goto fail;
	}
	b->attached = true;
	libbpf_set_print(old);
	*out = b;
	return 0;
fail:
	libbpf_set_print(old);
	relay_bpf_close(b);
	return e;
}

void relay_bpf_close(struct relay_bpf *b)
{
	if (!b)
		return;
	if (b->attached)
		bpf_prog_detach2(b->prog, b->socks, BPF_SK_SKB_STREAM_VERDICT);
	relay_sockmap__destroy(b->skel);
	free(b);
}

/*
 * A socket added to a sockmap has its receive callback replaced, but what
 * already sat in its queue raises no new callback. Setting SO_RCVLOWAT
 * runs it [tcp_set_rcvlowat() -> tcp_data_ready()], so those bytes and a
 * FIN that came with them are forwarded too.
 */
static void relay_bpf_kick(int fd)
{
	int lowat = 1;
	socklen_t len = sizeof(lowat);

	getsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, &len);
	setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat));
}

int relay_bpf_pair(struct relay_bpf *b, const int fd[2],
		   const uint32_t slot[2], uint64_t cookie[2])
{
	struct dnd_sm_count zero = { 0, 0 };
	struct dnd_sm_peer p;
	socklen_t len;
	uint64_t v;
	int i;

	for (i = 0; i < 2; i++) {
		len = sizeof(cookie[i]);
		if (getsockopt(fd[i], SOL_SOCKET, SO_COOKIE, &cookie[i], &len))
			return -errno;
	}
	for (i = 0; i < 2; i++) {
		p.self = slot[i];
		p.peer = slot[!i];
		if (bpf_map_update_elem(b->counts, &slot[i], &zero, BPF_ANY) ||
		    bpf_map_update_elem(b->peers, &cookie[i], &p, BPF_ANY))
			return -errno;
	}
	for (i = 1; i >= 0; i--) {
		v = (uint64_t)fd[i];
		if (bpf_map_update_elem(b->socks, &slot[i], &v, BPF_ANY))
			return -errno;
	}
	relay_bpf_kick(fd[1]);
	relay_bpf_kick(fd[0]);
	return 0;
}

void relay_bpf_unpair(struct relay_bpf *b, const uint32_t slot[2],
		      const uint64_t cookie[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		bpf_map_delete_elem(b->socks, &slot[i]);
		bpf_map_delete_elem(b->peers, &cookie[i]);
	}
}

void relay_bpf_count(struct relay_bpf *b, uint32_t slot,
		     struct relay_bpf_count *c)
{
	struct dnd_sm_count v;

	memset(c, 0, sizeof(*c));
	if (bpf_map_lookup_elem(b->counts, &slot, &v))
		return;
	c->fwd = v.fwd;
	c->passed = v.passed;
}

/* A connected loopback pair through listener l: *c the client, *s ours. */
static int relay_bpf_conn(int l, int *c, int *s)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);

	*s = -1;
	*c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*c < 0 || getsockname(l, (struct sockaddr *)&a, &al) ||
	    connect(*c, (struct sockaddr *)&a, al))
		return -errno;
	*s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	return *s < 0 ? -errno : 0;
}

int relay_bpf_selftest(char *msg, size_t n)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int l, fd[4] = { -1, -1, -1, -1 }, e, i;
	uint32_t slot[2] = { 0, 1 };
	struct relay_bpf_count c;
	char buf[4096] = "dnd";
	uint64_t cookie[2];
	struct relay_bpf *b;
	struct pollfd pfd;
	ssize_t got = 0, k;

	e = relay_bpf_open(2, &b, msg, n);
	if (e)
		return e;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 2)) {
		e = -errno;
		snprintf(msg, n, "loopback listener: %s", strerror(errno));
		goto out;
	}
	e = relay_bpf_conn(l, &fd[0], &fd[1]);
	if (!e)
		e = relay_bpf_conn(l, &fd[2], &fd[3]);
	if (!e) {
		int pair[2] = { fd[1], fd[3] };

		e = relay_bpf_pair(b, pair, slot, cookie);
	}
	if (e) {
		snprintf(msg, n, "pairing two loopback sockets: %s",
			 strerror(-e));
		goto out;
	}
	if (send(fd[0], buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		e = -errno;
		snprintf(msg, n, "send: %s", strerror(errno));
		goto out;
	}
	pfd.fd = fd[2];
	pfd.events = POLLIN;
	while (got < (ssize_t)sizeof(buf) && poll(&pfd, 1, 2000) == 1 &&
	       (k = recv(fd[2], buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		got += k;
	relay_bpf_count(b, slot[0], &c);
	if (got != (ssize_t)sizeof(buf) || c.fwd != sizeof(buf)) {
		e = -EIO;
		snprintf(msg, n, "%zd of %zu bytes crossed the redirect (the "
			 "program counted %llu)", got, sizeof(buf),
			 (unsigned long long)c.fwd);
		goto out;
	}
	snprintf(msg, n, "%zu bytes redirected socket to socket in the kernel",
		 sizeof(buf));
out:
	for (i = 0; i < 4; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	if (l >= 0)
		close(l);
	relay_bpf_close(b);
	return e;
}
