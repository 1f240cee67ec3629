// SPDX-License-Identifier: MIT
/*
 * delayline: a slow, far link between two network namespaces, for the
 * tests and the bench of a kernel without netem (issue 25).
 *
 *   delayline --a NS:DEV --b NS:DEV [--delay MS] [--rate RATE]
 *             [--burst BYTES] [--queue BYTES] [--loss PCT] [--seed N]
 *             [--mtu N] [--hold BYTES] [--seconds N] [--packets N]
 *
 * creates a TUN device (IFF_TUN|IFF_NO_PI|IFF_VNET_HDR, MTU --mtu) named DEV inside
 * namespace NS (/run/netns/NS; "-" for the current one) for each side,
 * prints "delayline: ready" and forwards every packet one side's kernel
 * sends to the other side's device, until --seconds pass, --packets have
 * been forwarded, or SIGTERM/SIGINT. The devices vanish when it exits.
 * scripts/delayline.sh gives them addresses and routes.
 *
 * GSO: the devices offer TSO4/TSO6 (and USO when the kernel has it) and
 * checksum offload, so the kernel hands over TCP and UDP super-packets of
 * up to 64 KiB (one read) instead of MTU-sized ones, each led by its
 * virtio_net_hdr; the forwarder writes header and packet unchanged into
 * the other device, whose kernel takes them as the segments they stand
 * for. Rate, queue and the byte counters count what a real wire would
 * carry: every segment with its own IP and TCP/UDP headers. But the hold
 * and the token bucket act on a whole super-packet: its segments leave
 * together, a burst of up to 64 KiB (0.5 ms at 1 Gbit/s) where a router
 * would space them. With --loss the devices offer no TSO/USO: the kernel
 * segments first, so loss stays per packet (one drop never takes a whole
 * super-packet), at the old packet-rate ceiling.
 *
 * What it emulates, per direction, in this order:
 *  - loss: each packet is dropped with probability PCT % (a splitmix64
 *    stream from --seed, so a run is repeatable for a given packet order);
 *  - a bottleneck of RATE bits/s (wire bytes) with a token bucket of --burst bytes
 *    (default max(2 MTU, 1 ms of RATE)) and a drop-tail buffer of --queue
 *    bytes in front of it (default the bandwidth-delay product plus a
 *    quarter plus 64 KiB): a packet that would wait behind more than
 *    --queue bytes is dropped and counted, like a router's full buffer;
 *  - propagation: every packet is held DELAY/2 ms after it leaves the
 *    bottleneck, so --delay is the round trip the line adds.
 * Held packets sit in one timestamped FIFO per direction; a timerfd armed
 * at the earliest release time wakes the loop (epoll), it never spins.
 * --hold bounds the bytes one direction holds in all (memory safety, 256 MiB
 * by default); a packet past it is dropped and counted as "hold-full".
 *
 * What it does not: no reordering, no jitter, no duplication, no
 * corruption, no ECN marking, no AQM (plain drop-tail). One thread forwards
 * both directions, one read and one write per frame; most of its time is
 * the kernel's, in those writes (the receiving stack runs in them). Its
 * ceiling, iperf3 at --delay 0 without a rate, MTU 9000, medians of 3
 * alternating rounds on a 2-core machine at a load average of 0.4-2.3
 * from other jobs: 846 MB/s with GSO, 369 MB/s without (--loss), where
 * the forwarder before GSO and a kept heap carried 222 MB/s (README.md,
 * "Real links"). The kernel's own queue on
 * each TUN device (txqueuelen packets) sits before the forwarder; its drops
 * show in `ip -s link`, not here.
 *
 * At exit it prints one line per direction and its own CPU time:
 *   delayline: a>b forwarded P packets B bytes, lost L, queue-full Q,
 *     hold-full H, write-errors W, peak-queue Z bytes, left N,
 *     super-packets S
 *   delayline: cpu U s user, S s system, over T s
 * P and B count wire packets and bytes (a super-packet's segments), S the
 * GSO super-packets among the frames; lost, queue-full, hold-full,
 * write-errors and left count frames.
 * Exit 0 when it ran to its bound or a signal, 1 on a failure, 2 on a
 * usage error.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>

#ifndef TUN_F_USO4
#define TUN_F_USO4	0x20
#define TUN_F_USO6	0x40
#endif

#define NSEC		1000000000ULL
#define BATCH		64		/* packets read from one side per wakeup */
#define VHDR		((uint32_t)sizeof(struct virtio_net_hdr))
#define MAX_PKT		(VHDR + 65536)	/* largest TUN frame */
#define DEF_HOLD	(256ULL << 20)
#define DEF_SECONDS	300

