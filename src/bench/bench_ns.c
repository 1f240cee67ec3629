// SPDX-License-Identifier: MIT
/*
 * Namespaces for bench --netns, built with iproute2 as an operator would.
 * Addresses exist only inside the two namespaces (10.77.0.1 sends, 10.77.0.2
 * receives), so nothing on the host changes. Names carry our PID so that
 * teardown can only ever remove what this process made.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_ns.h"
#include "bench/bench_proc.h"
#include "core/io.h"
#include "core/log.h"

#define NS_SEND_ADDR	"10.77.0.1"
#define NS_RECV_ADDR	"10.77.0.2"
#define NS_TOOL_TIMEOUT	15.0

/* Runs `ip ARGS` or `tc ARGS`; 0 or -1 with the tool's words in err. */
static int ns_tool(const char *tool, char *const args[], char *err,
		   size_t len)
{
	char exe[256], *argv[24];
	int i;

	if (!bench_find_tool(tool, exe, sizeof(exe))) {
		snprintf(err, len, "%s is not installed", tool);
		return -1;
	}
	argv[0] = exe;
	for (i = 0; args[i] && i < 22; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	return bench_run_tool(argv, NULL, NS_TOOL_TIMEOUT, err, len) ? -1 : 0;
}

#define NS_RUN(tool, err, ...) \
	ns_tool((tool), (char *const[]){ __VA_ARGS__, NULL }, (err), sizeof(err))

/* One end: address, loopback up, MTU, up. */
static int ns_end(const char *ns, const char *dev, const char *addr,
		  const char *mtu, char *err, size_t len)
{
	char cidr[32];
	int r;

	snprintf(cidr, sizeof(cidr), "%s/24", addr);
	r = ns_tool("ip", (char *const[]){ "-n", (char *)ns, "addr", "add",
		    cidr, "dev", (char *)dev, NULL }, err, len);
	if (!r)
		r = ns_tool("ip", (char *const[]){ "-n", (char *)ns, "link",
			    "set", "lo", "up", NULL }, err, len);
	if (!r)
		r = ns_tool("ip", (char *const[]){ "-n", (char *)ns, "link",
			    "set", (char *)dev, "mtu", (char *)mtu, "up", NULL },
			    err, len);
	return r;
}

/* tbf on the sender's end (burst: 2 ms at the rate, at least 64 KiB). */
static int ns_rate(struct bench *b, char *err, size_t len)
{
	char burst[24];
	uint64_t bu = b->o.rate_bps / 500;

	if (bu < 65536 + b->o.mtu)
		bu = 65536 + b->o.mtu;
	snprintf(burst, sizeof(burst), "%llu", (unsigned long long)bu);
	return ns_tool("tc", (char *const[]){ "-n", b->ns_send, "qdisc", "add",
		       "dev", b->veth_s, "root", "handle", "1:", "tbf", "rate",
		       (char *)b->o.rate, "burst", burst, "latency", "10ms",
		       NULL }, err, len);
}

/* netem on the sender's end, under the tbf when there is one. */
static int ns_netem(struct bench *b, char *err, size_t len)
{
	char words[256], *argv[24], *save = NULL, *t;
	int k = 0;

	snprintf(words, sizeof(words), "%s", b->o.netem);
	argv[k++] = "-n";
	argv[k++] = b->ns_send;
	argv[k++] = "qdisc";
	argv[k++] = "add";
	argv[k++] = "dev";
	argv[k++] = b->veth_s;
	if (b->o.rate_bps) {
		argv[k++] = "parent";
		argv[k++] = "1:1";
	} else {
		argv[k++] = "root";
	}
	argv[k++] = "netem";
	for (t = strtok_r(words, " \t", &save); t && k < 22;
	     t = strtok_r(NULL, " \t", &save))
		argv[k++] = t;
	argv[k] = NULL;
	return ns_tool("tc", argv, err, len);
}

static int ns_fail(struct bench *b, int code, const char *pre, const char *err,
		   const char *post)
{
	log_err("%s%s%s", pre, err, post);
	bench_ns_teardown(b);
	return code;
}

static int ns_links(struct bench *b, char *err, size_t len)
{
	char mtu[12];

	snprintf(mtu, sizeof(mtu), "%u", b->o.mtu);
	if (ns_tool("ip", (char *const[]){ "netns", "add", b->ns_recv, NULL },
		    err, len))
		return -1;
	b->ns_have_r = true;
	if (ns_tool("ip", (char *const[]){ "link", "add", b->veth_s, "netns",
		    b->ns_send, "type", "veth", "peer", "name", b->veth_r,
		    "netns", b->ns_recv, NULL }, err, len) ||
	    ns_end(b->ns_send, b->veth_s, NS_SEND_ADDR, mtu, err, len) ||
	    ns_end(b->ns_recv, b->veth_r, NS_RECV_ADDR, mtu, err, len))
		return -1;
	return 0;
}

/*
 * Building or removing the namespaces runs ip to its end: a stop signal
 * waits (blocked) until it is done, and is then seen as usual, so Ctrl-C
 * half-way through the setup still ends the run with its cleanup and exit
 * 130, never with a half-built pair or an ip killed as if at a deadline.
 * The blocked mask survives exec, so a second Ctrl-C, sent to the whole
 * foreground group, does not kill ip either.
 */
struct ns_hold {
	sigset_t old;
	sig_atomic_t stop;
};

static void ns_hold(struct ns_hold *h)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &h->old);
	h->stop = io_stop_signal;
	io_stop_signal = 0;
}

