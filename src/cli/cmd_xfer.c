// SPDX-License-Identifier: MIT
/*
 * Command line of `dnd send`, `dnd recv` and the 2006 program's form: one table
 * of options, each marked with the side(s) it is for, and the checks between
 * them. Every problem is reported before giving up (exit 2).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_xfer.h"
#include "cli/opt_keys.h"
#include "cli/opt_parse.h"
#include "core/io.h"
#include "core/esc.h"
#include "core/land.h"
#include "core/log.h"
#include "core/net.h"
#include "core/net_mptcp.h"
#include "core/proto.h"
#include "serve/key.h"
#include "serve/serve_client.h"
#include "xfer/method.h"
#include "xfer/session.h"

/* The options of a transfer, and those of one with dnd serve on the far
 * end (--to, --from). */
struct xfer_cli {
	struct session_opts o;
	const char *to, *from, *peer_name;
	struct dnd_keyfiles keys;
	const struct dnd_method *peer_m;
	unsigned int peer_end;		/* enum serve_end; 0: --to/--from */
	uint64_t peer_size;		/* a pull from a special end */
	bool insecure;			/* keyless to a server off loopback */
};

#define S struct session_opts
#define X struct xfer_cli
#define GIB (1ULL << 30)
#define BOTH (DND_ROLE_SEND | DND_ROLE_RECV)

static const struct opt_word xfer_sync_words[] = {
	{ "end", 0, "one fdatasync once everything is in" },
	{ "stream", 8 << 20, "start writeback every 8 MiB as data arrives "
	  "(sync_file_range), so disk and network overlap" },
	{ NULL, 0, NULL },
};

static const struct opt_word xfer_verify_words[] = {
	{ "received", DND_VERIFY_RECEIVED, "hash the bytes as they arrive, "
	  "where they pass through memory (no second read; splice tees them "
	  "aside); uring-splice, and -P above 1, read the landed file back" },
	{ "readback", DND_VERIFY_READBACK, "read the landed file back and "
	  "hash that: also checks what the disk (or, with --direct, the "
	  "device) kept" },
	{ NULL, 0, NULL },
};

static const struct opt_word xfer_end_words[] = {
	{ "zero", SERVE_END_ZERO, "pull: the server sends /dev/zero" },
	{ "null", SERVE_END_NULL, "push: the server discards into /dev/null" },
	{ "scratch", SERVE_END_SCRATCH, "push: the server lands and verifies a "
	  "randomly named file beneath DIR, then removes it; pull: it sends "
	  "random bytes from an unnamed file beneath DIR" },
	{ NULL, 0, NULL },
};

static const struct opt_word xfer_splice_words[] = {
	{ "move", SPLICE_F_MOVE, NULL },
	{ "more", SPLICE_F_MORE, NULL },
	{ "gift", SPLICE_F_GIFT, NULL },
	{ "none", 0, NULL },
	{ NULL, 0, NULL },
};

