// SPDX-License-Identifier: MIT
/*
 * dnd serve's share of a session (session_link.h): stream 0 from the
 * handshake, the other streams bound to it, the server's report to the
 * client; and the keyed opening and end of every stream.
 */
#include <sys/socket.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/hello.h"
#include "core/io.h"
#include "core/log.h"
#include "core/net.h"
#include "core/stats.h"
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
		/* dnd serve's listener cannot know the direction: -w is
		 * set here, before our accept lets any payload come. The
		 * window scale, chosen at the handshake for the largest
		 * buffer autotuning may reach, covers it. */
		net_window(fd, (int)o->window, o->sender);
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

struct dnd_hello session_hello_cfg(const struct session *s, double by)
{
	return (struct dnd_hello){
		.role = s->o->link ? DND_WIRE_SERVE : DND_WIRE_ONESHOT,
		.version = DND_WIRE_VERSION,
		.tls = s->o->tls,
		.deadline = by,
	};
}

void session_tls_words(const struct session *s, char *why, size_t len)
{
	static const char *const w[][2] = {
		{ "the client", "the sender" }, { "the server", "the receiver" },
	};
	char out[512], *p;
	size_t i;

	if (s->o->link)
		return;
	for (i = 0; i < 2; i++)
		while ((p = strstr(why, w[i][0]))) {
			snprintf(out, sizeof(out), "%.*s%s%s", (int)(p - why),
				 why, w[i][1], p + strlen(w[i][0]));
			snprintf(why, len, "%s", out);
		}
}

int session_hello(struct session *s, int fd, bool acceptor, char *why,
		  size_t len)
{
	struct dnd_hello h = session_hello_cfg(s, stats_now() + DND_HELLO_TIMEOUT);
	int r = acceptor ? hello_accept(fd, &h, why, len) :
			   hello_open(fd, &h, why, len);

	if (r)
		session_tls_words(s, why, len);
	/* The preambles' deadline set the socket's timeouts. */
	if (!r && net_tune(fd, s->o->timeout))
		r = -errno;
	return r;
}

int session_join_send(struct session *s, unsigned int i)
{
	int r = proto_send_join(s->sock[i], &s->join[i]);

	/* The opener binds its streams; a dnd serve session sends its joins
	 * on streams its client bound. */
	if (!r && i && s->o->tls && !(s->o->link && s->o->link->server))
		r = hello_token_send(s->sock[0], s->sock[i]);
	return session_sent(s, r, "stream's join");
}

int session_bound(struct session *s, int fd)
{
	/* A dnd serve client reads joins on streams it bound itself. */
	if (fd == s->sock[0] || !s->o->tls ||
	    (s->o->link && !s->o->link->server))
		return 0;
	return hello_token_check(s->sock[0], fd);
}

void session_close_write(struct session *s)
{
	if (s->o->tls && s->sock[0] >= 0)
		chan_close_notify(s->sock[0]);
}

int session_link_connect(struct session *s, unsigned int i)
{
	const struct session_opts *o = s->o;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
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
	fd = net_connect(host, o->link->port, (int)o->window, o->sender,
			 o->connect_timeout, o->timeout, peer, sizeof(peer),
			 err, sizeof(err));
	if (fd < 0)
		return session_fail(s, "stream %u to the server's streams "
				    "port: %s", i, err);
	s->sock[i] = fd;
	if (net_tune(fd, o->timeout))
		return session_fail(s, "cannot set socket options: %s",
				    strerror(errno));
	r = session_hello(s, fd, false, err, sizeof(err));
	if (r)
		return session_fail(s, "stream %u: %s", i, err);
	return session_join_send(s, i);
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
	char *json = NULL, *text = NULL;
	size_t jlen = 0, tlen = 0, n = 0;
	uint8_t *buf = NULL;

	if (!link_render(s, &json, &jlen, &text, &tlen)) {
		buf = malloc(DND_REPORT_HEAD_LEN + jlen + tlen);
		if (buf)
			n = proto_put_report(buf, DND_REPORT_HEAD_LEN + jlen +
					     tlen, json, jlen, text, tlen);
	}
	if (n)
		proto_send_bytes(s->sock[0], buf, n);
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
	uint8_t *buf = malloc(cap);
	const char *j, *t;
	int r;

	if (!buf)
		return -ENOMEM;
	r = proto_recv_report(s->sock[0], buf, cap, &n, &jl, &tl, why, len);
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

	int r;

	if (s->o->link->server) {
		link_report_send(s);
		session_close_write(s);
		return;
	}
	if (link_report_recv(s, why, sizeof(why)))
		log_warn("no report from the server: %s", why);
	else if (s->o->tls && (r = proto_recv_eof(s->sock[0])))
		log_warn("the server's report did not end: %s",
			 r == -ECONNABORTED ? chan_err(s->sock[0]) :
			 strerror(-r));
}
