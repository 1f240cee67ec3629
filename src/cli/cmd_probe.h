/* SPDX-License-Identifier: MIT */
/* `dnd probe [--json] [--require a,b]`: what this kernel and process can do. */
#ifndef DND_CMD_PROBE_H
#define DND_CMD_PROBE_H

/*
 * Returns the exit code: 0 (report printed, or every --require name
 * present), 77 (a required name is missing; which and why on stderr),
 * 2 (usage error or unknown name; the known names on stderr).
 */
int cmd_probe(int argc, char **argv);

#endif
