/* SPDX-License-Identifier: MIT */
/*
 * `dnd bench relay`: direct, splice relay and copy relay side by side under
 * the built-in load generator, plus the generator's own peers for tests.
 */
#ifndef DND_BENCH_RELAY_H
#define DND_BENCH_RELAY_H

/*
 * dnd bench relay [options]; argv[0] is "relay". Returns the exit code: 0
 * every run verified, 1 a run failed or could not start, 2 usage.
 */
int cmd_bench_relay(int argc, char **argv);

#endif