static const struct opt_def xfer_opts[] = {
	{ .name = "connect", .letter = 'c', .type = DND_OPT_STRING,
	  .group = "Connection", .metavar = "HOST",
	  .help = "send to HOST (a name, an IPv4 or an IPv6 address); with "
	  "dnd serve on HOST, recv pulls from it", OPT_AT(S, host) },
	{ .name = "port", .letter = 'p', .type = DND_OPT_PORT,
	  .group = "Connection", .help = "TCP port", OPT_AT(S, port) },
	{ .name = "bind", .type = DND_OPT_STRING, .roles = DND_ROLE_RECV,
	  .group = "Connection", .metavar = "ADDR",
	  .help = "listen on ADDR only (default: every address)",
	  .misuse = "--bind is for the receiver; the sender connects with -c",
	  OPT_AT(S, bind) },
	{ .name = "connect-timeout", .type = DND_OPT_SECONDS,
	  .roles = DND_ROLE_SEND, .group = "Connection",
	  .help = "while the connection is refused (nothing listens yet), "
	  "retry for SEC; 0 fails at once, as iperf3 does",
	  OPT_AT(S, connect_timeout) },
	{ .name = "window", .letter = 'w', .type = DND_OPT_SIZE, .max = GIB,
	  .group = "Connection", .def = "0; the 2006 form: 128Ki",
	  .help = "SO_SNDBUF/SO_RCVBUF to ask for; 0 "
	  "leaves the kernel's autotuning on", OPT_AT(S, window) },
	{ .name = "rate", .type = DND_OPT_CALL, .set = opt_set_rate,
	  .roles = DND_ROLE_SEND, .group = "Connection", .metavar = "RATE",
	  .help = "pace the sending sockets to RATE in all "
	  "(SO_MAX_PACING_RATE, split evenly over -P streams; TCP paces "
	  "itself, no fq qdisc needed): 200M is 200 MB/s, 1gbit a gigabit "
	  "per second", .misuse = "--rate paces the sender's sockets; give "
	  "it to dnd send (a pull from dnd serve is paced by serve --rate)",
	  OPT_AT(S, rate) },
	{ .name = "congestion", .letter = 'C', .type = DND_OPT_STRING,
	  .group = "Connection", .metavar = "NAME", .def = "the kernel's",
	  .help = "TCP congestion control on every stream (TCP_CONGESTION), "
	  "one of net.ipv4.tcp_available_congestion_control; the sender's "
	  "is the one that shapes the transfer", OPT_AT(S, congestion) },
	{ .name = "mptcp", .type = DND_OPT_FLAG, .group = "Connection",
	  .help = "Multipath TCP (IPPROTO_MPTCP) on every stream; the "
	  "report shows the subflows and the bytes each carried, or that "
	  "a peer without MPTCP made it fall back to TCP", OPT_AT(S, mptcp) },
	{ .name = "method", .letter = 'm', .type = DND_OPT_METHOD,
	  .group = "Data path", .help = "how the bytes move:", OPT_AT(S, m) },
	{ .name = "buffer", .letter = 'b', .type = DND_OPT_SIZE, .min = 1,
	  .max = GIB, .group = "Data path", .help = "bytes moved per call",
	  OPT_AT(S, bsz) },
	{ .name = "limit", .letter = 'l', .type = DND_OPT_SIZE,
	  .max = DND_LEN_MAX, .roles = DND_ROLE_SEND, .group = "Data path",
	  .help = "send at most SIZE bytes (needed for /dev/zero)",
	  .misuse = "-l limits what is sent; a receiver takes what the sender "
	  "sends (drop -l, or send with -c HOST)", OPT_AT(S, limit) },
	{ .name = "time", .type = DND_OPT_SECONDS, .flags = DND_OPT_F_POSITIVE,
	  .roles = DND_ROLE_SEND, .group = "Data path", .metavar = "SEC",
	  .help = "send /dev/zero for SEC seconds instead of a length, as "
	  "iperf3's time option (the man page says why not its letter)",
	  .misuse = "--time bounds what is sent; a receiver takes what the "
	  "sender sends", OPT_AT(S, seconds) },
	{ .name = "pipe-size", .type = DND_OPT_SIZE, DND_OPT_PIPE_RANGE,
	  .group = "Data path", .def = "0, the kernel's",
	  .help = "F_SETPIPE_SZ for the pipes of splice and vmsplice",
	  OPT_AT(S, pipe_size) },
	{ .name = "splice-flags", .type = DND_OPT_WORDS, .noun = "flag",
	  .words = xfer_splice_words, .group = "Data path",
	  .help = "a comma list of move, more, gift or none, for splice and "
	  "vmsplice", OPT_AT(S, splice_flags) },
	{ .name = "qd", .type = DND_OPT_COUNT, .min = 1, .max = 1024,
	  .hint = "give a queue depth from 1 to 1024", .group = "Data path",
	  .help = "uring: requests in flight (default 4); zerocopy: ring "
	  "buffers (default: enough to fill the send buffer); --direct: "
	  "reads ahead or writes in flight per stream (default: 32 MiB of "
	  "buffers in all, at least 2)", OPT_AT(S, qd) },
	{ .name = "parallel", .letter = 'P', .type = DND_OPT_COUNT, .min = 1,
	  .max = DND_STREAMS_MAX, .roles = DND_ROLE_SEND | DND_ROLE_RECV,
	  .hint = "give 1 to 64 streams", .group = "Data path",
	  .help = "split FILE over N TCP connections, each landing at its "
	  "offset (the receiver learns N from the sender; recv takes -P only "
	  "when it pulls from a dnd serve)", OPT_AT(S, streams) },
	{ .name = "overwrite", .letter = 'o', .type = DND_OPT_FLAG,
	  .roles = DND_ROLE_RECV, .group = "The file",
	  .help = "FILE exists: overwrite it IN PLACE, then cut it to the "
	  "bytes received; destructive: on failure FILE is removed, and a "
	  "symlink is refused", .misuse = "-o is for the "
	  "receiver's FILE; the sender only reads", OPT_AT(S, overwrite) },
	{ .name = "replace", .alias = "truncate", .letter = 't',
	  .type = DND_OPT_FLAG, .roles = DND_ROLE_RECV,
	  .group = "The file", .help = "FILE exists (a symlink too): replace "
	  "it atomically once the data is verified; on failure FILE stays as "
	  "it was", .misuse = "-t is for the "
	  "receiver's FILE; the sender only reads", OPT_AT(S, truncate) },
	{ .name = "resume", .type = DND_OPT_FLAG, .roles = DND_ROLE_RECV,
	  .group = "The file", .help = "keep what landed of a failed "
	  "transfer (.FILE.dnd-partial), and take it up when the same source "
	  "comes again: only the rest is sent", .misuse = "--resume is the "
	  "receiver's; the sender always says what its source is",
	  OPT_AT(S, resume) },
	{ .name = "sync", .type = DND_OPT_WORD, .roles = DND_ROLE_RECV,
	  .words = xfer_sync_words, .metavar = "end|stream",
	  .group = "The file", .help = "how the data reaches the disk "
	  "before the clock stops:", OPT_AT(S, sync_every) },
	{ .name = "direct", .type = DND_OPT_FLAG, .group = "The file",
	  .help = "O_DIRECT, past the page cache (-m rw): the receiver writes "
	  "aligned buffers of at least 2 MiB, --qd of them in flight (io_uring; "
	  "default 16), the unaligned ends through the page cache (a read back "
	  "of the landed file reads it the same way); the sender "
	  "reads its file that way, --qd ahead (a cold source)",
	  OPT_AT(S, direct) },
	{ .name = "no-sparse", .type = DND_OPT_FLAG, .flags = DND_OPT_F_NEG,
	  .roles = DND_ROLE_SEND, .group = "The file",
	  .help = "send holes as zeros (by default a file's holes, found "
	  "with SEEK_DATA/SEEK_HOLE, are described, not sent, and the "
	  "receiver leaves them holes)", .misuse = "--no-sparse is the "
	  "sender's choice; the receiver keeps the holes it is told of",
	  OPT_AT(S, sparse) },
	{ .name = "timeout", .type = DND_OPT_SECONDS,
	  .group = "Checks and report",
	  .help = "fail after SEC without progress; 0: never",
	  OPT_AT(S, timeout) },
	{ .name = "raw", .type = DND_OPT_FLAG, .group = "Checks and report",
	  .help = "no dnd framing or verification (netcat-style peers)",
	  OPT_AT(S, raw) },
	{ .name = "no-verify", .type = DND_OPT_FLAG, .flags = DND_OPT_F_NEG,
	  .group = "Checks and report",
	  .help = "skip hashing; the verdict is then 'counted'",
	  OPT_AT(S, verify) },
	{ .name = "verify", .type = DND_OPT_WORD, .roles = DND_ROLE_RECV,
	  .words = xfer_verify_words, .metavar = "received|readback",
	  .group = "Checks and report", .help = "what the receiver hashes to "
	  "compare with the sender's hash:",
	  .misuse = "--verify is the receiver's choice; the sender hashes "
	  "what it sends", OPT_AT(S, verify_how) },
	{ .name = "json", .type = DND_OPT_FLAG, .group = "Checks and report",
	  .help = "print the report as one JSON object", OPT_AT(S, json) },
	{ .name = "verbose", .letter = 'v', .type = DND_OPT_FLAG,
	  .group = "Checks and report", .help = "after a failure too, the "
	  "report's lines (method, socket, TCP) below the cause",
	  OPT_AT(S, verbose) },
	{ .name = "quiet", .letter = 'q', .type = DND_OPT_FLAG,
	  .group = "Checks and report", .help = "no progress line (drawn only "
	  "when stdout and stderr are a terminal)", OPT_AT(S, quiet) },
	{ .name = "interval", .letter = 'i', .type = DND_OPT_SECONDS,
	  .flags = DND_OPT_F_POSITIVE, .group = "Checks and report",
	  .metavar = "SEC", .help = "a line per SEC seconds while it runs "
	  "(at least 0.1): bytes, rate, CPU, retransmits, RTT",
	  OPT_AT(S, interval) },
	{ .name = "json-stream", .type = DND_OPT_FLAG,
	  .group = "Checks and report", .help = "JSON Lines on stdout as it "
	  "runs: an \"interval\" object per -i, then the \"report\"",
	  OPT_AT(S, json_stream) },
	{ .name = NULL },
};

