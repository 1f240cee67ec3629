// SPDX-License-Identifier: MIT
/* TCP plumbing shared by send, recv, bench and relay. */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/sockios.h>	/* SIOCINQ, SIOCOUTQ, SIOCATMARK */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/io.h"
#include "core/log.h"
#include "core/net.h"
#include "core/stats.h"

/* The kernel's TCP_CA_NAME_MAX (include/net/tcp.h), not in uapi. */
#define NET_CA_NAME_MAX 16

static void net_name(const struct sockaddr *sa, socklen_t salen, char *out,
		     size_t len)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	const struct sockaddr_in6 *s6 = (const void *)sa;
	struct sockaddr_in s4;

	/* A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d: show a.b.c.d. */
	if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		memset(&s4, 0, sizeof(s4));
		s4.sin_family = AF_INET;
		s4.sin_port = s6->sin6_port;
		memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
		sa = (const struct sockaddr *)&s4;
		salen = sizeof(s4);
	}
	if (getnameinfo(sa, salen, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(out, len, "?");
	else if (sa->sa_family == AF_INET6)
		snprintf(out, len, "[%s]:%s", host, serv);
	else
		snprintf(out, len, "%s:%s", host, serv);
}

static int net_resolve(const char *host, uint16_t port, int flags,
		       struct addrinfo **res, char *err, size_t len)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = flags,
	};
	char serv[8];
	int r;

	snprintf(serv, sizeof(serv), "%u", port);
	r = getaddrinfo(host, serv, &hints, res);
	if (r) {
		snprintf(err, len, "cannot resolve '%s': %s",
			 host ? host : "*", gai_strerror(r));
		return -EHOSTUNREACH;
	}
	return 0;
}

/* The protocol of net_listen's and net_connect's sockets; 0: the
 * resolver's (TCP). */
static int net_protocol;

void net_use_mptcp(bool on)
{
	net_protocol = on ? IPPROTO_MPTCP : 0;
}

static int net_socket(const struct addrinfo *ai, int flags)
{
	return socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | flags,
		      net_protocol ? net_protocol : ai->ai_protocol);
}

void net_window(int fd, int window, bool sender)
{
	if (window > 0)
		setsockopt(fd, SOL_SOCKET, sender ? SO_SNDBUF : SO_RCVBUF,
			   &window, sizeof(window));
}

int net_listen(const char *bind_addr, uint16_t port, int window, bool sender,
	       char *err, size_t len)
{
	struct addrinfo *res, *ai;
	int fd = -1, r, one = 1, zero = 0;

	r = net_resolve(bind_addr, port, AI_PASSIVE, &res, err, len);
	if (r)
		return r;
	/* With no bind address, prefer one dual-stack IPv6 socket. */
	for (int pass = 0; pass < 2 && fd < 0; pass++) {
		for (ai = res; ai; ai = ai->ai_next) {
			if (!bind_addr && (ai->ai_family == AF_INET6) != !pass)
				continue;
			fd = net_socket(ai, 0);
			if (fd == -1) {
				r = -errno;
				continue;
			}
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (ai->ai_family == AF_INET6 && !bind_addr)
				setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
					   sizeof(zero));
			net_window(fd, window, sender);
			if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
			    listen(fd, 16) == 0)
				break;
			r = -errno;
			net_name(ai->ai_addr, ai->ai_addrlen, err, len);
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0) {
		char where[96];

		snprintf(where, sizeof(where), "%s", err);
		snprintf(err, len, "cannot listen on %s: %s%s", where,
			 strerror(-r), r == -EADDRINUSE ?
			 "; another process has the port: choose one with -p" : "");
		return r;
	}
	return fd;
}

int net_accept(int lfd, char *peer, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd;

	do
		fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
	while (fd == -1 && errno == EINTR && !io_stop_signal);
	if (fd == -1)
		return -errno;
	net_name((struct sockaddr *)&ss, sl, peer, len);
	return fd;
}

/*
 * One non-blocking connect, bounded by wait_ms (-1: the kernel's SYN
 * retries, about two minutes), so a host that drops SYNs cannot hold the
 * sender past --timeout. Returns a blocking fd or -errno.
 */
