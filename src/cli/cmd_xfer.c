// SPDX-License-Identifier: MIT
/*
 * Command line of `dnd send`, `dnd recv` and the seed's form. Parsing is
 * strict and every conflict is reported before giving up (exit 2), so a
 * benchmark never runs with a setting other than the one asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_xfer.h"
#include "core/log.h"
#include "xfer/method.h"
#include "cli/opts.h"
#include "core/proto.h"
#include "xfer/session.h"

enum xfer_role {
	XFER_AUTO = 0,		/* the seed's form: -c decides */
	XFER_SEND,
	XFER_RECV,
};

enum {
	OPT_PIPE_SIZE = 256,
	OPT_SPLICE_FLAGS,
	OPT_BIND,
	OPT_RAW,
	OPT_NO_VERIFY,
	OPT_JSON,
	OPT_TIMEOUT,
	OPT_CONNECT_TIMEOUT,
	OPT_QD,
	OPT_SYNC,
};

static const struct option xfer_longopts[] = {
	{ "buffer", required_argument, NULL, 'b' },
	{ "connect", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ "limit", required_argument, NULL, 'l' },
	{ "method", required_argument, NULL, 'm' },
	{ "overwrite", no_argument, NULL, 'o' },
	{ "port", required_argument, NULL, 'p' },
	{ "truncate", no_argument, NULL, 't' },
	{ "window", required_argument, NULL, 'w' },
	{ "pipe-size", required_argument, NULL, OPT_PIPE_SIZE },
	{ "splice-flags", required_argument, NULL, OPT_SPLICE_FLAGS },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "qd", required_argument, NULL, OPT_QD },
	{ "sync", required_argument, NULL, OPT_SYNC },
	{ NULL, 0, NULL, 0 },
};

static void xfer_usage(FILE *f, enum xfer_role role)
{
	const struct dnd_method *const *m;

	if (role == XFER_SEND)
		fprintf(f, "usage: dnd send -c HOST [options] FILE\n\n"
			"Connects to HOST and sends FILE (a file, '-' for "
			"stdin, /dev/zero with -l).\n");
	else if (role == XFER_RECV)
		fprintf(f, "usage: dnd recv [options] FILE\n\n"
			"Listens, accepts one sender and writes what it sends "
			"to FILE\n(a new file, '-' for stdout, /dev/null to "
			"discard).\n");
	else
		fprintf(f, "usage: dnd [-b bsz] [-c host] [-h] [-l sz] [-m method] "
			"[-o|-t] [-p port] [-w wsz] FILE\n\n"
			"Timed disk-network-disk transfer over TCP. With -c HOST "
			"it sends FILE to\nHOST, otherwise it receives into FILE. "
			"Subcommands: send, recv (see 'dnd help').\n");
	fprintf(f, "\nThe sender times from just before the first byte is "
		"read until just after\nthe last is sent; the receiver from "
		"just before the first byte is received\nuntil just after the "
		"last is synced to disk.\n\n"
		"  -b, --buffer SIZE     bytes moved per call (default 64Ki)\n"
		"  -c, --connect HOST    send to HOST (name, IPv4 or IPv6 address)\n"
		"  -l, --limit SIZE      send at most SIZE bytes (sender only)\n"
		"  -m, --method NAME     data path (default rw):\n");
	for (m = method_all(); *m; m++) {
		if ((*m)->send_help && role != XFER_RECV)
			fprintf(f, "        %-9s send: %s\n", (*m)->name,
				(*m)->send_help);
		if ((*m)->recv_help && role != XFER_SEND)
			fprintf(f, "        %-9s recv: %s\n", (*m)->name,
				(*m)->recv_help);
	}
	fprintf(f,
		"  -o, --overwrite       FILE exists: overwrite it IN PLACE, then "
		"cut it to the\n"
		"                        bytes received (seed 000's rewrite "
		"case; on failure\n"
		"                        FILE is removed)\n"
		"  -t, --truncate        FILE exists: replace it with the data "
		"received (it is\n"
		"                        removed if the transfer fails)\n"
		"  -p, --port PORT       TCP port (default 13931)\n"
		"  -w, --window SIZE     SO_SNDBUF/SO_RCVBUF to ask for (default "
		"128Ki; 0 leaves\n"
		"                        the kernel's autotuning on)\n"
		"      --pipe-size SIZE  F_SETPIPE_SZ for splice/vmsplice pipes "
		"(default: kernel's)\n"
		"      --splice-flags L  comma list of move,more,gift,none "
		"(default move)\n"
		"      --bind ADDR       receiver: listen on ADDR only\n"
		"      --raw             no dnd framing or verification "
		"(netcat-style peers)\n"
		"      --no-verify       skip hashing; the verdict is then "
		"'counted'\n"
		"      --json            print the report as one JSON object\n"
		"      --timeout SEC     fail after SEC without progress (default "
		"60, 0 = never)\n"
		"      --sync end|stream receiver: fdatasync at the end only (default), "
		"or start\n"
		"                        writeback every 8 MiB as data arrives "
		"(sync_file_range)\n"
		"      --connect-timeout SEC  sender: retry a refused connect for "
		"SEC (default 10)\n"
		"      --qd N            uring: requests in flight (default 4); "
		"zerocopy: ring\n"
		"                        buffers (default: enough to fill the "
		"send buffer)\n"
		"  -h, --help            this text\n\n"
		"Sizes take k M G (10^3, 10^6, 10^9) or Ki Mi Gi (2^10 ...): "
		"64Ki, 1M.\n"
		"The receiver lands FILE under a temporary name and renames it "
		"only after the\nsender's xxh3 hash matches; on any failure "
		"nothing is left under FILE.\n"
		"Exit: 0 done, 1 transfer failed (cause printed), 2 usage "
		"error.\n");
}

