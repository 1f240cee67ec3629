/* SPDX-License-Identifier: MIT */
/*
 * CSV rows quoted as RFC 4180 says, for bench and filebench: a field is
 * written as is unless it holds ',', '"', CR or LF; then it is quoted.
 */
#ifndef DND_CSV_H
#define DND_CSV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One row being written: fields are separated as they come. */
struct csv_row {
	FILE *f;
	bool first;
};

/* Starts a row on f. Nothing is written until the first field. */
void csv_row_begin(struct csv_row *r, FILE *f);

/* Ends the row with LF (not RFC 4180's CRLF: awk, cut and Python's csv
 * module all read LF, and every other line dnd prints ends in LF). */
void csv_row_end(struct csv_row *r);

/* A text field; NULL is an empty field. Quoted only when it must be:
 * then inside quotes every '"' is doubled, and CR and LF are kept. */
void csv_str(struct csv_row *r, const char *s);

void csv_u64(struct csv_row *r, uint64_t v);
void csv_i64(struct csv_row *r, int64_t v);

/* A number with 6 significant digits (%.6g); NaN, inf or !have: empty. */
void csv_f64(struct csv_row *r, bool have, double v);

/* n empty fields. */
void csv_empty(struct csv_row *r, unsigned int n);

#endif
