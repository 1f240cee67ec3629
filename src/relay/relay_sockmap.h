/* SPDX-License-Identifier: MIT */
/*
 * A relay flow under -m sockmap: the kernel forwards its bytes (relay_bpf.c)
 * and the loop only sees each side's FIN or reset, passes a FIN on once
 * every byte before it is in the other socket's send queue, and ends it.
 */
#ifndef DND_RELAY_SOCKMAP_H
#define DND_RELAY_SOCKMAP_H

#include "relay/relay_types.h"

/*
 * Under -m sockmap, loads the program for every loop's flows and warns of
 * its unbounded queueing (unless quiet). Sets sh->mode. Returns 0, or
 * -ENOPKG after saying why -m sockmap cannot run here.
 */
int relay_sm_init(struct relay_shared *sh);

/* Frees what relay_sm_init() and the loops' slots hold; idempotent. */
void relay_sm_free(struct relay_shared *sh);

/* Loop r's sockmap slots: 2 a flow of its --max-conn share. 0 or -errno. */
int relay_sm_loop_init(struct relay *r);

/* The target is connected: pairs f's sockets in the sockmap, f may end. */
void relay_sm_open(struct relay *r, struct relay_flow *f);

/*
 * f is closing: its forwarded bytes (the program's counts) go into r's
 * stats and f->sent, its sockets leave the maps, its slots are free.
 */
void relay_sm_end(struct relay *r, struct relay_flow *f);

/*
 * --idle-timeout under -m sockmap: f, the oldest open flow, moved since
 * last seen (its counts)? Then it is moved to the tail and true returned.
 */
bool relay_sm_moved(struct relay *r, struct relay_flow *f);

/*
 * --metrics: reads the counts of r's open flows into r->live, which
 * relay_publish() adds to the bytes, so /metrics grows while flows run.
 * relay_sm_end() moves a flow's share from r->live into the stats.
 */
void relay_sm_live(struct relay *r);

/* Flows in r->handing whose last bytes have arrived pass their FIN on. */
void relay_sm_check(struct relay *r);

#endif
