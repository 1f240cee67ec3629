/* SPDX-License-Identifier: MIT */
/* `dnd probe`'s report and --require, once the command line is read. */
#ifndef DND_PROBE_REPORT_H
#define DND_PROBE_REPORT_H

#include <stdbool.h>

/*
 * Runs every check (the live ones are bounded to about a second each) and
 * prints the table, or one JSON object with json, on stdout. Returns the
 * exit code: 0, or 1 when stdout could not be written.
 */
int probe_report(bool json);

/*
 * req: a comma list of features and methods. Every name must be known
 * (else exit 2, the known names on stderr) before any is checked. Prints the
 * present ones on stdout, then the missing ones with why on stderr.
 * Returns the exit code: 0 all present, 77 one is missing, 2 unknown name.
 */
int probe_require(const char *req);

#endif