struct pkt {
	struct pkt *next;
	uint64_t dep;			/* leaves the bottleneck (ns) */
	uint64_t rel;			/* written to the other side (ns) */
	uint32_t len;			/* frame: virtio_net_hdr + packet */
	uint32_t segs;			/* packets on a real wire */
	uint64_t wire;			/* their bytes */
	unsigned char data[];
};

struct dir {
	const char *name;
	int in, out;
	struct pkt *head, *tail;
	struct pkt *wait;		/* first packet not yet past the bottleneck */
	uint64_t backlog;		/* bytes waiting for tokens */
	uint64_t held;			/* bytes in the FIFO */
	uint64_t tat;			/* when the bucket is full again (ns) */
	uint64_t fwd_pkts, fwd_bytes, fwd_gso, lost, qdrops, hdrops, werrs, peak;
};

struct cfg {
	char ns[2][256];		/* a name under /run/netns, or "-" */
	const char *dev[2];
	uint64_t oneway;		/* ns each direction holds a packet */
	uint64_t rate;			/* bits/s, 0 = no bottleneck */
	uint64_t burst, queue, hold;	/* bytes */
	uint64_t loss;			/* drop when prng < loss */
	int loss_all;			/* --loss 100 */
	uint64_t seed;
	unsigned int mtu, seconds;
	uint64_t packets;
};

static uint64_t prng;

static uint64_t splitmix64(void)
{
	uint64_t z = (prng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

static void usage(const char *why)
{
	fprintf(stderr, "delayline: %s\n"
		"usage: delayline --a NS:DEV --b NS:DEV [--delay MS] [--rate RATE]\n"
		"  [--burst BYTES] [--queue BYTES] [--loss PCT] [--seed N] [--mtu N]\n"
		"  [--hold BYTES] [--seconds N] [--packets N]\n"
		"  MS: the round trip added (e.g. 20, 0.5, 20ms); RATE: bits/s with\n"
		"  k/m/g and an optional \"bit\" (100mbit, 1g), 0 = none; BYTES: with\n"
		"  K/M/G or Ki/Mi/Gi (1024s)\n", why);
	exit(2);
}

/* NUMBER with an optional suffix from @units (name, multiplier), else exit 2. */
struct unit { const char *sfx; double mul; };

static double parse_num(const char *opt, const char *s, const struct unit *u)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || v != v)
		goto bad;
	for (; u && u->sfx; u++)
		if (!strcmp(end, u->sfx))
			return v * u->mul;
	if (!*end)
		return v;
bad:
	fprintf(stderr, "delayline: %s '%s' is not a number it knows\n", opt, s);
	usage("see the units below");
	return 0;
}

