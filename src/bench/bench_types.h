/* SPDX-License-Identifier: MIT */
/*
 * What `dnd bench` plans, measures and prints: tables (groups) of cells, one
 * cell per send x recv method pair, each run N times as two processes.
 */
#ifndef DND_BENCH_TYPES_H
#define DND_BENCH_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dnd_method;

#define BENCH_MAX_LIST	8	/* entries in a --buffer or --pipe-size sweep */
#define BENCH_MAX_M	12	/* methods per table side */
#define BENCH_MAX_REPEAT 50
#define BENCH_MAX_REFS	16

enum bench_src {
	BENCH_SRC_ZERO = 0,
	BENCH_SRC_FILE,
	BENCH_SRC_COUNT,
};

enum bench_sink {
	BENCH_SINK_NULL = 0,
	BENCH_SINK_FILE,
	BENCH_SINK_COUNT,
};

struct bench_opts {
	bool full, quick, compare, pin, best_path, cold, netns;
	bool all_pairs;			/* --full, --send or --recv given */
	unsigned int repeat;
	uint64_t size;			/* 0: per-sink default */
	uint64_t bufs[BENCH_MAX_LIST];
	unsigned int nbufs;
	unsigned int pipes[BENCH_MAX_LIST];	/* 0: the kernel's default */
	unsigned int npipes;
	unsigned int streams[BENCH_MAX_LIST];	/* -P of the senders */
	unsigned int nstreams;
	uint64_t window;		/* -w for both sides; 0 = autotuning */
	bool src[BENCH_SRC_COUNT], sink[BENCH_SINK_COUNT];
	bool combo[BENCH_SRC_COUNT][BENCH_SINK_COUNT];
	const struct dnd_method *send_m[BENCH_MAX_M], *recv_m[BENCH_MAX_M];
	unsigned int nsend, nrecv;
	unsigned int mtu;
	uint64_t rate_bps;		/* bytes per second; 0: no tbf */
	const char *rate, *netem;
	const char *json_path, *csv_path, *plot_path;	/* "-": stdout */
	const char *dir;		/* where the scratch directory goes */
	const char *remote;		/* --remote HOST: a dnd serve there */
	const char *key;		/* its --key FILE */
	unsigned int rport;		/* its -p PORT */
	bool reverse;			/* --remote: the server sends */
};

/* One side of one run, from the child's --json report. */
struct bench_side {
	double mbps, seconds, user, sys, usec_per_mb, calls_per_mb, busy_pct;
	double steal_pct;
	double retrans;
	double total_mbps;		/* bytes over the report's total_seconds,
					 * the time its user waited; 0: none */
	uint64_t bytes;
	char verdict[16];
};

struct bench_run {
	struct bench_side snd, rcv;
	double busy_run_pct;		/* /proc/stat over the whole run */
	double steal_run_pct;		/* its steal, over the whole run */
};

/* Medians over the successful runs of a cell (min and max of MB/s). */
struct bench_sum {
	unsigned int n;
	double mbps, mbps_min, mbps_max;
	double total, total_min, total_max;	/* the receiver's total_mbps */
	double s_user, s_sys, r_user, r_sys;
	double s_usmb, r_usmb, s_callsmb, r_callsmb;
	double busy, busy_run, steal, steal_run, retrans;
};

enum bench_state {
	BENCH_TODO = 0,
	BENCH_OK,
	BENCH_FAILED,
	BENCH_NA,		/* the methods cannot do this: why says so */
	BENCH_SAME,		/* no pipe on either side: measured elsewhere */
	BENCH_OFF,		/* not in the default set; --full runs it */
};

struct bench_cell {
	unsigned int group;
	const struct dnd_method *snd, *rcv;
	uint64_t sbsz, rbsz;		/* -b of the sender and the receiver */
	enum bench_state state;
	char why[320];
	struct bench_run *runs;		/* o.repeat entries */
	unsigned int nruns;		/* successful runs */
	struct bench_sum sum;
	bool best;			/* fastest in its table row */
	int note;			/* footnote number in the table, 0: none */
};

/* One table: a source, a sink and the tunables shared by its cells. */
struct bench_group {
	char label[48];			/* "" or "best path" */
	enum bench_src src;
	enum bench_sink sink;
	uint64_t bsz;			/* -b of both sides, unless... */
	uint64_t row_bsz[BENCH_MAX_M];	/* ...a row's sender has its own */
	uint64_t rbsz;			/* ...or the receivers have (0: bsz) */
	unsigned int pipe;		/* asked; 0: kernel default */
	unsigned int streams;		/* -P of the senders (1: one) */
	uint64_t size;			/* bytes per run */
	const struct dnd_method *rows[BENCH_MAX_M], *cols[BENCH_MAX_M];
	unsigned int nrows, ncols;
	unsigned int first;		/* first cell; nrows * ncols cells */
};

/* A reference row: same machine, same run. */
struct bench_ref {
	char key[24];			/* "memcpy", "pipe", "iperf3", "iperf3-l1M",
					 * "copy", "device" */
	char name[96];
	bool ok;
	bool dead;			/* a sample failed: why says so */
	char why[200];
	unsigned int n;
	double v[BENCH_MAX_REPEAT];	/* MB/s of each sample */
	double cpu[BENCH_MAX_REPEAT];	/* CPU us/MB of each sample */
	double steal[BENCH_MAX_REPEAT];	/* machine steal % of each sample */
	unsigned int pipe;		/* pipe ceiling: size asked, 0 default */
	uint64_t bytes;			/* copy, device: per sample */
	double mbps, mbps_min, mbps_max;
	double usec_per_mb;		/* process CPU, both sides; <0 unknown */
	double steal_pct, steal_max_pct; /* median and worst sample's steal */
};

struct bench_facts {
	char kernel[96];
	char cpu_model[96];
	int ncpu;
	char path[160];			/* "loopback 127.0.0.1" or the veth */
};

/* The whole run: options, plan, results and what must be cleaned up. */
struct bench {
	struct bench_opts o;
	struct bench_facts facts;
	struct bench_group *groups;
	unsigned int ngroups;
	struct bench_cell *cells;
	unsigned int ncells;
	struct bench_ref refs[BENCH_MAX_REFS];
	unsigned int nrefs;
	char dir[256];			/* scratch directory, "" until made */
	char src_path[300];
	uint64_t src_size;
	const char *host, *bind;
	char ns_send[48], ns_recv[48];	/* "" without --netns */
	char nsp_send[80], nsp_recv[80];	/* /run/netns/... */
	char veth_s[16], veth_r[16];
	bool ns_made;
	bool ns_have_s, ns_have_r;	/* this run made that namespace */
	bool cold_failed;
	char cache_note[200];
	char *mc_x, *mc_y;		/* memcpy reference buffers */
	size_t mc_len;
	unsigned int seq;		/* runs so far, for file names */
	unsigned int port_next;
};

static inline const char *bench_src_name(enum bench_src s)
{
	return s == BENCH_SRC_ZERO ? "zero" : "file";
}

static inline const char *bench_sink_name(enum bench_sink s)
{
	return s == BENCH_SINK_NULL ? "null" : "file";
}

#endif
