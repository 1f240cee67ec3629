/* SPDX-License-Identifier: MIT */
/* `dnd serve`: command line glue; the server is in src/serve/serve.c. */
#ifndef DND_CMD_SERVE_H
#define DND_CMD_SERVE_H

/*
 * dnd serve --dir DIR [options], or dnd serve --new-key FILE. argv[0] is
 * "serve". Returns the exit code: 0 (stopped by SIGTERM/SIGINT, or the
 * key written), 1 cannot serve, 2 usage (also a bad DIR or key file).
 */
int cmd_serve(int argc, char **argv);

#endif
