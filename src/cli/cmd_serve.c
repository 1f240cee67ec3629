// SPDX-License-Identifier: MIT
/*
 * Command line of `dnd serve`: the directory, who may connect, the limits;
 * or --new-key to write a key file and exit.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_serve.h"
#include "cli/opt_keys.h"
#include "cli/opt_parse.h"
#include "core/log.h"
#include "core/net.h"
#include "core/net_mptcp.h"
#include "serve/serve.h"
#include "serve/serve_log.h"

struct serve_cli {
	struct serve_opts o;
	const char *new_key;
};

#define C struct serve_cli

static int serve_set_allow(void *obj, const struct opt_def *d,
			   const char *opt, const char *arg)
{
	struct serve_cli *c = obj;
	char why[160];

	if (cidr_parse(&c->o.allow, arg, why, sizeof(why))) {
		log_err("%s", why);
		return 1;
	}
	c->o.has_allow = true;
	return 0;
}

static const struct opt_def serve_defs[] = {
	{ .name = "dir", .type = DND_OPT_STRING, .metavar = "DIR",
	  .group = "What and where", .help = "serve names beneath DIR only "
	  "(pushes land there, pulls read from there)", OPT_AT(C, o.dir) },
	{ .name = "port", .letter = 'p', .type = DND_OPT_PORT,
	  .group = "What and where", .help = "TCP port", OPT_AT(C, o.port) },
	{ .name = "bind", .type = DND_OPT_STRING, .metavar = "ADDR",
	  .group = "What and where", .def = "every address with a key, "
	  "127.0.0.1 without", .help = "listen on ADDR only",
	  OPT_AT(C, o.bind) },
	{ .name = "new-key", .type = DND_OPT_STRING, .metavar = "FILE",
	  .group = "Who", .help = "write a fresh key (32 random bytes as hex, "
	  "mode 0600) to FILE and exit", OPT_AT(C, new_key) },
	{ .name = "allow", .type = DND_OPT_CALL, .set = serve_set_allow,
	  .metavar = "CIDR[,CIDR...]", .group = "Who", .def = "anyone",
	  .help = "accept connections from these prefixes only" },
	{ .name = "max-sessions", .type = DND_OPT_COUNT, .min = 1,
	  .max = 4096, .hint = "give 1 to 4096", .group = "Limits",
	  .help = "transfers at once (however many streams each uses); one "
	  "more is told 'server busy'", OPT_AT(C, o.max_sessions) },
	{ .name = "max-pending-per-source", .type = DND_OPT_COUNT, .min = 1,
	  .max = 1024, .hint = "give 1 to 1024", .group = "Limits",
	  .help = "handshakes one address may have under way before it "
	  "proves the key (keyless: before its first byte), its oldest "
	  "closed for a newer one", OPT_AT(C, o.max_pending_src) },
	{ .name = "max-bytes", .type = DND_OPT_SIZE, .max = 1ULL << 60,
	  .group = "Limits",
	  .def = "0, no limit", .help = "refuse a push longer than SIZE",
	  OPT_AT(C, o.max_bytes) },
	{ .name = "max-buffer", .type = DND_OPT_SIZE, .min = 4096,
	  .max = 1ULL << 30, .group = "Limits", .help = "a session's buffer "
	  "(the client's -b) at most; a larger one is capped, and the "
	  "client's report says so", OPT_AT(C, o.max_buffer) },
	{ .name = "max-memory", .type = DND_OPT_SIZE, .min = 1ULL << 20,
	  .max = 1ULL << 40, .group = "Limits", .help = "the buffers of all "
	  "sessions together at most (streams x the method's buffers x -b): "
	  "one that needs more alone is capped to fit, one that does not fit "
	  "beside the running ones is told 'server busy'",
	  OPT_AT(C, o.max_memory) },
	{ .name = "replace", .type = DND_OPT_FLAG, .group = "Limits",
	  .help = "a push may replace an existing file (atomically, once "
	  "verified; on failure the old file stays)", OPT_AT(C, o.replace) },
	{ .name = "methods", .type = DND_OPT_LIST, .elem = DND_OPT_METHOD,
	  .group = "Limits", .def = "all", .help = "the only methods a client "
	  "may have the server use for its end, a comma list; "
	  "another is refused with this list", OPT_ARRAY(C, o.methods,
	  o.nmethods) },
	{ .name = "grace", .type = DND_OPT_SECONDS, .group = "Limits",
	  .help = "after SIGTERM or SIGINT, running sessions get SEC to finish "
	  "before they are cut", OPT_AT(C, o.grace) },
	{ .name = "window", .letter = 'w', .type = DND_OPT_SIZE,
	  .max = 1ULL << 30, .group = "Limits", .help = "the sessions' "
	  "SO_SNDBUF/SO_RCVBUF; 0 leaves the kernel's autotuning on",
	  OPT_AT(C, o.window) },
	{ .name = "rate", .type = DND_OPT_CALL, .set = opt_set_rate,
	  .group = "Limits", .metavar = "RATE", .help = "pace what a pull "
	  "sends to RATE in all (SO_MAX_PACING_RATE, split evenly over its "
	  "streams): 200M is 200 MB/s, 1gbit a gigabit per second; a push "
	  "is paced by its client's --rate", OPT_AT(C, o.rate) },
	{ .name = "congestion", .letter = 'C', .type = DND_OPT_STRING,
	  .group = "Limits", .metavar = "NAME", .def = "the kernel's",
	  .help = "TCP congestion control on every stream (TCP_CONGESTION); "
	  "it shapes the pulls, where the server sends",
	  OPT_AT(C, o.congestion) },
	{ .name = "mptcp", .type = DND_OPT_FLAG, .group = "What and where",
	  .help = "listen with Multipath TCP (IPPROTO_MPTCP), every stream "
	  "of every session too; a client without MPTCP gets plain TCP",
	  OPT_AT(C, o.mptcp) },
	{ .name = "timeout", .type = DND_OPT_SECONDS, .group = "Limits",
	  .help = "a session fails after SEC without progress; 0: never",
	  OPT_AT(C, o.timeout) },
	{ .name = "json", .type = DND_OPT_FLAG, .group = "Output",
	  .help = "the log as JSON Lines (\"type\": \"serve_session\") on "
	  "stdout; the server's own messages stay on stderr",
	  OPT_AT(C, o.json) },
	{ .name = "log", .type = DND_OPT_STRING, .metavar = "FILE",
	  .group = "Output", .def = "stderr; stdout with --json",
	  .help = "append the log to FILE (text lines start with an RFC 3339 "
	  "time)", OPT_AT(C, o.log) },
	{ .name = "log-burst", .type = DND_OPT_COUNT, .max = 1000000,
	  .hint = "give 0 (no bound) to 1000000", .group = "Output",
	  .def = "10", .help = "lines about refused or failed connections "
	  "per source address in 10 s; one line then counts the rest "
	  "(0: a line for each)", OPT_AT(C, o.log_burst) },
	{ .name = "metrics", .type = DND_OPT_HOSTPORT,
	  .flags = DND_OPT_F_ANYHOST | DND_OPT_F_ZERO_OK, .group = "Output",
	  .metavar = "[ADDR:]PORT", .help = "serve Prometheus counters at "
	  "http://ADDR:PORT/metrics (ADDR default 127.0.0.1; port 0: any)",
	  OPT_AT(C, o.metrics) },
	{ .name = NULL },
};

static const struct opt_part serve_parts[] = {
	{ serve_defs, 0 },
	{ opt_keys, offsetof(C, o.keys) },
	{ NULL, 0 },
};

static void serve_check(struct opt_state *st, void *obj)
{
	struct serve_cli *c = obj;
	char why[320];

	if (st->nargs) {
		log_err("unexpected argument '%s'", st->args[0]);
		st->bad++;
	}
	if (c->new_key && c->o.dir) {
		log_err("--new-key writes a key and exits; run the server "
			"without it");
		st->bad++;
	}
	c->o.has_metrics = opt_given(st, "metrics");
	c->o.window_from = opt_given(st, "window") ? "-w" : "default";
	if (c->o.congestion && net_congestion_check(c->o.congestion, why,
						    sizeof(why))) {
		log_err("%s", why);
		st->bad++;
	}
	if (c->o.mptcp && net_mptcp_check(why, sizeof(why))) {
		log_err("%s", why);
		st->bad++;
	}
	if (!c->new_key && !c->o.dir) {
		log_err("serve needs --dir DIR: where files land and are read");
		st->bad++;
	}
}

static const struct opt_cmd serve_cmd = {
	.name = "serve",
	.usage = "dnd serve --dir DIR [options] | dnd serve --new-key FILE",
	.about = "Runs until SIGTERM or SIGINT and serves transfers beneath "
		 "DIR: a push from 'dnd send' lands as DIR/NAME, a pull from "
		 "'dnd recv' reads DIR/NAME (see their options under 'With "
		 "dnd serve'). Each transfer runs in its own process; one log "
		 "line per transfer on stderr (stdout with --json, or --log "
		 "FILE).",
	.notes = "With --key (or --cert, --cert-key, --ca) every connection "
		 "is TLS 1.3: both ends authenticate, and no one on the path "
		 "can read or change a byte. Without, it listens on 127.0.0.1 "
		 "and serves loopback peers only, in clear text: every local "
		 "user, and anything forwarding from loopback (ssh -L, socat, "
		 "a relay), can push and pull files beneath DIR.\nNames are "
		 "resolved beneath DIR by the kernel (openat2: no '..', no "
		 "symlinks); no directory is created.\n"
		 "Exit: 0 stopped by a signal (or key written), 1 cannot "
		 "serve, 2 usage error.",
	.parts = serve_parts,
	.roles = DND_ROLE_SERVE,
	.check = serve_check,
};

/* Keyless, the server listens on loopback unless told otherwise, and then
 * says what that exposes. */
