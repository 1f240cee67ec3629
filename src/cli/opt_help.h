/* SPDX-License-Identifier: MIT */
/* --help and --version, printed from the same tables the parser reads. */
#ifndef DND_OPT_HELP_H
#define DND_OPT_HELP_H

#include <stdio.h>

#include "cli/opt_parse.h"

/*
 * Prints c's help to f: usage, what it does, then its options grouped under
 * their headings, only those of c's roles, each with its default (the value
 * obj holds before parsing, unless the entry words it), then c's notes.
 */
void opt_help(const struct opt_cmd *c, const void *obj, FILE *f);

/* Prints text from column col, wrapped before column 80; lines after the
 * first (and after each '\n' in text) start at column indent. */
void opt_wrap(FILE *f, int col, int indent, const char *text);

/* Prints dnd's version, the running kernel and the features built in. */
void opt_version(FILE *f);

#endif