static const struct opt_def xfer_serve_opts[] = {
	{ .name = "to", .type = DND_OPT_STRING, .roles = DND_ROLE_SEND,
	  .group = "With dnd serve", .metavar = "NAME",
	  .help = "push: the server lands FILE as DIR/NAME (NAME may name "
	  "existing subdirectories)", .misuse = "--to is for send; recv "
	  "pulls with --from NAME", OPT_AT(X, to) },
	{ .name = "from", .type = DND_OPT_STRING, .roles = DND_ROLE_RECV,
	  .group = "With dnd serve", .metavar = "NAME",
	  .help = "pull: the server sends DIR/NAME, landed here as FILE",
	  .misuse = "--from is for recv; send pushes with --to NAME",
	  OPT_AT(X, from) },
	{ .name = "peer-method", .type = DND_OPT_STRING,
	  .group = "With dnd serve", .metavar = "NAME", .def = "rw",
	  .help = "the method the server uses for its end (any of -m's that "
	  "goes that way)", OPT_AT(X, peer_name) },
	{ .name = "peer-end", .type = DND_OPT_WORD, .words = xfer_end_words,
	  .metavar = "zero|null|scratch", .group = "With dnd serve",
	  .help = "instead of a NAME, a far end the server picks itself (for "
	  "measuring)", OPT_AT(X, peer_end) },
	{ .name = "peer-size", .type = DND_OPT_SIZE, .min = 1,
	  .max = DND_LEN_MAX, .roles = DND_ROLE_RECV, .group = "With dnd serve",
	  .hint = "give a size, e.g. 1Gi", .help = "bytes a pull from "
	  "--peer-end zero or scratch moves", .misuse = "--peer-size is for "
	  "a pull (recv); a push sends FILE or -l SIZE",
	  OPT_AT(X, peer_size) },
	{ .name = "insecure", .type = DND_OPT_FLAG, .group = "With dnd serve",
	  .help = "without --key, talk to a server that is not on loopback "
	  "(through a forward, e.g. ssh -L or a relay) in clear text: anyone "
	  "on the path can read and change the data", OPT_AT(X, insecure) },
	{ .name = NULL },
};

