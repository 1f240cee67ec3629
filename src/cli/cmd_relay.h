/* SPDX-License-Identifier: MIT */
/* `dnd relay`: command line glue; the relay itself is in relay.c. */
#ifndef DND_CMD_RELAY_H
#define DND_CMD_RELAY_H

/*
 * dnd relay -l [ADDR:]PORT -t HOST:PORT [options]. argv[0] is "relay".
 * Returns the exit code: 0 (stopped by SIGTERM/SIGINT), 1 start-up or loop
 * failure, 2 usage.
 */
int cmd_relay(int argc, char **argv);

#endif
