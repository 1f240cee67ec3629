// SPDX-License-Identifier: MIT
/*
 * Command line of `dnd relay`. Every bad option is reported before giving up
 * (exit 2), so a benchmark never relays with a setting it did not ask for.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_relay.h"
#include "core/log.h"
#include "core/net.h"
#include "cli/opts.h"
#include "core/pipe.h"
#include "relay/relay.h"

enum {
	OPT_PIPE_SIZE = 256,
	OPT_MAX_CONN,
	OPT_MAX_PIPES,
	OPT_IDLE_TIMEOUT,
	OPT_CONNECT_TIMEOUT,
	OPT_GRACE,
	OPT_RCVLOWAT,
	OPT_MAXEVENTS,
	OPT_SPLICE_MAX,
	OPT_BUDGET,
	OPT_BUFFER,
	OPT_THREADS,
	OPT_JSON,
};

static const struct option relay_longopts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "target", required_argument, NULL, 't' },
	{ "method", required_argument, NULL, 'm' },
	{ "help", no_argument, NULL, 'h' },
	{ "pipe-size", required_argument, NULL, OPT_PIPE_SIZE },
	{ "max-conn", required_argument, NULL, OPT_MAX_CONN },
	{ "max-pipes", required_argument, NULL, OPT_MAX_PIPES },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "grace", required_argument, NULL, OPT_GRACE },
	{ "rcvlowat", required_argument, NULL, OPT_RCVLOWAT },
	{ "maxevents", required_argument, NULL, OPT_MAXEVENTS },
	{ "splice-max", required_argument, NULL, OPT_SPLICE_MAX },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "buffer", required_argument, NULL, OPT_BUFFER },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

static void relay_usage(FILE *f)
{
	fprintf(f,
		"usage: dnd relay -l [ADDR:]PORT -t HOST:PORT [options]\n\n"
		"Forwards every TCP connection made to -l to -t through one "
		"epoll loop\n(seed 004's HAProxy-style relay). Stops on SIGTERM "
		"or SIGINT: no new\nconnections, open flows get --grace seconds "
		"to finish, then are reset.\nSIGUSR1 prints the stats so far; "
		"they are printed at exit too.\n\n"
		"  -l, --listen [ADDR:]PORT  where to accept (no ADDR: every "
		"address;\n"
		"                            IPv6 as [ADDR]:PORT)\n"
		"  -t, --target HOST:PORT    where to connect for each client\n"
		"  -m, --method NAME         splice (default): socket -> pooled "
		"pipe -> socket\n"
		"                            rw: recv() into a buffer, send() "
		"out of it\n"
		"      --pipe-size SIZE      F_SETPIPE_SZ for the pipes (default "
		"1Mi, or\n"
		"                            fs.pipe-max-size if lower; 0: the "
		"kernel's 64Ki)\n"
		"      --max-conn N          flows at once (default 1024); the "
		"listener waits\n"
		"      --max-pipes N         pipes alive (default 2 x max-conn); "
		"past it a\n"
		"                            connection copies (counted as a "
		"fallback)\n"
		"      --idle-timeout SEC    reset a flow that moved nothing for "
		"SEC (default 0:\n"
		"                            never)\n"
		"      --connect-timeout SEC give up on the target after SEC "
		"(default 5)\n"
		"      --grace SEC           after SIGTERM, wait SEC for open "
		"flows (default 10)\n"
		"      --rcvlowat SIZE       SO_RCVLOWAT on every socket: fewer, "
		"bigger wakeups\n"
		"                            (a tail shorter than SIZE waits "
		"for the FIN)\n"
		"      --maxevents N         epoll_wait batch (default 256)\n"
		"      --splice-max SIZE     most bytes asked per splice "
		"(default: the pipe size)\n"
		"      --budget SIZE         bytes one direction may move per "
		"wakeup (default\n"
		"                            4 pipes, at least 256Ki)\n"
		"      --buffer SIZE         copy buffer per direction (default "
		"64Ki)\n"
		"      --threads N           N event loops, a thread each, "
		"sharing the listener\n"
		"                            and dividing --max-conn and "
		"--max-pipes (default 1)\n"
		"      --json                stats as one JSON object per line\n"
		"  -h, --help                this text\n\n"
		"Sizes take k M G (10^3 ...) or Ki Mi Gi (2^10 ...).\n"
		"Exit: 0 stopped by a signal, 1 failed, 2 usage error.\n");
}

struct relay_cli {
	struct relay_opts o;
	char lhost[256], thost[256];
	bool has_l, has_t, has_pipes, has_psize;
};

static void relay_opt(struct relay_cli *c, int opt, const char *arg, int *bad)
{
	struct relay_opts *o = &c->o;
	uint64_t v;

	switch (opt) {
	case OPT_PIPE_SIZE:
		opt_num_arg("--pipe-size", arg, true, 0, 1U << 30, &v, bad);
		if (v && v < 4096) {
			log_err("--pipe-size '%s': a pipe holds at least one "
				"page (4Ki); 0 keeps the kernel's size", arg);
			(*bad)++;
		}
		o->pipe_size = (unsigned int)v;
		c->has_psize = true;
		break;
	case OPT_MAX_CONN:
		opt_num_arg("--max-conn", arg, false, 1, 1U << 20, &v, bad);
		o->max_conn = (unsigned int)v;
		break;
	case OPT_MAX_PIPES:
		opt_num_arg("--max-pipes", arg, false, 0, 1U << 21, &v, bad);
		o->max_pipes = (unsigned int)v;
		c->has_pipes = true;
		break;
	case OPT_IDLE_TIMEOUT:
		opt_seconds_arg("--idle-timeout", arg, &o->idle_timeout, bad);
		break;
	case OPT_CONNECT_TIMEOUT:
		opt_seconds_arg("--connect-timeout", arg, &o->connect_timeout, bad);
		break;
	case OPT_GRACE:
		opt_seconds_arg("--grace", arg, &o->grace, bad);
		break;
	case OPT_RCVLOWAT:
		opt_num_arg("--rcvlowat", arg, true, 1, 1U << 30, &v, bad);
		o->rcvlowat = (unsigned int)v;
		break;
	case OPT_MAXEVENTS:
		opt_num_arg("--maxevents", arg, false, 1, 65536, &v, bad);
		o->maxevents = (unsigned int)v;
		break;
	case OPT_SPLICE_MAX:
		opt_num_arg("--splice-max", arg, true, 1, 1U << 30, &v, bad);
		o->splice_max = v;
		break;
	case OPT_BUDGET:
		opt_num_arg("--budget", arg, true, 1, 1ULL << 40, &v, bad);
		o->budget = v;
		break;
	case OPT_BUFFER:
		opt_num_arg("--buffer", arg, true, 1, 1U << 30, &v, bad);
		o->buf_size = v;
		break;
	case OPT_THREADS:
		opt_num_arg("--threads", arg, false, 1, DND_RELAY_MAX_THREADS,
			    &v, bad);
		o->threads = (unsigned int)v;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	}
}

/* Conflicts and missing options, all reported; returns how many. */
static int relay_check(const struct relay_cli *c)
{
	const struct relay_opts *o = &c->o;
	unsigned int max = pipe_max_size();
	int bad = 0;

	if (!c->has_l) {
		log_err("relay needs -l [ADDR:]PORT: where to accept");
		bad++;
	}
	if (!c->has_t) {
		log_err("relay needs -t HOST:PORT: where to forward");
		bad++;
	}
	if (o->mode == DND_RELAY_RW && c->has_psize) {
		log_err("--pipe-size is for -m splice; -m rw copies through "
			"--buffer");
		bad++;
	}
	if (c->has_psize && max && o->pipe_size > max) {
		log_err("--pipe-size %u is above fs.pipe-max-size (%u); ask "
			"for less or raise /proc/sys/fs/pipe-max-size",
			o->pipe_size, max);
		bad++;
	}
	return bad;
}

