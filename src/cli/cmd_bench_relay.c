// SPDX-License-Identifier: MIT
/*
 * Command line of `dnd bench relay`: the runs to measure, the relay knobs
 * it passes on (the same table as `dnd relay`), and the load generator's
 * own peers (--sink, --client), each option marked with the role it is for.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_bench_relay.h"
#include "cli/opt_parse.h"
#include "cli/opt_relay.h"
#include "core/log.h"
#include "relay/bench_relay.h"

struct br_cli {
	struct bench_relay_opts b;
	struct opt_addr listen, target, via;
};

#define B struct br_cli
#define RUNS DND_ROLE_BENCH
#define PEERS (DND_ROLE_SINK | DND_ROLE_CLIENT)
#define ALL (RUNS | PEERS)
#define GEN "The load generator alone (for tests and other relays)"

static const struct opt_word br_modes[] = {
	{ "direct", 1u << DND_BR_DIRECT, "the client straight to the sink" },
	{ "splice", 1u << DND_BR_SPLICE, "through 'dnd relay -m splice'" },
	{ "rw", 1u << DND_BR_RW, "through 'dnd relay -m rw'" },
	{ "sockmap", 1u << DND_BR_SOCKMAP, "through 'dnd relay -m sockmap' "
	  "(root: CAP_BPF, CAP_NET_ADMIN)" },
	{ NULL, 0, NULL },
};

static const struct opt_def br_own[] = {
	{ .name = "flows", .type = DND_OPT_LIST, .elem = DND_OPT_COUNT,
	  .min = 1, .max = 100000, .roles = RUNS | DND_ROLE_CLIENT,
	  .group = "What runs", .help = "flows at once, a comma list (the "
	  "client: one value)", OPT_ARRAY(B, b.flows, b.nflows) },
	{ .name = "size", .alias = "bytes", .letter = 's', .type = DND_OPT_SIZE,
	  .max = 1ULL << 50, .roles = RUNS | DND_ROLE_CLIENT,
	  .group = "What runs", .help = "payload per run, split over the flows",
	  OPT_AT(B, b.bytes) },
	{ .name = "reply", .type = DND_OPT_SIZE, .max = 1ULL << 50,
	  .roles = RUNS | DND_ROLE_CLIENT, .group = "What runs", .def = "0",
	  .help = "payload sent back at the same time, split",
	  OPT_AT(B, b.reply) },
	{ .name = "modes", .type = DND_OPT_WORDS, .noun = "mode",
	  .words = br_modes, .roles = RUNS, .group = "What runs",
	  .help = "the paths to measure, a comma list:", OPT_AT(B, b.modes) },
	{ .name = "repeat", .letter = 'r', .type = DND_OPT_COUNT, .min = 1,
	  .max = DND_BR_MAX_REPEAT, .roles = RUNS, .group = "What runs",
	  .help = "runs per cell; the table shows the median",
	  OPT_AT(B, b.repeat) },
	{ .name = "timeout", .alias = "stall", .type = DND_OPT_SECONDS,
	  .flags = DND_OPT_F_POSITIVE, .roles = ALL, .group = "What runs",
	  .help = "fail a run when nothing moves for SEC", OPT_AT(B, b.stall) },
	{ .name = "no-verify", .type = DND_OPT_FLAG, .roles = ALL,
	  .group = "What runs", .help = "the sink only counts (recv "
	  "MSG_TRUNC): a cheaper load generator, so the relay's own cost "
	  "shows more", OPT_AT(B, b.no_verify) },
	{ .name = "json", .type = DND_OPT_FLAG, .roles = RUNS,
	  .group = "What runs", .help = "one JSON object per run (JSON Lines)",
	  OPT_AT(B, b.json) },
	{ .name = "sink-port", .type = DND_OPT_PORT, .roles = RUNS,
	  .group = "Another relay beside ours", .def = "any free one",
	  .help = "the sink's port on 127.0.0.1", OPT_AT(B, b.sink_port) },
	{ .name = "via", .type = DND_OPT_HOSTPORT, .roles = RUNS,
	  .group = "Another relay beside ours", .help = "also measure the "
	  "relay listening there, which must forward to 127.0.0.1:--sink-port "
	  "(e.g. HAProxy)", OPT_AT(B, via) },
	{ .name = "via-pid", .type = DND_OPT_COUNT, .min = 1, .max = 1u << 30,
	  .roles = RUNS, .group = "Another relay beside ours", .metavar = "PID",
	  .help = "its process, for its CPU", OPT_AT(B, b.via_pid) },
	{ .name = "via-name", .type = DND_OPT_STRING, .roles = RUNS,
	  .group = "Another relay beside ours", .metavar = "NAME",
	  .help = "its label", OPT_AT(B, b.via_name) },
	{ .name = "sink", .type = DND_OPT_FLAG,
	  .group = GEN, .help = "check the flows arriving on -l until --count "
	  "are done (or SIGTERM)", OPT_AT(B, b.sink) },
	{ .name = "client", .type = DND_OPT_FLAG,
	  .group = GEN, .help = "open --flows flows to -t, send --size, check "
	  "the --reply", OPT_AT(B, b.client) },
	{ .name = "listen", .letter = 'l', .type = DND_OPT_HOSTPORT,
	  .flags = DND_OPT_F_ANYHOST, .metavar = "[ADDR:]PORT",
	  .roles = DND_ROLE_SINK, .group = GEN, .help = "where the sink "
	  "listens", OPT_AT(B, listen) },
	{ .name = "target", .letter = 't', .type = DND_OPT_HOSTPORT,
	  .roles = DND_ROLE_CLIENT, .group = GEN,
	  .help = "where the client connects", OPT_AT(B, target) },
	{ .name = "count", .type = DND_OPT_COUNT, .max = 1u << 30,
	  .roles = DND_ROLE_SINK, .group = GEN, .def = "0: until SIGTERM",
	  .help = "flows the sink checks before it stops", OPT_AT(B, b.count) },
	{ .name = "half-close", .type = DND_OPT_FLAG, .roles = DND_ROLE_CLIENT,
	  .group = GEN, .help = "the sink replies after the client's FIN",
	  OPT_AT(B, b.after_eof) },
	{ .name = "pause", .type = DND_OPT_FLAG, .roles = PEERS, .group = GEN,
	  .help = "the sink reads nothing but headers, the client stops "
	  "halfway, until SIGUSR1", OPT_AT(B, b.pause) },
	{ .name = NULL },
};

static const struct opt_part br_parts[] = {
	{ br_own, 0 },
	{ opt_relay_knobs, offsetof(struct br_cli, b.relay) },
	{ NULL, 0 },
};

static void br_defaults(struct br_cli *c)
{
	struct bench_relay_opts *b = &c->b;

	memset(c, 0, sizeof(*c));
	b->flows[0] = 1;
	b->flows[1] = 100;
	b->flows[2] = 1000;
	b->nflows = 3;
	b->modes = 1u << DND_BR_DIRECT | 1u << DND_BR_SPLICE |
		   1u << DND_BR_RW;
	b->bytes = 2ULL << 30;
	b->repeat = 1;
	b->stall = 30;
	b->via_name = "via";
	relay_defaults(&b->relay);
	b->relay.max_pipes = 0;
}

/* The addresses, where the runs and the peers read them. */
static void br_settle(const struct opt_state *st, struct br_cli *c)
{
	struct bench_relay_opts *b = &c->b;
	const struct opt_addr *a = b->sink ? &c->listen : &c->target;

	snprintf(b->host, sizeof(b->host), "%s", a->host);
	b->port = a->port;
	snprintf(b->via_host, sizeof(b->via_host), "%s", c->via.host);
	b->via_port = c->via.port;
	if (opt_given(st, "via"))
		b->modes |= 1u << DND_BR_VIA;
}

