// SPDX-License-Identifier: MIT
/* Messages for people: one line each, on stderr (or dnd serve's log),
 * prefixed "dnd: ", control characters escaped. */
#include <sys/time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/esc.h"
#include "core/log.h"

#define LOG_LINE_MAX	1024	/* a message is cut at this */

static FILE *log_f;		/* NULL: stderr */
static bool log_stamped;

void log_to(FILE *f, bool stamp)
{
	log_f = f;
	log_stamped = stamp;
}

char *log_stamp(char *buf, size_t cap)
{
	struct timeval tv;
	struct tm tm;
	char s[24];

	gettimeofday(&tv, NULL);
	if (!gmtime_r(&tv.tv_sec, &tm) ||
	    !strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm))
		s[0] = 0;
	snprintf(buf, cap, "%s.%03dZ", s, (int)(tv.tv_usec / 1000));
	return buf;
}

void log_line(const char *text, size_t n)
{
	char room[ESC_ROOM(LOG_LINE_MAX)], at[32] = "";
	FILE *f = log_f ? log_f : stderr;
	char *safe = room;

	if (n && text[n - 1] == '\n')
		n--;
	if (ESC_ROOM(n) > sizeof(room) && !(safe = malloc(ESC_ROOM(n))))
		return;
	esc_text(safe, ESC_ROOM(n), text, n, 0);
	if (log_stamped)
		strcat(log_stamp(at, sizeof(at)), " ");
	/* One write per line so lines from two processes do not interleave. */
	fprintf(f, "%s%s\n", at, safe);
	fflush(f);
	if (safe != room)
		free(safe);
}

static void log_vline(const char *prefix, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];
	int n = snprintf(line, sizeof(line), "dnd: %s", prefix);

	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	log_line(line, strlen(line));
}

void log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("warning: ", fmt, ap);
	va_end(ap);
}

void log_bug(const char *file, int line, const char *what)
{
	fprintf(stderr, "dnd: BUG at %s:%d: %s\n", file, line, what);
	abort();
}