/* Returns -1 to run, or an exit code (help: 0, usage: 2). */
static int relay_parse(int argc, char **argv, struct relay_cli *c)
{
	struct relay_opts *o = &c->o;
	int opt, bad = 0;

	memset(c, 0, sizeof(*c));
	relay_defaults(o);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":l:t:m:h", relay_longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'l':
			opt_hostport_arg("-l", optarg, true, c->lhost,
				   sizeof(c->lhost), &o->listen_port, &bad);
			c->has_l = true;
			break;
		case 't':
			opt_hostport_arg("-t", optarg, false, c->thost,
				   sizeof(c->thost), &o->target_port, &bad);
			c->has_t = true;
			break;
		case 'm':
			if (!strcmp(optarg, "splice")) {
				o->mode = DND_RELAY_SPLICE;
			} else if (!strcmp(optarg, "rw")) {
				o->mode = DND_RELAY_RW;
			} else {
				log_err("-m '%s': the relay's methods are "
					"splice and rw", optarg);
				bad++;
			}
			break;
		case 'h':
			relay_usage(stdout);
			return 0;
		case ':':
			log_err("%s needs a value", argv[optind - 1]);
			bad++;
			break;
		case '?':
			if (optopt)
				log_err("unknown option '-%c'", optopt);
			else
				log_err("unknown option '%s'", argv[optind - 1]);
			bad++;
			break;
		default:
			relay_opt(c, opt, optarg, &bad);
			break;
		}
	}
	if (optind < argc) {
		log_err("unexpected argument '%s'", argv[optind]);
		bad++;
	}
	bad += relay_check(c);
	if (bad) {
		log_err("see 'dnd relay --help'");
		return 2;
	}
	if (!c->has_pipes)
		o->max_pipes = 2 * o->max_conn;
	o->listen_host = c->lhost[0] ? c->lhost : NULL;
	o->target_host = c->thost;
	return -1;
}

int cmd_relay(int argc, char **argv)
{
	struct relay_cli c;
	struct relay_stats st;
	int r = relay_parse(argc, argv, &c);

	if (r >= 0)
		return r;
	r = relay_run(&c.o, &st);
	if (r == 0 || st.accepted)
		relay_stats_print(&c.o, &st, stdout);
	return r ? 1 : 0;
}