static const struct opt_part xfer_parts[] = {
	{ xfer_opts, 0 },
	{ opt_keys, offsetof(X, keys) },
	{ xfer_serve_opts, 0 },
	{ NULL, 0 },
};

/* The 2006 program's form knows nothing of dnd serve. */
static const struct opt_part xfer_dnd2006_parts[] = {
	{ xfer_opts, 0 },
	{ NULL, 0 },
};

/* --peer-end and --peer-size against the role; adds to st->bad. */
static void xfer_check_end(struct opt_state *st, struct xfer_cli *x)
{
	unsigned int e = x->peer_end;
	bool send = x->o.sender;

	if (e && (x->to || x->from)) {
		log_err("--peer-end replaces --%s NAME: give one of them",
			x->to ? "to" : "from");
		st->bad++;
	} else if ((e == SERVE_END_ZERO && send) ||
		   (e == SERVE_END_NULL && !send)) {
		log_err("--peer-end %s is for %s", params_end_name(e),
			send ? "recv (a pull); a push ends in null or scratch" :
			"send (a push); a pull starts from zero or scratch");
		st->bad++;
	} else if (!send && e && !x->peer_size) {
		log_err("--peer-end %s: give the bytes to pull with --peer-size "
			"SIZE", params_end_name(e));
		st->bad++;
	} else if (x->peer_size && !e) {
		log_err("--peer-size is the length of a --peer-end pull; add "
			"--peer-end zero or scratch");
		st->bad++;
	}
}