static const struct unit ms_units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "us", 0.001 }, { NULL, 0 }
};
static const struct unit rate_units[] = {
	{ "bit", 1 }, { "kbit", 1e3 }, { "mbit", 1e6 }, { "gbit", 1e9 },
	{ "k", 1e3 }, { "m", 1e6 }, { "g", 1e9 },
	{ "K", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { NULL, 0 }
};
static const struct unit byte_units[] = {
	{ "K", 1024 }, { "M", 1048576 }, { "G", 1073741824 },
	{ "Ki", 1024 }, { "Mi", 1048576 }, { "Gi", 1073741824 },
	{ "k", 1024 }, { "m", 1048576 }, { "g", 1073741824 }, { NULL, 0 }
};

static void parse_side(struct cfg *c, int i, const char *s)
{
	const char *colon = strchr(s, ':');

	if (!colon || colon == s || colon - s >= (long)sizeof(c->ns[i]) ||
	    !colon[1] || strlen(colon + 1) >= IFNAMSIZ)
		usage("--a and --b take NS:DEV (NS \"-\" for this namespace, DEV under 16 bytes)");
	snprintf(c->ns[i], sizeof(c->ns[i]), "%.*s", (int)(colon - s), s);
	c->dev[i] = colon + 1;
}

static void parse_args(struct cfg *c, int argc, char **argv)
{
	int have_queue = 0, have_burst = 0;
	double loss = 0;

	memset(c, 0, sizeof(*c));
	c->hold = DEF_HOLD;
	c->seconds = DEF_SECONDS;
	c->mtu = 9000;
	c->seed = 1;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = argv[i + 1];

		if (!v)
			usage("every option takes a value");
		i++;
		if (!strcmp(o, "--a") || !strcmp(o, "--b")) {
			parse_side(c, o[2] == 'b', v);
		} else if (!strcmp(o, "--delay")) {
			double ms = parse_num(o, v, ms_units);

			if (ms > 60000)
				usage("--delay is at most 60 s");
			c->oneway = (uint64_t)(ms * 1e6 / 2);
		} else if (!strcmp(o, "--rate")) {
			c->rate = (uint64_t)parse_num(o, v, rate_units);
			if (c->rate > 1000000000000ULL)
				usage("--rate is at most 1000gbit");
		} else if (!strcmp(o, "--burst")) {
			c->burst = (uint64_t)parse_num(o, v, byte_units);
			have_burst = 1;
		} else if (!strcmp(o, "--queue")) {
			c->queue = (uint64_t)parse_num(o, v, byte_units);
			have_queue = 1;
		} else if (!strcmp(o, "--hold")) {
			c->hold = (uint64_t)parse_num(o, v, byte_units);
		} else if (!strcmp(o, "--loss")) {
			loss = parse_num(o, v, NULL);
			if (loss > 100)
				usage("--loss is a percentage, 0 to 100");
		} else if (!strcmp(o, "--seed")) {
			c->seed = (uint64_t)parse_num(o, v, NULL);
		} else if (!strcmp(o, "--mtu")) {
			c->mtu = (unsigned int)parse_num(o, v, NULL);
			if (c->mtu < 576 || c->mtu > 65000)
				usage("--mtu is 576 to 65000");
		} else if (!strcmp(o, "--seconds")) {
			c->seconds = (unsigned int)parse_num(o, v, NULL);
			if (!c->seconds || c->seconds > 86400)
				usage("--seconds is 1 to 86400: the line always ends");
		} else if (!strcmp(o, "--packets")) {
			c->packets = (uint64_t)parse_num(o, v, NULL);
		} else {
			fprintf(stderr, "delayline: unknown option '%s'\n", o);
			usage("see the options below");
		}
	}
	if (!c->dev[0] || !c->dev[1])
		usage("--a and --b are both needed");
	if (c->rate && c->rate < 8000)
		usage("--rate below 8kbit is not a line");
	c->loss_all = loss >= 100;
	c->loss = c->loss_all ? UINT64_MAX :
		  (uint64_t)(loss / 100 * 18446744073709551615.0);
	if (!have_burst) {
		c->burst = c->rate / 8 / 1000;
		if (c->burst < 2ULL * c->mtu)
			c->burst = 2ULL * c->mtu;
	}
	if (c->burst < c->mtu || c->burst > (1ULL << 30))
		usage("--burst is the MTU to 1 GiB: below the MTU no full packet passes");
	if (!have_queue) {
		/* rate (bytes/s) x round trip (s) */
		uint64_t bdp = (uint64_t)((double)c->rate / 8 * (double)c->oneway * 2 / NSEC);

		c->queue = bdp + bdp / 4 + (64 << 10);
	}
	if (c->queue < c->mtu)
		c->queue = c->mtu;	/* one packet always fits */
}

