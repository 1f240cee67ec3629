// SPDX-License-Identifier: MIT
/*
 * dnd serve's share of a session (session_link.h): stream 0 from the
 * handshake, tagged trailer and reply, the server's report to the client.
 */
#include <sys/socket.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/io.h"
#include "core/log.h"
#include "core/net.h"
#include "core/stats.h"
#include "serve/auth.h"
#include "serve/cidr.h"
#include "serve/handshake.h"
#include "xfer/session_link.h"
#include "xfer/session_types.h"

int session_link_open(struct session *s)
{
	const struct session_opts *o = s->o;
	struct session_link *l = o->link;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char err[320];
	int fd;

	if (l->server) {
		fd = l->sock;
		l->sock = -1;	/* the session closes these */
		s->lfd = l->lfd;
		l->lfd = -1;
		if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
			net_addr_str((struct sockaddr *)&ss, sl, s->res.peer,
				     sizeof(s->res.peer));
	} else {
		fd = l->open(l, s->end.known, s->end.len, s->res.peer,
			     sizeof(s->res.peer), err, sizeof(err));
		if (fd < 0)
			return session_fail(s, "%s", err);
	}
	s->sock[0] = fd;
	io_stop_fd = fd;
	if (net_tune(fd, o->timeout))
		return session_fail(s, "cannot set socket options: %s",
				    strerror(errno));
	return 0;
}

int session_link_connect(struct session *s, unsigned int i)
{
	const struct session_opts *o = s->o;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	uint8_t b[DND_JOIN_LEN + DND_TAG_LEN];
	char host[NI_MAXHOST], err[320], peer[96];
	int fd, r;

	/* The address stream 0 reached, not HOST again: a name may
	 * resolve to another address the second time. */
	if (getpeername(s->sock[0], (struct sockaddr *)&ss, &sl))
		return session_fail(s, "getpeername: %s", strerror(errno));
	r = getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), NULL,
			0, NI_NUMERICHOST);
	if (r)
		return session_fail(s, "getnameinfo: %s", gai_strerror(r));
	fd = net_connect(host, o->link->port, (int)o->window,
			 o->connect_timeout, o->timeout, peer, sizeof(peer),
			 err, sizeof(err));
	if (fd < 0)
		return session_fail(s, "stream %u to the server's streams "
				    "port: %s", i, err);
	s->sock[i] = fd;
	if (net_tune(fd, o->timeout))
		return session_fail(s, "cannot set socket options: %s",
				    strerror(errno));
	proto_put_join(b, &s->join[i]);
	auth_mac(o->link->auth, DND_MAC_JOIN, b, DND_JOIN_LEN,
		 b + DND_JOIN_LEN);
	return session_sent(s, proto_send_bytes(fd, b, sizeof(b)),
			    "stream's join");
}

/* The next connection on the streams listener by end: fd or -errno
 * (-EAGAIN: none came in time); *allowed false when --allow has not its
 * peer. */
static int link_accept(struct session *s, double end, bool *allowed)
{
	const struct cidr_list *allow = s->o->link->allow;
	struct pollfd p = { .fd = s->lfd, .events = POLLIN };
	double left = end - stats_now();
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int r, fd;

	if (left <= 0)
		return -EAGAIN;
	r = poll(&p, 1, (int)(left * 1000) + 1);
	if (r == -1)
		return -errno;
	if (!r)
		return -EAGAIN;
	fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
	if (fd == -1)
		return -errno;
	*allowed = !allow || cidr_match(allow, (struct sockaddr *)&ss, sl);
	return fd;
}

/*
 * A stream's opening: join and tag, within a few seconds (one silent
 * stranger must not hold the port for long). 0 with j set; 1 to drop the
 * connection (no or a wrong tag); -1 when the transfer fails (a proven
 * join that does not fit it).
 */
static int link_knock(struct session *s, int fd, double end,
		      struct dnd_join *j)
{
	uint8_t b[DND_JOIN_LEN + DND_TAG_LEN];
	double by = stats_now() + DND_HS_TIMEOUT;
	char why[96];