static int net_try_connect(const struct addrinfo *ai, int window, bool sender,
			   int wait_ms)
{
	int fd = net_socket(ai, SOCK_NONBLOCK);
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	socklen_t l = sizeof(int);
	int r, err = 0;

	if (fd == -1)
		return -errno;
	net_window(fd, window, sender);
	r = connect(fd, ai->ai_addr, ai->ai_addrlen);
	if (r == -1 && errno == EINPROGRESS) {
		do
			r = poll(&pfd, 1, wait_ms);
		while (r == -1 && errno == EINTR && !io_stop_signal);
		if (r == 0)
			errno = ETIMEDOUT;
		if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) == 0)
			errno = err;
		r = r > 0 && !err ? 0 : -1;
	}
	if (r == 0 && fcntl(fd, F_SETFL, 0) == 0)
		return fd;
	r = -errno;
	close(fd);
	return r;
}

int net_connect(const char *host, uint16_t port, int window, bool sender,
		double retry_s, double wait_s, char *peer, size_t peerlen,
		char *err, size_t len)
{
	struct addrinfo *res, *ai;
	double deadline = stats_now() + retry_s;
	bool told = false;
	char at[96];
	int fd = -ECONNREFUSED, r;

	r = net_resolve(host, port, 0, &res, err, len);
	if (r)
		return r;
	for (;;) {
		for (ai = res; ai && !io_stop_signal; ai = ai->ai_next) {
			fd = net_try_connect(ai, window, sender, wait_s > 0 ?
					     (int)(wait_s * 1000) : -1);
			if (fd >= 0) {
				net_name(ai->ai_addr, ai->ai_addrlen, peer,
					 peerlen);
				break;
			}
		}
		if (fd >= 0 || fd != -ECONNREFUSED || io_stop_signal ||
		    stats_now() >= deadline)
			break;
		/* Said at once, so that a wait is never silent. */
		if (!told) {
			net_name(res->ai_addr, res->ai_addrlen, at, sizeof(at));
			log_err("nothing listens on %s yet; retrying for %g s "
				"(--connect-timeout)", at, retry_s);
			told = true;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 },
			  NULL);
	}
	freeaddrinfo(res);
	if (fd == -ECONNREFUSED && told)
		snprintf(err, len, "cannot connect to %s port %u: %s for %g s "
			 "(--connect-timeout); is 'dnd recv' listening there "
			 "(same -p)?", host, port, strerror(-fd), retry_s);
	else if (fd == -ECONNREFUSED)
		snprintf(err, len, "cannot connect to %s port %u: %s; is 'dnd "
			 "recv' listening there (same -p)? To wait for one that "
			 "starts later, give --connect-timeout SEC", host, port,
			 strerror(-fd));
	else if (fd < 0)
		snprintf(err, len, "cannot connect to %s port %u: %s", host,
			 port, strerror(-fd));
	return fd;
}

void net_quickack(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

int net_tune(int fd, double secs)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		return -errno;
	if (secs > 0) {
		struct timeval tv = {
			.tv_sec = (time_t)secs,
			.tv_usec = (suseconds_t)((secs - (double)(time_t)secs) * 1e6),
		};

		if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
		    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
			return -errno;
	}
	return 0;
}

int net_pace(int fd, uint64_t bytes_per_s)
{
	unsigned long v = (unsigned long)bytes_per_s;

	if (!bytes_per_s)
		return 0;
	return setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &v,
			  sizeof(v)) ? -errno : 0;
}

int net_congestion(int fd, const char *name)
{
	if (!name)
		return 0;
	return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name,
			  (socklen_t)strlen(name)) ? -errno : 0;
}

void net_congestion_get(int fd, char *buf, size_t len)
{
	char n[NET_CA_NAME_MAX + 1] = "";
	socklen_t l = NET_CA_NAME_MAX;

	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, n, &l))
		l = 0;
	snprintf(buf, len, "%.*s", (int)strnlen(n, l), n);
}