static void xfer_port(const char *arg, uint16_t *port, int *bad)
{
	uint64_t v;

	if (opt_parse_uint(arg, 65535, &v) || v == 0) {
		log_err("-p '%s': a port is a number from 1 to 65535", arg);
		(*bad)++;
		return;
	}
	*port = (uint16_t)v;
}

static void xfer_splice_flags(const char *arg, unsigned int *flags, int *bad)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	*flags = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "move"))
			*flags |= SPLICE_F_MOVE;
		else if (!strcmp(tok, "more"))
			*flags |= SPLICE_F_MORE;
		else if (!strcmp(tok, "gift"))
			*flags |= SPLICE_F_GIFT;
		else if (strcmp(tok, "none")) {
			log_err("--splice-flags: unknown flag '%s'; use move, "
				"more, gift or none", tok);
			(*bad)++;
		}
	}
	free(copy);
}

/* Conflicts between options, all reported; returns how many. */
static int xfer_conflicts(const struct session_opts *o, bool overwrite,
			  bool truncate, const char *mname)
{
	char names[128];
	int bad = 0;

	if (overwrite && truncate) {
		log_err("-o and -t conflict: -o overwrites FILE in place, -t "
			"replaces it; choose one");
		bad++;
	}
	if (!o->sender && o->has_limit) {
		log_err("-l limits what is sent; a receiver takes what the "
			"sender sends (drop -l, or send with -c HOST)");
		bad++;
	}
	if (o->sender && (overwrite || truncate)) {
		log_err("-%c is for the receiver's FILE; the sender only reads",
			overwrite ? 'o' : 't');
		bad++;
	}
	if (o->sender && o->bind) {
		log_err("--bind is for the receiver; the sender connects with -c");
		bad++;
	}
	if (!o->m) {
		log_err("unknown method '%s'; %s methods: %s", mname,
			o->sender ? "send" : "receive",
			method_names(o->sender, names, sizeof(names)));
		bad++;
	} else if (o->sender ? !o->m->send : !o->m->recv) {
		log_err("%s cannot %s; use %s", o->m->name,
			o->sender ? "send" : "receive",
			o->sender ? "-m sendfile or -m rw" :
				    "-m splice or -m rw");
		bad++;
	}
	return bad;
}

static void xfer_defaults(struct session_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = 13931;
	o->bsz = 64 * 1024;
	o->window = 128 * 1024;
	o->splice_flags = SPLICE_F_MOVE;
	o->verify = true;
	o->timeout = 60;
	o->connect_timeout = 10;
}

/* Returns -1 to run, or an exit code (help: 0, usage: 2). */
static int xfer_parse(int argc, char **argv, enum xfer_role role,
		      struct session_opts *o)
{
	const char *mname = "rw";
	uint64_t v;
	int c, bad = 0;