/* A name for dnd serve with a control character is refused here, before
 * connecting, as the server would refuse it (it could forge a log line). */
static void xfer_check_control(struct opt_state *st, const char *opt,
			       const char *name)
{
	char q[ESC_ROOM(64)];
	size_t at;

	if (!name || !esc_has_control(name, strlen(name), &at))
		return;
	esc_text(q, sizeof(q), name, strlen(name), ESC_PEER);
	log_err("%s '%s': the name holds a control character (byte 0x%02x "
		"at offset %zu), which dnd serve refuses; give a name "
		"without control characters", opt, q,
		(unsigned char)name[at], at);
	st->bad++;
}

/* Keyless, the data crosses in clear: a server off loopback only with
 * --insecure. A name that does not resolve is left to the connect to say
 * so. Adds to st->bad. */
static void xfer_check_clear(struct opt_state *st, struct xfer_cli *x,
			     bool served)
{
	bool keyed = key_files_given(&x->keys);
	char why[320];

	if (x->insecure && (!served || keyed)) {
		log_err("--insecure lets a keyless transfer with dnd serve (--to, "
			"--from, --peer-end) reach a server off loopback; %s",
			keyed ? "with --key it is TLS already: drop --insecure" :
			"add --to NAME or --from NAME");
		st->bad++;
	}
	if (!served || keyed || x->insecure || !x->o.host ||
	    net_host_loopback(x->o.host, why, sizeof(why)) != 0)
		return;
	serve_client_clear_why(x->o.host, why, sizeof(why));
	log_err("%s", why);
	st->bad++;
}