	if (hs_recv_by(fd, b, sizeof(b), by < end ? by : end))
		return 1;
	if (auth_mac_verify(s->o->link->auth, DND_MAC_JOIN, b, DND_JOIN_LEN,
			    b + DND_JOIN_LEN)) {
		return 1;
	}
	if (proto_get_join(b, j, why, sizeof(why)) ||
	    j->xfer_id != s->xfer_id || j->streams != s->n || !j->index ||
	    s->sock[j->index] >= 0) {
		session_fail(s, "malformed stream from the peer: a join that "
			     "does not fit this transfer");
		return -1;
	}
	return 0;
}

int session_link_streams(struct session *s, bool ranges)
{
	double end = stats_now() + (s->o->timeout > 0 ? s->o->timeout : 60);
	unsigned int got = 1, dropped = 0, outside = 0;
	struct dnd_join j;
	bool allowed = false;
	int fd, r;

	while (got < s->n) {
		fd = link_accept(s, end, &allowed);
		if (fd == -EINTR)
			return session_fail(s, "interrupted by %s while "
					    "waiting for streams",
					    strsignal(io_stop_signal));
		if (fd < 0)
			return session_fail(s, "only %u of %u streams came: %s",
					    got, s->n, fd == -EAGAIN ?
					    "--timeout" : strerror(-fd));
		if (fd >= 0 && !allowed) {
			close(fd);
			outside++;
			continue;
		}
		r = link_knock(s, fd, end, &j);
		if (r) {
			close(fd);
			if (r < 0)
				return 1;
			dropped++;
			continue;
		}
		if (net_tune(fd, s->o->timeout)) {
			close(fd);
			return session_fail(s, "cannot set socket options: %s",
					    strerror(errno));
		}
		s->sock[j.index] = fd;
		if (ranges)
			s->join[j.index] = j;
		got++;
	}
	close(s->lfd);
	s->lfd = -1;
	if ((dropped || outside) && !s->res.warning[0])
		snprintf(s->res.warning, sizeof(s->res.warning), "dropped %u "
			 "connection(s) to the streams port from outside "
			 "--allow and %u that did not prove the key", outside,
			 dropped);
	return 0;
}

static enum dnd_auth_mac_kind end_kind(bool trailer)
{
	return trailer ? DND_MAC_TRAILER : DND_MAC_REPLY;
}

/* The bytes a trailer's or reply's tag covers: the reply's reason too. */
static size_t end_bytes(uint8_t b[DND_ANSWER_MAX], bool trailer,
			const struct dnd_end *e)
{
	if (!trailer)
		return proto_put_reply(b, e);
	proto_put_end(b, trailer, e);
	return DND_MSG_LEN;
}

int session_end_send(struct session *s, bool trailer, const struct dnd_end *e)
{
	uint8_t b[DND_ANSWER_MAX], tag[DND_TAG_LEN];
	int r = proto_send_end(s->sock[0], trailer, e);

	if (r || !s->o->link)
		return r;
	auth_mac(s->o->link->auth, end_kind(trailer), b,
		 end_bytes(b, trailer, e), tag);
	return proto_send_tag(s->sock[0], tag);
}

int session_end_recv(struct session *s, bool trailer, struct dnd_end *e,
		     char *why, size_t len)
{
	uint8_t b[DND_ANSWER_MAX], tag[DND_TAG_LEN];
	int r = proto_recv_end(s->sock[0], trailer, e, why, len);

	if (r || !s->o->link)
		return r;
	r = proto_recv_tag(s->sock[0], tag);
	if (r)
		return r;
	/* Decoding is strict, so the bytes re-encode to those received. */
	if (auth_mac_verify(s->o->link->auth, end_kind(trailer), b,
			    end_bytes(b, trailer, e), tag)) {
		snprintf(why, len, "its MAC does not verify: data changed on "
			 "the path");
		return -EBADMSG;
	}
	return 0;
}

