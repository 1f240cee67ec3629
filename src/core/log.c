// SPDX-License-Identifier: MIT
/* Messages for people: one line each, on stderr, prefixed "dnd: ". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/log.h"

static void log_vline(const char *prefix, const char *fmt, va_list ap)
{
	char line[1024];

	/* One write per message so lines from two processes do not interleave. */
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "dnd: %s%s\n", prefix, line);
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