/* What --to and --from need and exclude; adds to st->bad. */
static void xfer_check_serve(struct opt_state *st, struct xfer_cli *x)
{
	struct session_opts *o = &x->o;
	bool served = x->to || x->from || x->peer_end;
	const struct dnd_method *pm;
	char why[256];

	if (st->cmd->roles == BOTH)
		return;		/* the 2006 form has none of this */
	if (!o->sender && o->host && !x->from && !x->peer_end) {
		log_err("recv listens; -c HOST is for send (or pull from a dnd "
			"serve with -c HOST --from NAME)");
		st->bad++;
	}
	if ((x->from || x->peer_end) && !o->host) {
		log_err("%s a dnd serve: give -c HOST", x->from ?
			"--from NAME pulls from" : "--peer-end goes to");
		st->bad++;
	}
	xfer_check_end(st, x);
	xfer_check_clear(st, x, served);
	if (x->to && land_check_name(x->to, why, sizeof(why))) {
		log_err("--to: %s", why);
		st->bad++;
	}
	xfer_check_control(st, x->to ? "--to" : "--from", x->to ? x->to :
			   x->from);
	if (!served && opt_given(st, "peer-method")) {
		log_err("--peer-method is for a transfer with dnd serve: add "
			"--to NAME (send) or --from NAME (recv)");
		st->bad++;
	}
	if (served && (o->raw || o->resume || o->bind)) {
		log_err("%s cannot go with dnd serve (--to, --from)",
			o->raw ? "--raw" : o->resume ? "--resume" : "--bind");
		st->bad++;
	}
	pm = x->peer_m = method_find(x->peer_name);
	if (!pm) {
		log_err("--peer-method: unknown method '%s' (dnd probe lists "
			"them)", x->peer_name);
		st->bad++;
	} else if (served && (o->sender ? !pm->recv : !pm->send)) {
		log_err("--peer-method %s cannot %s at the server's end", pm->name,
			o->sender ? "receive" : "send");
		st->bad++;
	}
}

/* --mptcp: the kernel must make MPTCP sockets, and this end's method
 * must work on one; adds to st->bad. */
static void xfer_check_mptcp(struct opt_state *st,
			     const struct session_opts *o)
{
	char why[320];

	if (o->mptcp && (net_mptcp_check(why, sizeof(why)) ||
			 (o->m && method_mptcp(o->m, o->sender, "-m", why,
					       sizeof(why))))) {
		log_err("%s", why);
		st->bad++;
	}
}

