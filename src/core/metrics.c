// SPDX-License-Identifier: MIT
/*
 * /metrics in Prometheus text format through libmicrohttpd: a well-kept
 * HTTP server rather than a hand-written one, since this port faces the
 * network. The owner publishes a snapshot; requests copy it under a mutex.
 */
#include <arpa/inet.h>
#include <sys/socket.h>
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/metrics.h"
#include "core/net.h"

struct dnd_metrics {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	char *text;
	void (*render)(struct metrics_text *t, void *arg);
	void *arg;
	metrics_allow_fn allow;
	void *allow_arg;
};

static enum MHD_Result metrics_accept(void *cls, const struct sockaddr *sa,
				      socklen_t sl)
{
	const struct dnd_metrics *m = cls;

	return !m->allow || m->allow(sa, sl, m->allow_arg) ? MHD_YES : MHD_NO;
}

/* The text to answer with: rendered now, or the last one published. */
static char *metrics_body(struct dnd_metrics *m)
{
	struct metrics_text t = { 0 };
	char *body;

	pthread_mutex_lock(&m->lock);
	if (m->render) {
		m->render(&t, m->arg);
		body = t.oom ? NULL : strdup(t.buf ? t.buf : "");
		metrics_text_free(&t);
	} else {
		body = strdup(m->text ? m->text : "");
	}
	pthread_mutex_unlock(&m->lock);
	return body;
}

static enum MHD_Result metrics_answer(void *cls, struct MHD_Connection *c,
				      const char *url, const char *method,
				      const char *version, const char *upload,
				      size_t *upload_len, void **state)
{
	struct dnd_metrics *m = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned int code = MHD_HTTP_OK;
	char *body;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return MHD_NO;
	body = strcmp(url, "/metrics") ? strdup("not found: try /metrics\n") :
					 metrics_body(m);
	if (!body)
		return MHD_NO;
	if (strcmp(url, "/metrics"))
		code = MHD_HTTP_NOT_FOUND;
	r = MHD_create_response_from_buffer(strlen(body), body,
					    MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type",
				"text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * Idle scrapers or port scanners must not lock Prometheus out: room for
 * many connections (each costs an fd and a lazily touched memory pool),
 * a short idle timeout, and a backlog that holds a burst while the HTTP
 * thread catches up. libmicrohttpd's defaults (and ours before: 16
 * connections, 10 s, backlog 16) left /metrics unreachable while 33 idle
 * connections were held.
 */
#define METRICS_CONN_MAX	1024u
#define METRICS_IDLE_SECONDS	3u
#define METRICS_BACKLOG		512

/* A listening socket of our own, so the address and port 0 work alike for
 * IPv4 and IPv6 and the caller learns what was bound. */
static int metrics_listen(const char *addr, uint16_t port, char *at,
			  size_t atlen, char *err, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = net_listen_nb(addr ? addr : "127.0.0.1", port,
			       METRICS_BACKLOG, err, len);

	if (fd < 0)
		return fd;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		net_addr_str((struct sockaddr *)&ss, sl, at, atlen);
	return fd;
}

struct dnd_metrics *metrics_start(const char *addr, uint16_t port,
				  metrics_allow_fn allow, void *arg, char *at,
				  size_t atlen, char *err, size_t len)
{
	struct dnd_metrics *m = calloc(1, sizeof(*m));
	int fd;

	if (!m) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	fd = metrics_listen(addr, port, at, atlen, err, len);
	if (fd < 0) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->allow = allow;
	m->allow_arg = arg;
	/* AUTO: epoll (or poll), not select(), which refuses a connection
	 * whose fd is past FD_SETSIZE: in a relay of 10,000 flows or a
	 * server holding 1,000 waiting connections, every one. */
	m->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD |
				MHD_USE_ERROR_LOG, 0, metrics_accept, m,
				metrics_answer, m, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, METRICS_CONN_MAX,
				MHD_OPTION_CONNECTION_TIMEOUT,
				METRICS_IDLE_SECONDS,
				MHD_OPTION_END);
	if (!m->d) {
		snprintf(err, len, "libmicrohttpd could not start on %s", at);
		close(fd);
		pthread_mutex_destroy(&m->lock);
		free(m);
		return NULL;
	}
	return m;
}

void metrics_set_render(struct dnd_metrics *m,
			void (*render)(struct metrics_text *t, void *arg),
			void *arg)
{
	pthread_mutex_lock(&m->lock);
	m->render = render;
	m->arg = arg;
	pthread_mutex_unlock(&m->lock);
}

void metrics_publish(struct dnd_metrics *m, const char *text)
{
	char *copy = strdup(text);

	if (!copy)
		return;
	pthread_mutex_lock(&m->lock);
	free(m->text);
	m->text = copy;
	pthread_mutex_unlock(&m->lock);
}

void metrics_stop(struct dnd_metrics *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->d);
	pthread_mutex_destroy(&m->lock);
	free(m->text);
	free(m);
}

static void metrics_printf(struct metrics_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void metrics_printf(struct metrics_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = t->oom ? -1 : vsnprintf(t->buf ? t->buf + t->len : NULL,
					    t->buf ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (t->buf && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = (t->cap + (size_t)n + 1) * 2;
		char *b = realloc(t->buf, cap);

		if (!b) {
			t->oom = 1;
			return;
		}
		t->buf = b;
		t->cap = cap;
	}
}

void metrics_add(struct metrics_text *t, const char *name, const char *type,
		 const char *help, const char *labels, double value)
{
	if (help)
		metrics_printf(t, "# HELP dnd_%s %s\n# TYPE dnd_%s %s\n", name,
			       help, name, type);
	metrics_printf(t, "dnd_%s%s%s%s %.17g\n", name, labels ? "{" : "",
		       labels ? labels : "", labels ? "}" : "", value);
}

void metrics_text_free(struct metrics_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}
