/* SPDX-License-Identifier: MIT */
/*
 * Prometheus text-format metrics over HTTP (libmicrohttpd), for the
 * long-running commands (relay, serve). The owner builds the exposition
 * text and publishes it; the HTTP thread serves the last one at /metrics.
 */
#ifndef DND_METRICS_H
#define DND_METRICS_H

#include <sys/socket.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dnd_metrics;

/* Whether a scraper at sa may connect; called in the HTTP thread. */
typedef bool (*metrics_allow_fn)(const struct sockaddr *sa, socklen_t sl,
				 void *arg);

/*
 * Serves /metrics on addr:port (addr NULL: 127.0.0.1; port 0: any free
 * one) from a thread of libmicrohttpd's, to the peers allow(arg) takes
 * (allow NULL: any; the others are closed unanswered). Returns the handle
 * with the address it listens on in at ("127.0.0.1:9100"), or NULL with
 * the reason in err.
 */
struct dnd_metrics *metrics_start(const char *addr, uint16_t port,
				  metrics_allow_fn allow, void *arg, char *at,
				  size_t atlen, char *err, size_t len);

struct metrics_text;

/* Or, instead of published text: each request renders the text afresh by
 * calling render(t, arg) in the HTTP thread (so render must be safe to
 * call from another thread). */
void metrics_set_render(struct dnd_metrics *m,
			void (*render)(struct metrics_text *t, void *arg),
			void *arg);

/* Replaces what /metrics returns with a copy of text (thread-safe). */
void metrics_publish(struct dnd_metrics *m, const char *text);

/* Stops the server and frees the handle; NULL is fine. */
void metrics_stop(struct dnd_metrics *m);

/* A growing exposition text; every name is prefixed "dnd_". */
struct metrics_text {
	char *buf;
	size_t len, cap;
	int oom;		/* an allocation failed: the text is cut */
};

/*
 * Appends one metric: its HELP and TYPE lines (type "counter" or "gauge")
 * when help is given, then `dnd_NAME{LABELS} VALUE`. labels may be NULL or
 * "cause=\"reset\"".
 */
void metrics_add(struct metrics_text *t, const char *name, const char *type,
		 const char *help, const char *labels, double value);

/* Frees the text's buffer. */
void metrics_text_free(struct metrics_text *t);

#endif
