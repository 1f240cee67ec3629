/* SPDX-License-Identifier: MIT */
/* The relay's knobs, declared once for `dnd relay` and `dnd bench relay`. */
#ifndef DND_OPT_RELAY_H
#define DND_OPT_RELAY_H

#include "cli/opt_parse.h"

struct relay_opts;

/* Entries for DND_ROLE_RELAY and (most) DND_ROLE_BENCH, with offsets into
 * struct relay_opts: give the struct's place as the part's base. */
extern const struct opt_def opt_relay_knobs[];

/* Checks given knobs against this kernel (fs.pipe-max-size); every problem
 * is printed and added to st->bad. */
void opt_relay_check(struct opt_state *st, const struct relay_opts *o);

#endif
