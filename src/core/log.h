/* SPDX-License-Identifier: MIT */
/* Messages for people: every line starts with "dnd: " and names the cause. */
#ifndef DND_LOG_H
#define DND_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Prints "dnd: <message>\n" to stderr (or where log_to() said). Never
 * exits. A control character in the message (a peer's bytes that were not
 * escaped where they were put in) is escaped here (core/esc.h), so no
 * message can forge a line or reach a terminal as an escape sequence.
 */
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Same as log_err() with "warning: " in front; for things that did not fail. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* From now on log_err() and log_warn() write to f, and with stamp each
 * line starts with log_stamp()'s time and a space (dnd serve's log). */
void log_to(FILE *f, bool stamp);

/* Now as RFC 3339 in UTC with milliseconds, "2026-12-02T11:40:03.123Z";
 * cap >= 32. Returns buf. */
char *log_stamp(char *buf, size_t cap);

/* Writes text (n bytes, which end in '\n': one whole line) to the log's
 * stream as log_err() does: control characters other than that newline
 * escaped, and the time in front when stamped. One write. */
void log_line(const char *text, size_t n);

/* Aborts with file:line in every build; for states that cannot happen. */
#define DND_BUG_ON(cond)                                                       \
	do {                                                                   \
		if (cond)                                                      \
			log_bug(__FILE__, __LINE__, #cond);                    \
	} while (0)

void log_bug(const char *file, int line, const char *what)
	__attribute__((noreturn));

#endif
