/* SPDX-License-Identifier: MIT */
/* `dnd bench relay`: command line glue; the runs are in relay/bench_relay.c. */
#ifndef DND_CMD_BENCH_RELAY_H
#define DND_CMD_BENCH_RELAY_H

/*
 * dnd bench relay [options]; argv[0] is "relay". Returns the exit code: 0
 * every run verified, 1 a run failed or could not start, 2 usage.
 */
int cmd_bench_relay(int argc, char **argv);

#endif