/* A TUN device @dev inside namespace @ns (current one when "-"), every
 * frame led by a virtio_net_hdr; @gso: the kernel may hand it TCP and UDP
 * super-packets (TSO/USO) instead of segmenting them first. */
static int open_tun(const char *ns, const char *dev, unsigned int mtu, int gso)
{
	unsigned int off = TUN_F_CSUM;
	struct ifreq ifr;
	int self = -1, fd = -1, sk = -1, err = 0;

	if (strcmp(ns, "-")) {
		char path[300];
		int nfd;

		snprintf(path, sizeof(path), "/run/netns/%s", ns);
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		nfd = open(path, O_RDONLY | O_CLOEXEC);
		if (self < 0 || nfd < 0 || setns(nfd, CLONE_NEWNET)) {
			fprintf(stderr, "delayline: cannot enter namespace %s: %s; "
				"create it with ip netns add (as root)\n",
				ns, strerror(errno));
			exit(1);
		}
		close(nfd);
	}
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "delayline: /dev/net/tun: %s; load the tun module "
			"(modprobe tun)\n", strerror(errno));
		exit(1);
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", dev);
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		fprintf(stderr, "delayline: TUNSETIFF %s: %s\n", dev, strerror(errno));
		exit(1);
	}
	if (gso)
		off |= TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
	/* USO (Linux 6.2+) when the kernel knows it, else TSO alone */
	if ((!gso || ioctl(fd, TUNSETOFFLOAD, off | TUN_F_USO4 | TUN_F_USO6)) &&
	    ioctl(fd, TUNSETOFFLOAD, off)) {
		fprintf(stderr, "delayline: TUNSETOFFLOAD %s: %s\n", dev, strerror(errno));
		exit(1);
	}
	sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ifr.ifr_mtu = (int)mtu;
	if (sk < 0 || ioctl(sk, SIOCSIFMTU, &ifr))
		err = errno;
	if (sk >= 0)
		close(sk);
	if (err) {
		fprintf(stderr, "delayline: MTU %u on %s: %s\n", mtu, dev, strerror(err));
		exit(1);
	}
	if (self >= 0) {
		if (setns(self, CLONE_NEWNET)) {
			perror("delayline: back to the first namespace");
			exit(1);
		}
		close(self);
	}
	return fd;
}

/*
 * The packets and bytes frame @f of @len bytes would be on a real wire: a
 * GSO super-packet (gso_type set) is cut into gso_size-byte segments that
 * each carry its IP and TCP/UDP headers. Anything it cannot parse counts
 * as the one packet it is.
 */
static void wire_size(const unsigned char *f, uint32_t len, uint32_t *segs,
		      uint64_t *wire)
{
	struct virtio_net_hdr h;
	const unsigned char *ip = f + VHDR;
	uint32_t n = len - VHDR, l3, l4, pay, gs;
	unsigned char proto;

	*segs = 1;
	*wire = n;
	memcpy(&h, f, sizeof(h));
	gs = le16toh(h.gso_size);
	if ((h.gso_type & ~VIRTIO_NET_HDR_GSO_ECN) == VIRTIO_NET_HDR_GSO_NONE ||
	    !gs || n < 40)
		return;
	if (ip[0] >> 4 == 4)
		l3 = (ip[0] & 15) * 4U, proto = ip[9];
	else if (ip[0] >> 4 == 6)
		l3 = 40, proto = ip[6];
	else
		return;
	if (l3 < 20 || l3 + 20 > n)
		return;
	if (proto == IPPROTO_TCP)
		l4 = (ip[l3 + 12] >> 4) * 4U;
	else if (proto == IPPROTO_UDP)
		l4 = 8;
	else
		return;
	if (l4 < 8 || l3 + l4 >= n)
		return;
	pay = n - l3 - l4;
	*segs = (pay + gs - 1) / gs;
	*wire = n + (uint64_t)(*segs - 1) * (l3 + l4);
}