/* What needs more than one option, or the role; adds to st->bad. */
static void xfer_check(struct opt_state *st, void *obj)
{
	struct xfer_cli *x = obj;
	struct session_opts *o = &x->o;
	const struct opt_cmd *c = st->cmd;
	unsigned int role = c->roles != BOTH ? c->roles :
			    o->host ? DND_ROLE_SEND : DND_ROLE_RECV;
	char why[320];

	o->sender = role == DND_ROLE_SEND;
	o->has_limit = opt_given(st, "limit");
	if (c->roles == BOTH)
		opt_check_role(st, role);
	if (c->roles == DND_ROLE_SEND && !o->host) {
		log_err("send needs -c HOST: the address of 'dnd recv' or of a "
			"dnd serve");
		st->bad++;
	}
	xfer_check_serve(st, x);
	if (!o->sender && !x->from && opt_given(st, "parallel")) {
		log_err("-P is the sender's; the receiver takes as many streams "
			"as the sender opens (or pulls over N with --from)");
		st->bad++;
	}
	if (st->nargs != 1) {
		log_err(!st->nargs ? "need a FILE (or '-')" :
			"one FILE only; got '%s' too", st->args[1]);
		st->bad++;
	}
	o->file = st->nargs ? st->args[0] : NULL;
	if (x->from && o->streams > 1 && o->file && !strcmp(o->file, "-")) {
		log_err("-P %u cannot land in order on stdout; pull with -P 1",
			o->streams);
		st->bad++;
	}
	if (o->overwrite && o->truncate) {
		log_err("-o and -t conflict: -o overwrites FILE in place, -t "
			"replaces it; choose one");
		st->bad++;
	}
	if (o->interval && o->interval < 0.1) {
		log_err("-i %g: give at least 0.1 seconds", o->interval);
		st->bad++;
	}
	if (o->seconds > 0 && (o->has_limit || o->streams > 1 || o->raw)) {
		log_err("--time cannot go with %s", o->has_limit ? "-l: give "
			"a time or a size" : o->raw ? "--raw: the end of a "
			"timed run is framed" : "-P: a timed run has no length "
			"to split; use -P 1");
		st->bad++;
	}
	if (o->json_stream && !o->interval)
		o->interval = 1;
	o->window_from = opt_given(st, "window") ? "-w" :
			 c->roles == BOTH ? "2006-form" : "default";
	if (o->rate && o->rate < o->streams) {
		log_err("--rate: below 1 byte/s for each of -P %u streams; "
			"give a larger rate", o->streams);
		st->bad++;
	}
	if (o->congestion && net_congestion_check(o->congestion, why,
						  sizeof(why))) {
		log_err("%s", why);
		st->bad++;
	}
	if (o->resume && (o->overwrite || o->raw)) {
		log_err("--resume lands through a temporary file and needs the "
			"framing; it cannot go with %s", o->raw ? "--raw" : "-o");
		st->bad++;
	}
	if (opt_given(st, "verify") && (!o->verify || o->raw)) {
		log_err("--verify says how to verify; it cannot go with %s",
			o->raw ? "--raw, which verifies nothing" : "--no-verify: "
			"choose one");
		st->bad++;
	}
	if (o->streams > 1 && o->raw) {
		log_err("--raw has no framing to tell streams apart; use -P 1");
		st->bad++;
	}
	if (o->direct && o->m && strcmp(o->m->name, "rw")) {
		log_err("--direct is for -m rw (read/write through aligned "
			"buffers); -m %s does not support it", o->m->name);
		st->bad++;
	}
	if (o->direct && (o->sync_every || o->raw)) {
		log_err("--direct cannot go with %s", o->raw ? "--raw: it needs "
			"the framing to know where the file ends" : "--sync "
			"stream: O_DIRECT leaves no page cache to write back; "
			"the writes reach the device as they go");
		st->bad++;
	}
	if (key_files_given(&x->keys) && o->raw) {
		log_err("--raw cannot go with --key: TLS has the framing; "
			"drop --raw");
		st->bad++;
	}
	if (key_files_given(&x->keys) && o->m &&
	    (o->sender ? o->m->send : o->m->recv) &&
	    method_keyed(o->m, "-m", why, sizeof(why))) {
		log_err("%s", why);
		st->bad++;
	}
	xfer_check_mptcp(st, o);
	if (o->m && (o->sender ? !o->m->send : !o->m->recv)) {
		log_err("%s cannot %s; use %s", o->m->name,
			o->sender ? "send" : "receive",
			o->sender ? "-m sendfile or -m rw" :
				    "-m splice or -m rw");
		st->bad++;
	}
}

#define XFER_NOTES                                                             \
	"Sizes take k M G (10^3, 10^6, 10^9) or Ki Mi Gi (2^10 ...): 64Ki, "   \
	"1M.\nThe receiver lands FILE under a temporary name and renames it "  \
	"only after the sender's xxh3 hash matches; on any failure nothing is " \
	"left under FILE.\nExit: 0 done, 1 transfer failed (cause printed), "  \
	"2 usage error."

static const struct opt_cmd xfer_send_cmd = {
	.name = "send",
	.usage = "dnd send -c HOST [options] FILE",
	.about = "Connects to HOST and sends FILE: a file, '-' for stdin, or "
		 "/dev/zero with -l. The clock runs from just before the first "
		 "byte is read until just after the last is sent.",
	.notes = XFER_NOTES,
	.parts = xfer_parts,
	.roles = DND_ROLE_SEND,
	.check = xfer_check,
};

static const struct opt_cmd xfer_recv_cmd = {
	.name = "recv",
	.usage = "dnd recv [options] FILE",
	.about = "Listens, accepts one sender and writes what it sends to FILE: "
		 "a new file, '-' for stdout, /dev/null to discard. The clock "
		 "runs from just before the first byte is received until just "
		 "after the last is synced to disk.",
	.notes = XFER_NOTES,
	.parts = xfer_parts,
	.roles = DND_ROLE_RECV,
	.check = xfer_check,
};

