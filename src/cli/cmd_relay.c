// SPDX-License-Identifier: MIT
/*
 * Command line of `dnd relay`: where to accept and where to forward, plus
 * the relay knobs shared with `dnd bench relay` (opt_relay.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_relay.h"
#include "cli/opt_parse.h"
#include "cli/opt_relay.h"
#include "core/log.h"
#include "relay/relay.h"

struct relay_cli {
	struct relay_opts o;
	struct opt_addr listen, target, metrics;
};

#define C struct relay_cli

static const struct opt_word relay_modes[] = {
	{ "splice", DND_RELAY_SPLICE, "socket -> pooled pipe -> socket" },
	{ "rw", DND_RELAY_RW, "recv() into a buffer, send() out of it" },
	{ "sockmap", DND_RELAY_SOCKMAP, "a BPF program redirects socket to "
	  "socket in the kernel (needs CAP_BPF, CAP_NET_ADMIN)" },
	{ NULL, 0, NULL },
};

static const struct opt_def relay_own[] = {
	{ .name = "listen", .letter = 'l', .type = DND_OPT_HOSTPORT,
	  .flags = DND_OPT_F_ANYHOST, .metavar = "[ADDR:]PORT",
	  .group = "Where", .help = "where to accept (no ADDR: every address; "
	  "IPv6 as [ADDR]:PORT)", OPT_AT(C, listen) },
	{ .name = "target", .letter = 't', .type = DND_OPT_HOSTPORT,
	  .group = "Where", .help = "where to connect for each client",
	  OPT_AT(C, target) },
	{ .name = "method", .letter = 'm', .type = DND_OPT_WORD,
	  .words = relay_modes, .metavar = "splice|rw|sockmap",
	  .group = "Where",
	  .hint = "the relay's methods are splice, rw and sockmap",
	  .help = "how bytes cross the relay:", OPT_AT(C, o.mode) },
	{ .name = "json", .type = DND_OPT_FLAG, .group = "Output",
	  .help = "stats as one JSON object per line", OPT_AT(C, o.json) },
	{ .name = "metrics", .type = DND_OPT_HOSTPORT,
	  .flags = DND_OPT_F_ANYHOST, .group = "Output",
	  .metavar = "[ADDR:]PORT", .help = "serve Prometheus counters at "
	  "http://ADDR:PORT/metrics (ADDR default 127.0.0.1)",
	  OPT_AT(C, metrics) },
	{ .name = NULL },
};

static const struct opt_part relay_parts[] = {
	{ relay_own, 0 },
	{ opt_relay_knobs, offsetof(struct relay_cli, o) },
	{ NULL, 0 },
};

/* Missing options and conflicts; adds to st->bad. */
static void relay_check(struct opt_state *st, void *obj)
{
	struct relay_cli *c = obj;

	if (!opt_given(st, "listen")) {
		log_err("relay needs -l [ADDR:]PORT: where to accept");
		st->bad++;
	}
	if (!opt_given(st, "target")) {
		log_err("relay needs -t HOST:PORT: where to forward");
		st->bad++;
	}
	if (st->nargs) {
		log_err("unexpected argument '%s'", st->args[0]);
		st->bad++;
	}
	if (c->o.mode == DND_RELAY_RW && opt_given(st, "pipe-size")) {
		log_err("--pipe-size is for -m splice; -m rw copies through "
			"--buffer");
		st->bad++;
	}
	if (c->o.mode == DND_RELAY_SOCKMAP && opt_given(st, "pipe-size")) {
		log_err("--pipe-size is for -m splice; -m sockmap uses no "
			"pipes (the kernel forwards socket to socket)");
		st->bad++;
	}
	opt_relay_check(st, &c->o);
	if (!opt_given(st, "max-pipes"))
		c->o.max_pipes = 2 * c->o.max_conn;
	c->o.listen_host = c->listen.host[0] ? c->listen.host : NULL;
	c->o.listen_port = c->listen.port;
	c->o.target_host = c->target.host;
	c->o.target_port = c->target.port;
	c->o.metrics = opt_given(st, "metrics");
	c->o.metrics_host = c->metrics.host[0] ? c->metrics.host : NULL;
	c->o.metrics_port = c->metrics.port;
}

static const struct opt_cmd relay_cmd = {
	.name = "relay",
	.usage = "dnd relay -l [ADDR:]PORT -t HOST:PORT [options]",
	.about = "Forwards every TCP connection made to -l to -t through "
		 "epoll loops (one unless --threads), HAProxy-style. Stops on SIGTERM or SIGINT: no "
		 "new connections, open flows get --grace seconds to finish, "
		 "then are reset. SIGUSR1 prints the stats so far; they are "
		 "printed at exit too.",
	.notes = "Sizes take k M G (10^3 ...) or Ki Mi Gi (2^10 ...).\n"
		 "Exit: 0 stopped by a signal, 1 failed, 2 usage error or "
		 "-m sockmap cannot run here.",
	.parts = relay_parts,
	.roles = DND_ROLE_RELAY,
	.check = relay_check,
};

int cmd_relay(int argc, char **argv)
{
	struct relay_cli c;
	struct relay_stats st;
	struct opt_state os;
	int r;

	memset(&c, 0, sizeof(c));
	relay_defaults(&c.o);
	r = opt_parse(&relay_cmd, &c, argc, argv, &os);
	if (r >= 0)
		return r;
	r = relay_run(&c.o, &st);
	if (r == 0 || st.accepted)
		relay_stats_print(&c.o, &st, stdout);
	/* -m sockmap cannot run here: the command asked for what this
	 * machine cannot do, like a usage error. */
	return r == -ENOPKG ? 2 : r ? 1 : 0;
}