/* A line of /proc/sys/net/ipv4/NAME, its spaces single, into buf. */
static void net_sysctl_line(const char *name, char *buf, size_t len)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/%s", name);
	f = fopen(path, "re");
	if (!f || !fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

int net_congestion_check(const char *name, char *why, size_t len)
{
	char avail[256], allowed[256];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd == -1)
		r = -errno;
	else if (strlen(name) >= NET_CA_NAME_MAX)
		r = -ENOENT;
	else
		r = net_congestion(fd, name);
	if (fd != -1)
		close(fd);
	if (!r || fd == -1) {
		if (r)
			snprintf(why, len, "cannot try congestion control "
				 "'%s': socket: %s", name, strerror(-r));
		return r;
	}
	/* Read after the try: a module it loaded is in the list now. */
	net_sysctl_line("tcp_available_congestion_control", avail,
			sizeof(avail));
	net_sysctl_line("tcp_allowed_congestion_control", allowed,
			sizeof(allowed));
	if (r == -EPERM)
		snprintf(why, len, "congestion control '%s' is available but "
			 "not allowed for this user; use one of: %s (or run "
			 "as root, or add it to "
			 "net.ipv4.tcp_allowed_congestion_control)", name,
			 allowed);
	else
		snprintf(why, len, "congestion control '%s' is not available; "
			 "use one of: %s", name, avail);
	return r;
}

int net_wait_by(int fd, short ev, double deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };
	double left;
	int r;

	for (;;) {
		if (io_stop_signal)
			return -EINTR;
		left = deadline - stats_now();
		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)((left > 3600 ? 3600 : left) * 1000) + 1);
		if (r == -1 && errno != EINTR)
			return -errno;
		if (r > 0)
			return 0;
	}
}

int net_send_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t r;

		if (io_stop_signal)
			return -EINTR;
		r = chan_tls(fd) ? chan_write(fd, p, n) :
				   send(fd, p, n, MSG_NOSIGNAL);
		if (r < -1) {	/* chan_write's -errno */
			errno = (int)-r;
			r = -1;
		}

		if (r == -1 && errno == EINTR && !io_stop_signal)
			continue;
		if (r == -1)
			return -errno;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int net_recv_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r;

		if (io_stop_signal)
			return -EINTR;
		r = chan_tls(fd) ? chan_read(fd, p, n) : recv(fd, p, n, 0);
		if (r < -1) {	/* chan_read's -errno */
			errno = (int)-r;
			r = -1;
		}

		if (r == -1 && errno == EINTR && !io_stop_signal)
			continue;
		if (r == -1)
			return -errno;
		if (r == 0)
			return -ENODATA;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

void net_bufs(int fd, int *sndbuf, int *rcvbuf)
{
	socklen_t l = sizeof(int);

	*sndbuf = *rcvbuf = 0;
	getsockopt(fd, SOL_SOCKET, SO_SNDBUF, sndbuf, &l);
	l = sizeof(int);
	getsockopt(fd, SOL_SOCKET, SO_RCVBUF, rcvbuf, &l);
}

int net_tcp_info(int fd, struct tcp_info *ti)
{
	socklen_t l = sizeof(*ti);

	memset(ti, 0, sizeof(*ti));
	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &l) == -1 ? -errno : 0;
}

/* The socket queue ioctls all answer an int. */
static int net_ioctl_int(int fd, unsigned long req)
{
	int v = 0;

	return ioctl(fd, req, &v) == -1 ? -errno : v;
}

int net_inq(int fd)
{
	return net_ioctl_int(fd, SIOCINQ);
}

int net_outq(int fd)
{
	return net_ioctl_int(fd, SIOCOUTQ);
}

int net_deliver(int fd, double secs)
{
	double end = stats_now() + secs;
	struct tcp_info ti;
	int q;

	if (shutdown(fd, SHUT_WR) == -1)
		return -errno;
	/* No event says "acknowledged": ask the queue, every millisecond,
	 * until the connection is gone (a reset keeps the count). */
	while ((q = net_outq(fd)) > 0 && stats_now() < end) {
		if (net_tcp_info(fd, &ti) == 0 && ti.tcpi_state == TCP_CLOSE)
			return -ECONNRESET;
		poll(NULL, 0, 1);
	}
	return q < 0 ? q : q ? -ETIMEDOUT : 0;
}

int net_at_mark(int fd)
{
	return net_ioctl_int(fd, SIOCATMARK);
}

int net_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl == -1 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		return -errno;
	return 0;
}

