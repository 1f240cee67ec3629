// SPDX-License-Identifier: MIT
/*
 * zcopy_parse(): error-queue messages built by hand (IPv4, IPv6, other
 * origins, failures, a wrapped counter), then real MSG_ZEROCOPY completions
 * off loopback sockets of both families.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/errqueue.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/zcopy.h"

#define T_WAIT_MS 1000

union t_ctl {
	char buf[CMSG_SPACE(sizeof(struct sock_extended_err) +
			    sizeof(struct sockaddr_in6))];
	struct cmsghdr align;
};

/* A message as recvmsg(MSG_ERRQUEUE) would return it. */
static void t_msg(struct msghdr *m, union t_ctl *c, int level, int type,
		  const struct sock_extended_err *ee, size_t len)
{
	struct cmsghdr *cm;

	memset(m, 0, sizeof(*m));
	memset(c, 0, sizeof(*c));
	m->msg_control = c->buf;
	m->msg_controllen = CMSG_SPACE(len);
	cm = CMSG_FIRSTHDR(m);
	cm->cmsg_level = level;
	cm->cmsg_type = type;
	cm->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(cm), ee, len < sizeof(*ee) ? len : sizeof(*ee));
}

static void t_built(void)
{
	struct sock_extended_err ee = { .ee_origin = SO_EE_ORIGIN_ZEROCOPY,
					.ee_info = 5, .ee_data = 9 };
	struct zcopy_done d;
	struct msghdr m;
	union t_ctl c;

	t_msg(&m, &c, SOL_IP, IP_RECVERR, &ee, sizeof(ee));
	CHECK(zcopy_parse(&m, &d) == 1 && d.lo == 5 && d.hi == 9 &&
	      !d.copied && zcopy_calls(&d) == 5, "IPv4: calls 5..9, sent "
	      "without a copy");
	ee.ee_code = SO_EE_CODE_ZEROCOPY_COPIED;
	t_msg(&m, &c, SOL_IPV6, IPV6_RECVERR, &ee, sizeof(ee));
	CHECK(zcopy_parse(&m, &d) == 1 && d.lo == 5 && d.copied,
	      "IPv6 (IPV6_RECVERR): parsed too, COPIED seen");
	ee.ee_info = 0xfffffffeu;
	ee.ee_data = 1;
	t_msg(&m, &c, SOL_IP, IP_RECVERR, &ee, sizeof(ee));
	CHECK(zcopy_parse(&m, &d) == 1 && zcopy_calls(&d) == 4,
	      "a range across the 32-bit wrap counts 4 calls");
	ee.ee_errno = ENOBUFS;
	t_msg(&m, &c, SOL_IPV6, IPV6_RECVERR, &ee, sizeof(ee));
	CHECK(zcopy_parse(&m, &d) == -ENOBUFS, "a failed completion: -errno");
	ee.ee_errno = 0;
	ee.ee_origin = SO_EE_ORIGIN_LOCAL;
	t_msg(&m, &c, SOL_IP, IP_RECVERR, &ee, sizeof(ee));
	CHECK(zcopy_parse(&m, &d) == 0, "another origin is no completion");
	ee.ee_origin = SO_EE_ORIGIN_ZEROCOPY;
	t_msg(&m, &c, SOL_SOCKET, SCM_RIGHTS, &ee, sizeof(ee));
	CHECK(zcopy_parse(&m, &d) == 0, "another control message is skipped");
	t_msg(&m, &c, SOL_IP, IP_RECVERR, &ee, sizeof(ee) - 4);
	CHECK(zcopy_parse(&m, &d) == 0, "a record cut short is not read");
	memset(&m, 0, sizeof(m));
	CHECK(zcopy_parse(&m, &d) == 0, "no control data at all");
}

/* A connected loopback pair of family af; -1 when af is not available. */
static int t_pair(int af, int *cli, int *srv)
{
	struct sockaddr_storage ss = { .ss_family = (sa_family_t)af };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl = af == AF_INET ? sizeof(*a4) : sizeof(*a6);
	int lfd = socket(af, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (af == AF_INET)
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		a6->sin6_addr = in6addr_loopback;
	*cli = *srv = -1;
	if (lfd == -1 || bind(lfd, (struct sockaddr *)&ss, sl) ||
	    listen(lfd, 1) || getsockname(lfd, (struct sockaddr *)&ss, &sl)) {
		if (lfd != -1)
			close(lfd);
		return -1;
	}
	*cli = socket(af, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*cli == -1 || connect(*cli, (struct sockaddr *)&ss, sl))
		*srv = -1;
	else
		*srv = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	close(lfd);
	return *srv == -1 ? -1 : 0;
}

/* Sends once with MSG_ZEROCOPY and parses the completion of call 0. */
static void t_live(int af, const char *name)
{
	static char buf[65536];
	struct pollfd p = { .events = 0 };
	union t_ctl c;
	struct msghdr m = { .msg_control = c.buf,
			    .msg_controllen = sizeof(c.buf) };
	struct zcopy_done d = { 1, 1, false };
	int cli, srv, one = 1, r = 0;

	if (t_pair(af, &cli, &srv)) {
		printf("# %s loopback unavailable: live check skipped\n", name);
		goto out;
	}
	if (setsockopt(cli, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
		printf("# SO_ZEROCOPY: %s: live check skipped\n",
		       strerror(errno));
		goto out;
	}
	CHECK(send(cli, buf, sizeof(buf), MSG_ZEROCOPY) > 0,
	      "%s: send(MSG_ZEROCOPY)", name);
	p.fd = cli;
	/* POLLERR once the completion is on the error queue. */
	if (poll(&p, 1, T_WAIT_MS) == 1 &&
	    recvmsg(cli, &m, MSG_ERRQUEUE | MSG_DONTWAIT) >= 0)
		r = zcopy_parse(&m, &d);
	CHECK(r == 1 && d.lo == 0 && d.hi == 0,
	      "%s: the kernel's completion of send call 0 is parsed (%d)",
	      name, r);
out:
	if (cli != -1)
		close(cli);
	if (srv != -1)
		close(srv);
}

int main(void)
{
	t_built();
	t_live(AF_INET, "IPv4");
	t_live(AF_INET6, "IPv6");
	return CHECK_DONE();
}