/* Packets whose departure time has come are past the bottleneck. */
static void settle(struct dir *d, uint64_t now)
{
	while (d->wait && d->wait->dep <= now) {
		d->backlog -= d->wait->wire;
		d->wait = d->wait->next;
	}
}

static void enqueue(struct dir *d, const struct cfg *c, const unsigned char *buf,
		    uint32_t len, uint64_t now)
{
	uint64_t dep = now, wire;
	uint32_t segs;
	struct pkt *p;

	settle(d, now);
	wire_size(buf, len, &segs, &wire);
	if (c->loss_all || (c->loss && splitmix64() < c->loss)) {
		d->lost++;
		return;
	}
	if (d->held + len > c->hold) {
		d->hdrops++;
		return;
	}
	if (c->rate) {
		/* token bucket as its virtual time: tokens at t are
		 * burst - (tat - t) * rate; len may go once they reach len */
		uint64_t cost = wire * 8 * NSEC / c->rate;
		uint64_t slack = wire < c->burst ?
				 (c->burst - wire) * 8 * NSEC / c->rate : 0;

		if (d->backlog + wire > c->queue) {
			d->qdrops++;
			return;
		}
		if (d->tat > slack && d->tat - slack > dep)
			dep = d->tat - slack;
		if (d->tail && d->tail->dep > dep)
			dep = d->tail->dep;
		d->tat = (d->tat > dep ? d->tat : dep) + cost;
	}
	p = malloc(sizeof(*p) + len);
	if (!p) {
		d->hdrops++;
		return;
	}
	p->next = NULL;
	p->dep = dep;
	p->rel = dep + c->oneway;
	p->len = len;
	p->segs = segs;
	p->wire = wire;
	memcpy(p->data, buf, len);
	if (d->tail)
		d->tail->next = p;
	else
		d->head = p;
	d->tail = p;
	d->held += len;
	if (dep > now) {
		if (!d->wait)
			d->wait = p;
		d->backlog += wire;
		if (d->backlog > d->peak)
			d->peak = d->backlog;
	}
}

/* Reads what one side's kernel sent, up to BATCH packets. */
static int pump(struct dir *d, const struct cfg *c)
{
	static unsigned char buf[MAX_PKT];

	for (int i = 0; i < BATCH; i++) {
		ssize_t n = read(d->in, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			fprintf(stderr, "delayline: read %s: %s\n", d->name,
				strerror(errno));
			return -1;
		}
		if (n <= (ssize_t)VHDR)
			return 0;
		enqueue(d, c, buf, (uint32_t)n, now_ns());
	}
	return 0;
}

/* Writes every frame whose release time has come; returns the wire
 * packets sent (what --packets bounds). */
static uint64_t flush(struct dir *d, uint64_t now)
{
	uint64_t sent = 0;

	settle(d, now);
	while (d->head && d->head->rel <= now) {
		struct pkt *p = d->head;

		if (write(d->out, p->data, p->len) == (ssize_t)p->len) {
			d->fwd_pkts += p->segs;
			d->fwd_bytes += p->wire;
			d->fwd_gso += p->segs > 1;
			sent += p->segs;
		} else {
			d->werrs++;
		}
		d->head = p->next;
		if (!d->head)
			d->tail = NULL;
		d->held -= p->len;
		free(p);
	}
	return sent;
}

static void report(struct dir *d)
{
	uint64_t left = 0;

	while (d->head) {
		struct pkt *p = d->head;

		d->head = p->next;
		left++;
		free(p);
	}
	printf("delayline: %s forwarded %" PRIu64 " packets %" PRIu64 " bytes, "
	       "lost %" PRIu64 ", queue-full %" PRIu64 ", hold-full %" PRIu64
	       ", write-errors %" PRIu64 ", peak-queue %" PRIu64 " bytes, left %"
	       PRIu64 ", super-packets %" PRIu64 "\n", d->name, d->fwd_pkts,
	       d->fwd_bytes, d->lost, d->qdrops, d->hdrops, d->werrs, d->peak,
	       left, d->fwd_gso);
}