int net_listen_nb(const char *bind_addr, uint16_t port, int backlog,
		  char *err, size_t len)
{
	int fd = net_listen(bind_addr, port, 0, false, err, len), r;

	if (fd < 0)
		return fd;
	if (listen(fd, backlog) == -1 || net_nonblock(fd)) {
		r = -errno;
		snprintf(err, len, "cannot set up the listening socket: %s",
			 strerror(errno));
		close(fd);
		return r;
	}
	return fd;
}

int net_addr(const char *host, uint16_t port, struct sockaddr_storage *ss,
	     socklen_t *sl, char *err, size_t len)
{
	struct addrinfo *res;
	int r = net_resolve(host, port, 0, &res, err, len);

	if (r)
		return r;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sl = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

bool net_addr_loopback(const struct sockaddr *sa, socklen_t sl)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family == AF_UNIX)
		return true;
	if (sa->sa_family == AF_INET && sl >= sizeof(*s4))
		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family != AF_INET6 || sl < sizeof(*s6))
		return false;
	return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
	       (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) &&
		s6->sin6_addr.s6_addr[12] == 127);
}

int net_host_loopback(const char *host, char *err, size_t len)
{
	struct addrinfo *res, *ai;
	int r = net_resolve(host, 0, 0, &res, err, len);
	bool lo = true;

	if (r)
		return r;
	for (ai = res; ai; ai = ai->ai_next)
		lo = lo && net_addr_loopback(ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(res);
	return lo;
}

void net_addr_str(const struct sockaddr *sa, socklen_t sl, char *out,
		  size_t len)
{
	net_name(sa, sl, out, len);
}

int net_connect_nb(const struct sockaddr *sa, socklen_t sl, bool *pending)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK |
			SOCK_CLOEXEC, 0);
	int r;

	*pending = false;
	if (fd == -1)
		return -errno;
	if (connect(fd, sa, sl) == 0)
		return fd;
	if (errno == EINPROGRESS || errno == EINTR) {
		*pending = true;
		return fd;
	}
	r = -errno;
	close(fd);
	return r;
}

int net_connect_done(int fd)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(int);
	int e = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) == -1)
		return -errno;
	if (e)
		return -e;
	/* SO_ERROR is 0 both when connected and while still connecting. */
	l = sizeof(ss);
	if (getpeername(fd, (struct sockaddr *)&ss, &l) == -1)
		return errno == ENOTCONN ? -EINPROGRESS : -errno;
	return 0;
}

int net_split_hostport(const char *arg, bool host_optional, bool any_port,
		       char *host, size_t hlen, uint16_t *port, char *err,
		       size_t len)
{
	const char *colon = strrchr(arg, ':'), *p, *h = arg;
	size_t hl = 0;
	char *end;
	unsigned long v;

	host[0] = 0;
	if (arg[0] == '[') {
		const char *rb = strchr(arg, ']');

		if (!rb || rb[1] != ':') {
			snprintf(err, len, "'%s': write an IPv6 address as "
				 "[ADDR]:PORT", arg);
			return -EINVAL;
		}
		h = arg + 1;
		hl = (size_t)(rb - h);
		p = rb + 2;
	} else if (colon) {
		if (strchr(arg, ':') != colon) {
			snprintf(err, len, "'%s': write an IPv6 address as "
				 "[ADDR]:PORT", arg);
			return -EINVAL;
		}
		hl = (size_t)(colon - arg);
		p = colon + 1;
	} else {
		p = arg;
	}
	if ((!hl && !host_optional) || hl >= hlen) {
		snprintf(err, len, "'%s': %s", arg, hl ? "host name too long" :
			 "give HOST:PORT, e.g. 127.0.0.1:8080");
		return -EINVAL;
	}
	/* strtoul() would also take leading blanks and a sign: not a port. */
	errno = 0;
	v = strtoul(p, &end, 10);
	if (*p < '0' || *p > '9' || *end || errno || (!v && !any_port) ||
	    v > 65535) {
		snprintf(err, len, "'%s': the port must be a number from %s to "
			 "65535", arg, any_port ? "0 (any free one)" : "1");
		return -EINVAL;
	}
	memcpy(host, h, hl);
	host[hl] = 0;
	*port = (uint16_t)v;
	return 0;
}