static void serve_keyless_bind(struct serve_opts *o)
{
	if (key_files_given(&o->keys))
		return;
	if (!o->bind) {
		o->bind = "127.0.0.1";
		return;
	}
	log_err("warning: --bind %s without --key: the port is open to whoever "
		"reaches %s; peers off loopback are refused, but every local "
		"user and anything that forwards from loopback (ssh -L, socat, "
		"a relay) may push and pull files beneath %s, in clear text; "
		"give the server --key FILE", o->bind, o->bind, o->dir);
}

int cmd_serve(int argc, char **argv)
{
	struct serve_cli c;
	struct opt_state st;
	char why[320];
	bool made_dir;
	int r;

	memset(&c, 0, sizeof(c));
	c.o.port = 13931;
	c.o.max_sessions = 32;
	c.o.max_pending_src = 32;
	c.o.log_burst = SERVE_LOG_BURST;
	c.o.grace = 10;
	c.o.timeout = 60;
	c.o.max_buffer = 16ULL << 20;
	c.o.max_memory = 512ULL << 20;
	r = opt_parse(&serve_cmd, &c, argc, argv, &st);
	if (r >= 0)
		return r;
	if (!c.new_key) {
		serve_keyless_bind(&c.o);
		return serve_run(&c.o);
	}
	r = key_new(c.new_key, &made_dir, why, sizeof(why));
	if (r) {
		log_err("%s", why);
		return r == -EEXIST ? 2 : 1;
	}
	log_err("wrote a new key to %s (mode 0600%s); copy it to the clients "
		"over a safe channel", c.new_key,
		made_dir ? ", in a new directory of mode 0700" : "");
	return 0;
}