static const struct opt_cmd xfer_dnd2006_cmd = {
	.name = "",
	.usage = "dnd [-b bsz] [-c host] [-h] [-l sz] [-m method] [-o|-t] "
		 "[-p port] [-w wsz] FILE",
	.about = "The 2006 dnd program's command line (Jim Schutt's, from "
		 "the linux-kernel thread \"splice/vmsplice performance test "
		 "results\"), kept as it was: a timed disk-network-disk "
		 "transfer over TCP. With -c HOST it sends FILE to HOST (as "
		 "'dnd send'), otherwise it receives into FILE (as 'dnd recv').",
	.notes = XFER_NOTES,
	.parts = xfer_dnd2006_parts,
	.roles = BOTH,
	.check = xfer_check,
};

static void xfer_defaults(struct xfer_cli *x)
{
	struct session_opts *o = &x->o;

	memset(x, 0, sizeof(*x));
	x->peer_name = "rw";
	o->port = 13931;
	o->bsz = 64 * 1024;
	o->splice_flags = SPLICE_F_MOVE;
	o->verify = true;
	o->sparse = true;
	o->timeout = 60;
	o->m = method_find("rw");
	o->streams = 1;
}

/* A transfer with dnd serve on the far end. */
static int xfer_served(struct xfer_cli *x)
{
	static struct serve_client c;
	struct session_link l;
	const char *name = x->to ? x->to : x->from ? x->from : "";

	c = (struct serve_client){
		.host = x->o.host,
		.port = x->o.port,
		.window = x->o.window,
		.connect_timeout = x->o.connect_timeout,
		.timeout = x->o.timeout,
		.tls = x->o.tls,
		.insecure = x->insecure,
		.p = {
			.op = x->o.sender ? SERVE_PUSH : SERVE_PULL,
			.flags = (x->o.verify ? SERVE_PF_VERIFY : 0) |
				 (x->peer_size ? SERVE_PF_KNOWN : 0),
			.end = (uint8_t)x->peer_end,
			.length = x->peer_size,
			.streams = (uint16_t)x->o.streams,
			.bsz = x->o.bsz,
			.name_len = strlen(name),
		},
	};
	snprintf(c.p.method, sizeof(c.p.method), "%s", x->peer_m->name);
	snprintf(c.p.name, sizeof(c.p.name), "%s", name);
	serve_client_link(&c, &l);
	x->o.link = &l;
	return session_run(&x->o);
}

static int xfer_main(const struct opt_cmd *c, int argc, char **argv)
{
	struct xfer_cli x;
	struct opt_state st;
	int r;

	struct dnd_key *key = NULL;
	struct dnd_tls_cfg tls;
	char why[320];

	xfer_defaults(&x);
	x.o.dnd2006_line = c == &xfer_dnd2006_cmd;
	if (x.o.dnd2006_line)
		x.o.window = 128 * 1024;	/* the 2006 program's */
	r = opt_parse(c, &x, argc, argv, &st);
	if (r >= 0)
		return r;
	if (key_files_given(&x.keys)) {
		if (key_tls_cfg(&x.keys, &key, &tls, why, sizeof(why))) {
			log_err("%s", why);
			return 2;
		}
		x.o.tls = &tls;
	}
	r = x.to || x.from || x.peer_end ? xfer_served(&x) : session_run(&x.o);
	key_free(key);
	/* Stopped by a signal: 128 + its number, as shells expect (130 for
	 * Ctrl-C, 143 for SIGTERM), the cause printed all the same. */
	return r == 1 && io_stop_signal ? 128 + io_stop_signal : r;
}

int cmd_send(int argc, char **argv)
{
	return xfer_main(&xfer_send_cmd, argc, argv);
}

int cmd_recv(int argc, char **argv)
{
	return xfer_main(&xfer_recv_cmd, argc, argv);
}

int cmd_dnd2006(int argc, char **argv)
{
	return xfer_main(&xfer_dnd2006_cmd, argc, argv);
}