	xfer_defaults(o);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:c:hl:m:op:tw:", xfer_longopts,
				NULL)) != -1) {
		switch (c) {
		case 'b':
			opt_num_arg("-b", optarg, true, 1, 1ULL << 30, &o->bsz, &bad);
			break;
		case 'c':
			o->host = optarg;
			break;
		case 'h':
			xfer_usage(stdout, role);
			return 0;
		case 'l':
			opt_num_arg("-l", optarg, true, 0, DND_LEN_MAX, &o->limit, &bad);
			o->has_limit = true;
			break;
		case 'm':
			mname = optarg;
			break;
		case 'o':
			o->overwrite = true;
			break;
		case 'p':
			xfer_port(optarg, &o->port, &bad);
			break;
		case 't':
			o->truncate = true;
			break;
		case 'w':
			opt_num_arg("-w", optarg, true, 0, 1ULL << 30, &o->window, &bad);
			break;
		case OPT_PIPE_SIZE:
			opt_num_arg("--pipe-size", optarg, true, 4096, 1ULL << 30, &v, &bad);
			o->pipe_size = (unsigned int)v;
			break;
		case OPT_SPLICE_FLAGS:
			xfer_splice_flags(optarg, &o->splice_flags, &bad);
			break;
		case OPT_BIND:
			o->bind = optarg;
			break;
		case OPT_RAW:
			o->raw = true;
			break;
		case OPT_NO_VERIFY:
			o->verify = false;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_TIMEOUT:
			opt_seconds_arg("--timeout", optarg, &o->timeout, &bad);
			break;
		case OPT_CONNECT_TIMEOUT:
			opt_seconds_arg("--connect-timeout", optarg,
				     &o->connect_timeout, &bad);
			break;
		case OPT_SYNC:
			if (!strcmp(optarg, "stream")) {
				o->sync_every = 8 << 20;
			} else if (strcmp(optarg, "end")) {
				log_err("--sync '%s': use end (one fdatasync "
					"at the end) or stream (writeback as "
					"data arrives, then fdatasync)", optarg);
				bad++;
			}
			break;
		case OPT_QD:
			if (opt_parse_uint(optarg, 1024, &v) || !v) {
				log_err("--qd '%s': give a queue depth from 1 "
					"to 1024", optarg);
				bad++;
			} else {
				o->qd = (unsigned int)v;
			}
			break;
		case ':':
			log_err("%s needs a value", argv[optind - 1]);
			bad++;
			break;
		default:
			if (optopt)
				log_err("unknown option '-%c'", optopt);
			else
				log_err("unknown option '%s'", argv[optind - 1]);
			bad++;
			break;
		}
	}
	if (role == XFER_AUTO && argc == 1) {
		xfer_usage(stdout, role);
		return 0;
	}
	o->sender = role == XFER_SEND || (role == XFER_AUTO && o->host);
	if (role == XFER_SEND && !o->host) {
		log_err("send needs -c HOST: the address of 'dnd recv'");
		bad++;
	}
	if (role == XFER_RECV && o->host) {
		log_err("recv listens; -c HOST is for send");
		bad++;
	}
	if (optind + 1 != argc) {
		log_err(optind == argc ? "need a FILE (or '-')" :
			"one FILE only; got '%s' too", argv[optind + 1 < argc ?
			optind + 1 : optind]);
		bad++;
	} else {
		o->file = argv[optind];
	}
	o->m = method_find(mname);
	o->overwrite = o->overwrite && !o->truncate ? true : o->overwrite;
	bad += xfer_conflicts(o, o->overwrite, o->truncate, mname);
	if (bad) {
		log_err("see 'dnd %s--help'", role == XFER_SEND ? "send " :
			role == XFER_RECV ? "recv " : "");
		return 2;
	}
	return -1;
}

static int xfer_main(int argc, char **argv, enum xfer_role role)
{
	struct session_opts o;
	int r = xfer_parse(argc, argv, role, &o);

	return r >= 0 ? r : session_run(&o);
}

int cmd_send(int argc, char **argv)
{
	return xfer_main(argc, argv, XFER_SEND);
}

int cmd_recv(int argc, char **argv)
{
	return xfer_main(argc, argv, XFER_RECV);
}

int cmd_seed(int argc, char **argv)
{
	return xfer_main(argc, argv, XFER_AUTO);
}