static void ns_release(struct ns_hold *h)
{
	sigprocmask(SIG_SETMASK, &h->old, NULL);	/* a pending one lands */
	io_stop_signal = h->stop ? h->stop : io_stop_signal;
}

static int ns_build(struct bench *b)
{
	char err[600], exe[256];
	int pid = (int)getpid();

	if (geteuid() != 0) {
		log_err("--netns needs root: making network namespaces and a "
			"veth pair takes CAP_SYS_ADMIN and CAP_NET_ADMIN; run "
			"as root, or drop --netns for loopback");
		return 2;
	}
	if (!bench_find_tool("ip", exe, sizeof(exe)) ||
	    ((b->o.rate || b->o.netem) && !bench_find_tool("tc", exe,
							   sizeof(exe)))) {
		log_err("--netns needs ip and tc from iproute2; apt-get install "
			"iproute2 (or make deps)");
		return 2;
	}
	snprintf(b->ns_send, sizeof(b->ns_send), "dndb-%d-s", pid);
	snprintf(b->ns_recv, sizeof(b->ns_recv), "dndb-%d-r", pid);
	snprintf(b->veth_s, sizeof(b->veth_s), "dndbs%d", pid);
	snprintf(b->veth_r, sizeof(b->veth_r), "dndbr%d", pid);
	snprintf(b->nsp_send, sizeof(b->nsp_send), "/run/netns/%s", b->ns_send);
	snprintf(b->nsp_recv, sizeof(b->nsp_recv), "/run/netns/%s", b->ns_recv);
	if (NS_RUN("ip", err, "netns", "add", b->ns_send))
		return ns_fail(b, 2, "cannot make a network namespace (", err,
			       "); this system does not allow them here: drop "
			       "--netns");
	b->ns_have_s = true;
	if (ns_links(b, err, sizeof(err)))
		return ns_fail(b, 1, "cannot build the veth pair between the "
			       "namespaces: ", err, "");
	if (b->o.rate && ns_rate(b, err, sizeof(err)))
		return ns_fail(b, 2, "cannot add the tbf qdisc for --rate: ",
			       err, "; check the rate (e.g. 10gbit)");
	if (b->o.netem && ns_netem(b, err, sizeof(err))) {
		if (strstr(err, "unknown") || strstr(err, "Unknown"))
			return ns_fail(b, 2, "--netem needs the sch_netem "
				       "qdisc, which this kernel does not have "
				       "(", err, "); drop --netem (--rate works: "
				       "tbf)");
		return ns_fail(b, 2, "cannot add netem: ", err, "; check the "
			       "--netem words (e.g. \"delay 1ms loss 0.1%\")");
	}
	b->ns_made = true;
	b->host = NS_RECV_ADDR;
	b->bind = NS_RECV_ADDR;
	return 0;
}

int bench_ns_setup(struct bench *b)
{
	struct ns_hold h;
	int r;

	ns_hold(&h);
	r = ns_build(b);
	ns_release(&h);
	return r;
}

void bench_ns_teardown(struct bench *b)
{
	struct ns_hold h;
	char err[600];

	if (!b->ns_send[0])
		return;
	/* Only namespaces this run made are deleted, never one of the same
	 * name. */
	ns_hold(&h);
	if (b->ns_have_s)
		NS_RUN("ip", err, "netns", "del", b->ns_send);
	if (b->ns_have_r)
		NS_RUN("ip", err, "netns", "del", b->ns_recv);
	b->ns_have_s = b->ns_have_r = false;
	ns_release(&h);
	b->ns_send[0] = b->ns_recv[0] = '\0';
	b->ns_made = false;
}