/* Renders the report both ways into malloc'd strings. 0 or -ENOMEM. */
static int link_render(struct session *s, char **json, size_t *jlen,
		       char **text, size_t *tlen)
{
	FILE *f = open_memstream(json, jlen);

	if (!f)
		return -ENOMEM;
	report_json(f, &s->res);
	fclose(f);
	f = open_memstream(text, tlen);
	if (!f)
		return -ENOMEM;
	report_text(f, &s->res);
	fclose(f);
	while (*jlen && (*json)[*jlen - 1] == '\n')
		(*json)[--*jlen] = 0;
	return 0;
}

static void link_report_send(struct session *s)
{
	const struct dnd_auth *a = s->o->link->auth;
	char *json = NULL, *text = NULL;
	size_t jlen = 0, tlen = 0, n = 0;
	uint8_t *buf = NULL, tag[DND_TAG_LEN];

	if (!link_render(s, &json, &jlen, &text, &tlen)) {
		buf = malloc(DND_REPORT_HEAD_LEN + jlen + tlen);
		if (buf)
			n = proto_put_report(buf, DND_REPORT_HEAD_LEN + jlen +
					     tlen, json, jlen, text, tlen);
	}
	if (n) {
		auth_mac(a, DND_MAC_REPORT, buf, n, tag);
		if (!proto_send_bytes(s->sock[0], buf, n))
			proto_send_tag(s->sock[0], tag);
	}
	free(buf);
	free(json);
	free(text);
}

/* A JSON object of printable ASCII whose brackets balance outside its
 * strings: safe to embed in ours as it is. */
static bool link_json_ok(const char *p, size_t n)
{
	int depth = 0;
	bool str = false;
	size_t i;

	if (n < 2 || p[0] != '{' || p[n - 1] != '}')
		return false;
	for (i = 0; i < n; i++) {
		if (p[i] < 0x20 || p[i] > 0x7e)
			return false;
		if (str && p[i] == '\\' && i + 1 < n)
			i++;
		else if (p[i] == '"')
			str = !str;
		else if (!str && (p[i] == '{' || p[i] == '['))
			depth++;
		else if (!str && (p[i] == '}' || p[i] == ']'))
			depth--;
		if (depth < 0 || (!depth && i + 1 < n))
			return false;
	}
	return !str && !depth;
}

static bool link_text_ok(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((p[i] < 0x20 || p[i] > 0x7e) && p[i] != '\n')
			return false;
	return true;
}

/* The report, checked and kept. 0, or nonzero with why. */
static int link_report_recv(struct session *s, char *why, size_t len)
{
	size_t cap = DND_REPORT_HEAD_LEN + 2 * DND_REPORT_MAX, n, jl, tl;
	uint8_t *buf = malloc(cap), tag[DND_TAG_LEN];
	const char *j, *t;
	int r;

	if (!buf)
		return -ENOMEM;
	r = proto_recv_report(s->sock[0], buf, cap, &n, &jl, &tl, why, len);
	if (!r)
		r = proto_recv_tag(s->sock[0], tag);
	if (!r && auth_mac_verify(s->o->link->auth, DND_MAC_REPORT, buf, n,
				  tag)) {
		snprintf(why, len, "its MAC does not verify");
		r = -EBADMSG;
	}
	j = (const char *)buf + DND_REPORT_HEAD_LEN;
	t = j + jl;
	if (!r && (!link_json_ok(j, jl) || !link_text_ok(t, tl))) {
		snprintf(why, len, "not a report dnd can show");
		r = -EBADMSG;
	}
	if (!r) {
		s->res.peer_json = strndup(j, jl);
		s->res.peer_text = strndup(t, tl);
	}
	if (r && r != -EBADMSG)
		snprintf(why, len, "%s", r == -ENODATA ? "the server closed "
			 "the connection" : strerror(-r));
	free(buf);
	return r;
}

void session_link_report(struct session *s)
{
	char why[160];

	if (s->o->link->server) {
		link_report_send(s);
		return;
	}
	if (link_report_recv(s, why, sizeof(why)))
		log_warn("no report from the server: %s", why);
}