int main(int argc, char **argv)
{
	struct epoll_event ev, evs[4];
	struct dir dirs[2];
	struct cfg c;
	uint64_t start, deadline, armed = 0, total = 0;
	struct rusage ru;
	const char *why = "time";
	sigset_t mask;
	int ep, tfd, sfd, a, b, rc = 0;

	parse_args(&c, argc, argv);
	/* held frames come and go by the 64 KiB: keep the heap, do not
	 * give it back to the kernel (brk) and take it again each time */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	setvbuf(stdout, NULL, _IOLBF, 0);
	prng = c.seed;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || tfd < 0 || ep < 0) {
		perror("delayline: signalfd/timerfd/epoll");
		return 1;
	}
	/* loss drops whole frames: segments, so that --loss is per packet */
	a = open_tun(c.ns[0], c.dev[0], c.mtu, !c.loss);
	b = open_tun(c.ns[1], c.dev[1], c.mtu, !c.loss);
	memset(dirs, 0, sizeof(dirs));
	dirs[0].name = "a>b", dirs[0].in = a, dirs[0].out = b;
	dirs[1].name = "b>a", dirs[1].in = b, dirs[1].out = a;

	ev.events = EPOLLIN;
	ev.data.u32 = 0;
	epoll_ctl(ep, EPOLL_CTL_ADD, a, &ev);
	ev.data.u32 = 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, b, &ev);
	ev.data.u32 = 2;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ev.data.u32 = 3;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev)) {
		perror("delayline: epoll_ctl");
		return 1;
	}

	start = now_ns();
	deadline = start + (uint64_t)c.seconds * NSEC;
	printf("delayline: ready a=%s:%s b=%s:%s delay %.3f ms rate %" PRIu64
	       " bit/s burst %" PRIu64 " queue %" PRIu64 " bytes mtu %u gso %s\n",
	       c.ns[0], c.dev[0], c.ns[1], c.dev[1],
	       (double)c.oneway * 2 / 1e6, c.rate, c.burst, c.queue, c.mtu,
	       c.loss ? "off (--loss)" : "on");

	for (;;) {
		uint64_t now = now_ns(), next = deadline;
		int n;

		if (now >= deadline)
			break;
		for (int i = 0; i < 2; i++) {
			total += flush(&dirs[i], now);
			if (dirs[i].head && dirs[i].head->rel < next)
				next = dirs[i].head->rel;
		}
		if (c.packets && total >= c.packets) {
			why = "packets";
			break;
		}
		if (next != armed) {
			struct itimerspec its = {
				.it_value.tv_sec = (time_t)(next / NSEC),
				.it_value.tv_nsec = (long)(next % NSEC),
			};

			if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL)) {
				perror("delayline: timerfd_settime");
				rc = 1;
				break;
			}
			armed = next;
		}
		n = epoll_wait(ep, evs, 4, -1);
		if (n < 0 && errno != EINTR) {
			perror("delayline: epoll_wait");
			rc = 1;
			break;
		}
		for (int i = 0; i < n; i++) {
			uint32_t k = evs[i].data.u32;
			uint64_t ticks;

			if (k < 2 && pump(&dirs[k], &c)) {
				rc = 1;
				goto out;
			}
			if (k == 2 && read(tfd, &ticks, sizeof(ticks)) < 0 &&
			    errno != EAGAIN) {
				perror("delayline: timerfd");
				rc = 1;
				goto out;
			}
			if (k == 3) {
				why = "signal";
				goto out;
			}
		}
	}
out:
	printf("delayline: stopped by %s\n", rc ? "an error" : why);
	report(&dirs[0]);
	report(&dirs[1]);
	if (!getrusage(RUSAGE_SELF, &ru))
		printf("delayline: cpu %ld.%03ld s user, %ld.%03ld s system, "
		       "over %.3f s\n", (long)ru.ru_utime.tv_sec,
		       (long)ru.ru_utime.tv_usec / 1000, (long)ru.ru_stime.tv_sec,
		       (long)ru.ru_stime.tv_usec / 1000,
		       (double)(now_ns() - start) / NSEC);
	return rc;
}
