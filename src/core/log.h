/* SPDX-License-Identifier: MIT */
/* Messages for people: every line starts with "dnd: " and names the cause. */
#ifndef DND_LOG_H
#define DND_LOG_H

/* Prints "dnd: <message>\n" to stderr. Never exits. */
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Same as log_err() with "warning: " in front; for things that did not fail. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Aborts with file:line in every build; for states that cannot happen. */
#define DND_BUG_ON(cond)                                                       \
	do {                                                                   \
		if (cond)                                                      \
			log_bug(__FILE__, __LINE__, #cond);                    \
	} while (0)

void log_bug(const char *file, int line, const char *what)
	__attribute__((noreturn));

#endif
