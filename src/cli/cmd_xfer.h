/* SPDX-License-Identifier: MIT */
/* `dnd send`, `dnd recv` and the 2006 form `dnd [-c host] … FILE`. */
#ifndef DND_CMD_XFER_H
#define DND_CMD_XFER_H

/* Each returns the process exit code: 0, 1 (transfer failed), 2 (usage). */
int cmd_send(int argc, char **argv);
int cmd_recv(int argc, char **argv);
/* The 2006 program's form: sends with -c HOST, otherwise receives. */
int cmd_dnd2006(int argc, char **argv);

#endif