/* The role, then what depends on it; adds to st->bad. */
static void br_check(struct opt_state *st, void *obj)
{
	struct br_cli *c = obj;
	struct bench_relay_opts *b = &c->b;
	bool peer = b->sink || b->client;

	if (b->sink && b->client) {
		log_err("--sink and --client conflict: one process is one end");
		st->bad++;
	} else {
		opt_check_role(st, b->sink ? DND_ROLE_SINK : b->client ?
				   DND_ROLE_CLIENT : DND_ROLE_BENCH);
	}
	if (b->client && !opt_given(st, "flows"))
		b->nflows = 1;
	if (b->sink && !opt_given(st, "listen")) {
		log_err("--sink needs -l [ADDR:]PORT");
		st->bad++;
	}
	if (b->client && (!opt_given(st, "target") || b->nflows != 1)) {
		log_err("--client needs -t HOST:PORT and one --flows value");
		st->bad++;
	}
	if (!peer && opt_given(st, "via") && !b->sink_port) {
		log_err("--via needs --sink-port: the port its relay forwards "
			"to on 127.0.0.1");
		st->bad++;
	}
	if (!peer && !opt_given(st, "via") &&
	    (opt_given(st, "via-pid") || opt_given(st, "via-name"))) {
		log_err("--via-pid and --via-name describe --via HOST:PORT; "
			"add it");
		st->bad++;
	}
	if (st->nargs) {
		log_err("unexpected argument '%s'", st->args[0]);
		st->bad++;
	}
	opt_relay_check(st, &b->relay);
	br_settle(st, c);
}

static const struct opt_cmd br_cmd = {
	.name = "bench relay",
	.usage = "dnd bench relay [--flows 1,100,1000] [--size SIZE] "
		 "[options]\n       dnd bench relay --sink -l [ADDR:]PORT "
		 "[--count N]\n       dnd bench relay --client -t HOST:PORT "
		 "[--flows N] [--size SIZE]",
	.about = "Sends the same flows directly, through 'dnd relay -m "
		 "splice' and through 'dnd relay -m rw' (each relay a child "
		 "process), checks every byte at the sink, and prints "
		 "throughput, the relay's CPU per GiB and bytes per splice.",
	.notes = "Sizes take k M G (10^3 ...) or Ki Mi Gi (2^10 ...).\n"
		 "Exit: 0 every flow verified, 1 a flow or run failed, 2 "
		 "usage error.",
	.parts = br_parts,
	.roles = ALL,
	.check = br_check,
};

int cmd_bench_relay(int argc, char **argv)
{
	struct br_cli c;
	struct opt_state st;
	int r;

	br_defaults(&c);
	r = opt_parse(&br_cmd, &c, argc, argv, &st);
	if (r >= 0)
		return r;
	if (c.b.sink || c.b.client)
		return bench_relay_peer(&c.b);
	return bench_relay_run(&c.b);
}
