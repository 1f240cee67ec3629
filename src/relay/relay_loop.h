/* SPDX-License-Identifier: MIT */
/*
 * One relay loop (one thread with --threads): its setup, run, timers and
 * end, and the little the loops say to each other (drain, counters).
 */
#ifndef DND_RELAY_LOOP_H
#define DND_RELAY_LOOP_H

#include <signal.h>

#include "relay/relay_types.h"

/*
 * Sets up sh->loops[id] (zeroed by the caller): its epoll, its share of
 * the pipes and of --max-conn, its eventfd when sh->n > 1, and the listener
 * in its epoll. Returns 0 or -errno after saying why; relay_loop_free()
 * undoes a partial setup.
 */
int relay_loop_init(struct relay_shared *sh, unsigned int id);

/*
 * Makes r (loop 0) read SIGTERM, SIGINT and SIGUSR1 from a signalfd
 * (evloop_signalfd(); *old gets the mask before). Returns 0 or -errno.
 */
int relay_loop_signals(struct relay *r, sigset_t *old);

/*
 * Runs r until it has drained; loop 0 ends last. Then resets what flows
 * are left and publishes r's final counters. Returns 0, or -errno when
 * epoll_wait failed (every loop is told to drain then).
 */
int relay_loop_run(struct relay *r);

/* Frees what relay_loop_init() set up; idempotent. Never while r runs. */
void relay_loop_free(struct relay *r);

/*
 * r stops accepting and gives its flows --grace seconds. Idempotent;
 * r's own thread only.
 */
void relay_begin_drain(struct relay *r);

/*
 * Every loop drains: the listener stops listening (queued connections are
 * reset, new ones refused) and each loop is woken to begin its drain.
 * Once; safe from any loop.
 */
void relay_drain_all(struct relay_shared *sh);

/*
 * The counters of all loops as last published (each loop publishes at the
 * end of every turn; the caller's loop should publish first), with the
 * process' CPU and the wall time since sh->t0, into *st.
 */
void relay_loops_sum(struct relay_shared *sh, struct relay_stats *st);

/* Publishes r's counters for relay_loops_sum(); r's own thread only. */
void relay_publish(struct relay *r);

/* Wakes r's loop (its eventfd) from another; nothing with one loop. */
void relay_wake(struct relay *r);

#endif
