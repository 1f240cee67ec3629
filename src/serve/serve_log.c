// SPDX-License-Identifier: MIT
/* dnd serve's log: where, when, and how many failures; see serve_log.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "core/log.h"
#include "core/stats.h"
#include "serve/serve_log.h"

int serve_log_open(struct serve_log *g, const char *path, bool json,
		   unsigned int burst, char *why, size_t len)
{
	int fd;

	memset(g, 0, sizeof(*g));
	g->json = json;
	g->burst = burst;
	g->out = json ? stdout : stderr;
	if (path) {
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			  0640);
		g->out = fd >= 0 ? fdopen(fd, "a") : NULL;
		if (!g->out) {
			snprintf(why, len, "--log %s: %s", path,
				 strerror(errno));
			if (fd >= 0)
				close(fd);
			return -errno;
		}
	}
	/* JSON Lines stay JSON: the server's own messages go to stderr. */
	log_to(json ? stderr : g->out, true);
	return 0;
}

/* The source of peer "addr:port" or "[addr]:port": addr. */
static void log_addr(const char *peer, char *addr, size_t cap)
{
	char *colon;
	size_t n;

	snprintf(addr, cap, "%s", peer);
	colon = strrchr(addr, ':');
	if (colon && colon != addr && addr[0] != ':')
		*colon = 0;
	n = strlen(addr);
	if (addr[0] == '[' && n > 1 && addr[n - 1] == ']') {
		memmove(addr, addr + 1, n - 2);
		addr[n - 2] = 0;
	}
}

/* The line that counts what a window left out. */
static void log_suppressed(struct serve_log *g, struct serve_log_src *s,
			   double secs)
{
	const char *from = s == &g->src[SERVE_LOG_SOURCES] ? NULL : s->addr;
	struct json j;

	if (!g->json) {
		log_err("%lu more refused or failed connections from %s in "
			"the last %.0f s (not shown)", s->hidden,
			from ? from : "other addresses", secs);
		return;
	}
	json_begin_doc(&j, g->out, "serve_suppressed");
	json_str(&j, "source", from);
	json_u64(&j, "suppressed", s->hidden);
	json_f64(&j, "seconds", secs);
	json_end(&j);
}

void serve_log_tick(struct serve_log *g, double now, bool all)
{
	struct serve_log_src *s;
	unsigned int i;

	for (i = 0; i <= SERVE_LOG_SOURCES; i++) {
		s = &g->src[i];
		if (!s->t0 || (!all && now - s->t0 < SERVE_LOG_WINDOW))
			continue;
		if (s->hidden)
			log_suppressed(g, s, now - s->t0 < SERVE_LOG_WINDOW ?
				       now - s->t0 : SERVE_LOG_WINDOW);
		memset(s, 0, sizeof(*s));
	}
}

/* Whether a failure from peer gets its line: the first SERVE_LOG_BURST of
 * its source's window do; the others are counted. */
static bool log_admit(struct serve_log *g, const char *peer)
{
	struct serve_log_src *s = NULL;
	double now = stats_now();
	char addr[sizeof(s->addr)];
	unsigned int i;

	serve_log_tick(g, now, false);
	log_addr(peer, addr, sizeof(addr));
	for (i = 0; i < SERVE_LOG_SOURCES; i++) {
		if (g->src[i].t0 && !strcmp(g->src[i].addr, addr)) {
			s = &g->src[i];
			break;
		}
		if (!g->src[i].t0 && !s)
			s = &g->src[i];
	}
	if (!s)
		s = &g->src[SERVE_LOG_SOURCES];
	if (!s->t0) {
		s->t0 = now;
		if (s != &g->src[SERVE_LOG_SOURCES])
			snprintf(s->addr, sizeof(s->addr), "%s", addr);
	}
	if (!g->burst || s->shown < g->burst) {
		s->shown++;
		return true;
	}
	s->hidden++;
	return false;
}

void serve_log_failed(struct serve_log *g, const char *peer, double secs,
		      const char *what, bool tried)
{
	struct json j;

	if (!log_admit(g, peer))
		return;
	if (!g->json && tried) {
		log_err("session %s: 0 bytes in %.3f s, failed: %s", peer,
			secs, what);
		return;
	}
	if (!g->json) {
		log_err("session %s: %s", peer, what);
		return;
	}
	/* No request was read: the fields it would give are null. */
	json_begin_doc(&j, g->out, "serve_session");
	json_str(&j, "peer", peer);
	json_str(&j, "direction", NULL);
	json_str(&j, "name", NULL);
	json_str(&j, "method", NULL);
	json_u64(&j, "bytes", 0);
	json_f64(&j, "seconds", secs);
	json_str(&j, "verdict", "failed");
	json_str(&j, "error", what);
	json_str(&j, "tls", NULL);
	json_end(&j);
}

void serve_log_child(struct serve_log *g, const char *peer, bool failed,
		     const char *line, size_t n)
{
	if (failed && !log_admit(g, peer))
		return;
	if (!g->json) {
		log_line(line, n);
		return;
	}
	fwrite(line, 1, n, g->out);
	fflush(g->out);
}

void serve_log_close(struct serve_log *g)
{
	serve_log_tick(g, stats_now(), true);
	log_to(NULL, false);
	if (g->out && g->out != stdout && g->out != stderr)
		fclose(g->out);
	g->out = NULL;
}
