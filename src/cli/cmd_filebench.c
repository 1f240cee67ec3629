// SPDX-License-Identifier: MIT
/*
 * dnd filebench: seed 000's fio job (write() vs splice() into a file) grown
 * into every file path dnd has. Each path is a method's file half (its `put`
 * hook), the same code the receivers run, timed from the first write to the
 * end of the final fsync (fio's end_fsync=1), on a new file or rewriting an
 * existing one (seed 003's re-write case). Content is checked afterwards.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd_filebench.h"
#include "core/io.h"
#include "core/json.h"
#include "core/log.h"
#include "xfer/method.h"
#include "cli/opt_parse.h"
#include "cli/opts.h"
#include "core/stats.h"
#include "xfer/xfer.h"

struct fb_path {
	const char *name;
	const char *method;	/* whose put hook lands the data */
	bool direct;		/* open with O_DIRECT */
	unsigned int splice_flags;
	const char *what;
};

static const struct fb_path fb_paths[] = {
	{ "write", "rw", false, 0, "write() from a buffer" },
	{ "vmsplice", "vmsplice", false, SPLICE_F_MOVE,
	  "vmsplice -> pipe -> splice into the file (fio's splice engine)" },
	{ "vmsplice-gift", "vmsplice", false, SPLICE_F_MOVE | SPLICE_F_GIFT,
	  "the same with SPLICE_F_GIFT" },
	{ "direct", "rw", true, 0, "O_DIRECT write() from aligned buffers" },
	{ "uring", "uring", false, 0, "io_uring write_fixed, registered buffers" },
	{ "mmap", "mmap", false, 0, "fallocate + mmap + memcpy" },
};

#define FB_NPATHS (sizeof(fb_paths) / sizeof(fb_paths[0]))

struct fb_opts {
	uint64_t bs, size;
	unsigned int repeat;
	bool rewrite, json, csv, verify, keep;
	const char *dir;
	char only[256];		/* --paths list, "" = all */
};

/* One timed run of one path. */
struct fb_run {
	double seconds, fsync_s, usr_pct, sys_pct, mibps;
	long ctx;
	const char *content;	/* "ok", "WRONG", "unchecked" */
	char error[200];
};

/* Block i holds i in its first 8 bytes, then a fixed byte pattern. */
static void fb_fill(unsigned char *buf, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		buf[j] = (unsigned char)(j * 131 + 17);
}

static void fb_stamp(unsigned char *buf, size_t n, uint64_t block)
{
	memcpy(buf, &block, n < 8 ? n : 8);
}

/* Reads the file back (not O_DIRECT) and compares it with the pattern. */
static const char *fb_check(const char *path, const struct fb_opts *o)
{
	unsigned char *want = malloc(o->bs), *got = malloc(o->bs);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	const char *res = "ok";
	uint64_t off, block = 0;
	struct stat st;

	if (!want || !got || fd == -1 || fstat(fd, &st) ||
	    (uint64_t)st.st_size != o->size)
		res = "WRONG";
	if (want)
		fb_fill(want, o->bs);
	for (off = 0; !strcmp(res, "ok") && off < o->size; off += o->bs) {
		size_t n = o->size - off < o->bs ? o->size - off : o->bs;

		fb_stamp(want, n, block++);
		if (pread(fd, got, n, (off_t)off) != (ssize_t)n ||
		    memcmp(want, got, n))
			res = "WRONG";
	}
	if (fd != -1)
		close(fd);
	free(want);
	free(got);
	return res;
}

/* An existing file of the full size, holding other bytes, for --rewrite. */
static int fb_precreate(const char *path, const struct fb_opts *o)
{
	char *buf = malloc(1 << 20);
	uint64_t left = o->size;
	int fd, r = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd == -1 || !buf) {
		free(buf);
		return fd == -1 ? -errno : -ENOMEM;
	}
	memset(buf, 0xaa, 1 << 20);
	while (left && !r) {
		size_t n = left < (1 << 20) ? (size_t)left : (1 << 20);

		if (write(fd, buf, n) != (ssize_t)n)
			r = -errno ? -errno : -EIO;
		left -= n;
	}
	if (!r && fsync(fd))
		r = -errno;
	close(fd);
	free(buf);
	return r;
}

/* Writes o->size bytes through the path's put hook; fills run. */
static int fb_write(struct dnd_xfer *x, unsigned char *buf,
		    const struct fb_opts *o, struct fb_run *run)
{
	struct dnd_sample a, b;
	struct dnd_cost c;
	uint64_t block = 0;
	double f0;
	int r = 0;

	/* io_uring lands from its registered memory: write the pattern there. */
	if (x->putbuf && x->putbuf_len >= o->bs) {
		buf = x->putbuf;
		fb_fill(buf, o->bs);
	}

	stats_sample(&a);
	while ((uint64_t)x->pos < o->size) {
		size_t n = o->size - (uint64_t)x->pos < o->bs ?
			   (size_t)(o->size - (uint64_t)x->pos) : o->bs;
		ssize_t w;

		if (io_stop_signal)
			return xfer_fail(x, -EINTR, "interrupted by signal");
		fb_stamp(buf, n, block++);
		w = x->m->put(x, buf, n);
		if (w < 0)
			return (int)w;
		x->pos += w;
		x->done += (uint64_t)w;
	}
	if (x->m->finish)
		r = x->m->finish(x);
	f0 = stats_now();
	if (!r && fsync(x->fd) == -1)
		r = xfer_fail(x, -errno, "fsync");
	stats_sample(&b);
	stats_cost(&a, &b, x->done, &c);
	run->seconds = c.wall;
	run->fsync_s = b.mono - f0;
	run->usr_pct = c.wall > 0 ? 100 * c.user / c.wall : 0;
	run->sys_pct = c.wall > 0 ? 100 * c.sys / c.wall : 0;
	run->ctx = c.nvcsw + c.nivcsw;
	run->mibps = c.wall > 0 ? (double)x->done / c.wall / 1048576.0 : 0;
	return r;
}

static void fb_error(struct fb_run *run, const struct fb_path *p,
		     const struct dnd_xfer *x, int err)
{
	if (p->direct && err == -EINVAL)
		snprintf(run->error, sizeof(run->error), "O_DIRECT write "
			 "refused (EINVAL): --bs and --size must be multiples "
			 "of the device's logical block size");
	else
		snprintf(run->error, sizeof(run->error), "%s: %s",
			 x->err_op[0] ? x->err_op : "write", strerror(-err));
}

/* One run of one path into `file`. 0, or -errno with run->error set. */
static int fb_run_one(const struct fb_path *p, const struct dnd_method *m,
		      const char *file, const struct fb_opts *o,
		      unsigned char *buf, struct fb_run *run)
{
	int flags = O_RDWR | O_CLOEXEC | (p->direct ? O_DIRECT : 0);
	struct dnd_xfer x;
	int fd, r;

	memset(run, 0, sizeof(*run));
	run->content = "unchecked";
	if (!o->rewrite)
		flags |= O_CREAT | O_TRUNC;
	fd = open(file, flags, 0644);
	if (fd == -1) {
		r = -errno;
		snprintf(run->error, sizeof(run->error), p->direct && r == -EINVAL ?
			 "O_DIRECT refused by the file system under %s (EINVAL)" :
			 "cannot open a file under %s: %s", o->dir, strerror(-r));
		return r;
	}
	xfer_init(&x, m, false, -1, fd);
	x.ep = DND_EP_FILE;
	x.fmode = S_IFREG;
	x.bsz = o->bs;
	x.splice_flags = p->splice_flags;
	r = m->setup(&x);
	if (!r)
		r = fb_write(&x, buf, o, run);
	if (r)
		fb_error(run, p, &x, r);
	m->teardown(&x);
	close(fd);
	if (!r && o->verify)
		run->content = fb_check(file, o);
	if (!r && strcmp(run->content, "WRONG") == 0) {
		snprintf(run->error, sizeof(run->error), "content read back "
			 "differs from what was written");
		r = -EIO;
	}
	return r;
}

static double fb_median(double *v, unsigned int n)
{
	unsigned int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fb_emit_json(const struct fb_path *p, unsigned int i,
			 const struct fb_run *run, const struct fb_opts *o,
			 const char *why)
{
	struct json j;

	json_begin(&j, stdout);
	json_u64(&j, "schema", 1);
	json_str(&j, "path", p->name);
	json_str(&j, "what", p->what);
	json_u64(&j, "run", i);
	json_u64(&j, "bs", o->bs);
	json_u64(&j, "bytes", o->size);
	json_str(&j, "mode", o->rewrite ? "rewrite" : "fresh");
	json_bool(&j, "ok", !why && !run->error[0]);
	json_str(&j, "error", why ? why : run->error[0] ? run->error : NULL);
	if (!why && !run->error[0]) {
		json_f64(&j, "seconds", run->seconds);
		json_f64(&j, "mib_per_s", run->mibps);
		json_f64(&j, "cpu_usr_pct", run->usr_pct);
		json_f64(&j, "cpu_sys_pct", run->sys_pct);
		json_i64(&j, "ctx", run->ctx);
		json_f64(&j, "fsync_seconds", run->fsync_s);
		json_str(&j, "content", run->content);
	}
	json_end(&j);
}

static void fb_emit_csv(const struct fb_path *p, unsigned int i,
			const struct fb_run *run, const struct fb_opts *o,
			const char *why)
{
	const char *err = why ? why : run->error;

	if (err[0])
		printf("%s,%u,%llu,%llu,%s,,,,,,,\"%s\"\n", p->name, i,
		       (unsigned long long)o->bs, (unsigned long long)o->size,
		       o->rewrite ? "rewrite" : "fresh", err);
	else
		printf("%s,%u,%llu,%llu,%s,%.6f,%.1f,%.1f,%.1f,%ld,%.6f,%s,\n",
		       p->name, i, (unsigned long long)o->bs,
		       (unsigned long long)o->size,
		       o->rewrite ? "rewrite" : "fresh", run->seconds,
		       run->mibps, run->usr_pct, run->sys_pct, run->ctx,
		       run->fsync_s, run->content);
}

static const char *fb_fstype(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf))
		return "?";
	switch ((unsigned long)sf.f_type) {
	case 0xEF53UL:
		return "ext4";
	case 0x01021994UL:
		return "tmpfs";
	case 0x58465342UL:
		return "xfs";
	case 0x9123683EUL:
		return "btrfs";
	}
	return "other";
}

/* Why a path cannot run here, or NULL. */
static const char *fb_unusable(const struct fb_path *p,
			       const struct dnd_method **m, char *why, size_t len)
{
	*m = method_find(p->method);
	if (!*m) {
		snprintf(why, len, "the %s method is not in this build%s",
			 p->method, strcmp(p->method, "uring") ? "" :
			 " (needs liburing-dev at build time)");
		return why;
	}
	if (!(*m)->put) {
		snprintf(why, len, "the %s method has no file half (put hook)",
			 p->method);
		return why;
	}
	if (method_probe(*m, why, len))
		return why;
	return NULL;
}

static void fb_row(const struct fb_path *p, struct fb_run *runs,
		   unsigned int n, const char *err)
{
	double mib[64], usr[64], sys[64], fs[64], ctx[64], lo, hi;
	unsigned int i;

	if (err) {
		printf("%-14s %s\n", p->name, err);
		return;
	}
	for (i = 0; i < n; i++) {
		mib[i] = runs[i].mibps;
		usr[i] = runs[i].usr_pct;
		sys[i] = runs[i].sys_pct;
		fs[i] = runs[i].fsync_s;
		ctx[i] = (double)runs[i].ctx;
	}
	lo = hi = mib[0];
	for (i = 1; i < n; i++) {
		lo = mib[i] < lo ? mib[i] : lo;
		hi = mib[i] > hi ? mib[i] : hi;
	}
	printf("%-14s %8.1f [%7.1f..%7.1f] %6.1f %6.1f %7.0f %8.3f  %s\n",
	       p->name, fb_median(mib, n), lo, hi, fb_median(usr, n),
	       fb_median(sys, n), fb_median(ctx, n), fb_median(fs, n),
	       runs[0].content);
}

/* All runs of one path. Returns 0, or 1 when a run failed. */
static int fb_path_run(const struct fb_path *p, const struct fb_opts *o,
		       unsigned char *buf)
{
	const struct dnd_method *m;
	struct fb_run runs[64];
	char why[200], file[4096];
	const char *err;
	unsigned int i, n = 0;
	bool emitted = false;
	int r = 0;

	err = fb_unusable(p, &m, why, sizeof(why));
	snprintf(file, sizeof(file), "%s/.dnd-filebench.%s.%d", o->dir, p->name,
		 (int)getpid());
	for (i = 0; !err && i < o->repeat; i++) {
		/* Every rewrite run starts from other bytes (untimed), or a
		 * run that wrote nothing would pass on the last run's data. */
		if (o->rewrite && (r = fb_precreate(file, o))) {
			snprintf(why, sizeof(why), "cannot create the file to "
				 "rewrite under %s: %s", o->dir, strerror(-r));
			err = why;
			r = 1;
			break;
		}
		if (fb_run_one(p, m, file, o, buf, &runs[i])) {
			snprintf(why, sizeof(why), "%s", runs[i].error);
			err = why;
			r = 1;
		} else {
			n++;
		}
		if (o->json)
			fb_emit_json(p, i, &runs[i], o, NULL);
		else if (o->csv)
			fb_emit_csv(p, i, &runs[i], o, NULL);
		emitted = true;
	}
	if (!emitted && (o->json || o->csv)) {
		memset(&runs[0], 0, sizeof(runs[0]));
		if (o->json)
			fb_emit_json(p, 0, &runs[0], o, err);
		else
			fb_emit_csv(p, 0, &runs[0], o, err);
	}
	if (!o->json && !o->csv)
		fb_row(p, runs, n, err);
	if (!o->keep)
		unlink(file);
	return r ? 1 : 0;
}

/* --paths: checked against fb_paths[], kept as ",a,b," for fb_selected(). */
static int fb_set_paths(void *obj, const struct opt_def *d, const char *opt,
			const char *arg)
{
	struct fb_opts *o = obj;
	int bad = 0;

	snprintf(o->only, sizeof(o->only), ",%s,", arg);
	for (char *p = o->only + 1; *p; p = strchr(p, ',') + 1) {
		size_t i, len = (size_t)(strchr(p, ',') - p);

		for (i = 0; i < FB_NPATHS; i++)
			if (strlen(fb_paths[i].name) == len &&
			    !strncmp(fb_paths[i].name, p, len))
				break;
		if (i == FB_NPATHS && len) {
			log_err("%s: unknown path '%.*s'; see 'dnd filebench "
				"--help'", opt, (int)len, p);
			bad++;
		}
	}
	return bad;
}

#define F struct fb_opts

static const struct opt_def fb_table[] = {
	{ .name = "buffer", .alias = "bs", .letter = 'b', .type = DND_OPT_SIZE,
	  .min = 1, .max = 1ULL << 30, .group = "What is written",
	  .hint = "give a size from 1 to 1Gi, e.g. 64Ki or 4Gi",
	  .help = "bytes per call", OPT_AT(F, bs) },
	{ .name = "size", .letter = 's', .type = DND_OPT_SIZE, .min = 1,
	  .max = 1ULL << 50, .group = "What is written",
	  .hint = "give a size from 1 to 1Pi, e.g. 64Ki or 4Gi",
	  .help = "bytes per run (about 10 s a path on this disk)",
	  OPT_AT(F, size) },
	{ .name = "fresh", .type = DND_OPT_FLAG, .flags = DND_OPT_F_NEG,
	  .group = "What is written", .help = "a new file each run (the "
	  "default)", OPT_AT(F, rewrite) },
	{ .name = "rewrite", .type = DND_OPT_FLAG, .group = "What is written",
	  .help = "overwrite an existing file of the same size in place",
	  OPT_AT(F, rewrite) },
	{ .name = "repeat", .letter = 'r', .type = DND_OPT_COUNT, .min = 1,
	  .max = 64, .hint = "give 1 to 64", .group = "What is written",
	  .help = "runs per path: median [min..max]", OPT_AT(F, repeat) },
	{ .name = "paths", .type = DND_OPT_CALL, .set = fb_set_paths,
	  .group = "What is written", .def = "all",
	  .metavar = "LIST", .help = "comma list of the paths to run (listed "
	  "below)" },
	{ .name = "dir", .type = DND_OPT_STRING, .metavar = "PATH",
	  .group = "Where and how", .help = "where the files go",
	  OPT_AT(F, dir) },
	{ .name = "no-verify", .type = DND_OPT_FLAG, .flags = DND_OPT_F_NEG,
	  .group = "Where and how", .help = "skip the read-back content check",
	  OPT_AT(F, verify) },
	{ .name = "keep", .type = DND_OPT_FLAG, .group = "Where and how",
	  .help = "leave the files (.dnd-filebench.*) in place",
	  OPT_AT(F, keep) },
	{ .name = "json", .type = DND_OPT_FLAG, .group = "Where and how",
	  .help = "one JSON object per run instead of the table",
	  OPT_AT(F, json) },
	{ .name = "csv", .type = DND_OPT_FLAG, .group = "Where and how",
	  .help = "one CSV line per run instead of the table", OPT_AT(F, csv) },
	{ .name = NULL },
};

static void fb_usage_paths(FILE *f)
{
	size_t i;

	fprintf(f, "\nPaths:\n");
	for (i = 0; i < FB_NPATHS; i++)
		fprintf(f, "  %-14s %s\n", fb_paths[i].name, fb_paths[i].what);
}

static const struct opt_part fb_parts[] = {
	{ fb_table, 0 },
	{ NULL, 0 },
};

/* Words that are not options, and --json with --csv; adds to st->bad. */
static void fb_check_opts(struct opt_state *st, void *obj)
{
	const struct fb_opts *o = obj;

	if (st->nargs) {
		log_err("filebench takes no file argument ('%s'); use --dir",
			st->args[0]);
		st->bad++;
	}
	if (o->json && o->csv) {
		log_err("--json and --csv conflict; choose one");
		st->bad++;
	}
}

static const struct opt_cmd fb_cmd = {
	.name = "filebench",
	.usage = "dnd filebench [options]",
	.about = "Times every way dnd puts data into a file, from the first "
		 "write to the end of the final fsync (fio's end_fsync=1), then "
		 "reads the file back to check it.",
	.notes = "Sizes take k M G (10^3..) or Ki Mi Gi (2^10..).\nExit: 0 "
		 "every path ran (or was reported unavailable), 1 a path failed "
		 "or wrote wrong content, 2 usage error.",
	.parts = fb_parts,
	.help_more = fb_usage_paths,
	.check = fb_check_opts,
};

static int fb_parse(int argc, char **argv, struct fb_opts *o)
{
	struct opt_state st;

	*o = (struct fb_opts){ .bs = 65536, .size = 8ULL << 30, .repeat = 1,
			       .verify = true, .dir = "." };
	return opt_parse(&fb_cmd, o, argc, argv, &st);
}

static bool fb_selected(const struct fb_opts *o, const char *name)
{
	char key[64];

	if (!o->only[0])
		return true;
	snprintf(key, sizeof(key), ",%s,", name);
	return strstr(o->only, key) != NULL;
}

int cmd_filebench(int argc, char **argv)
{
	struct fb_opts o;
	unsigned char *buf;
	char a[32], b[32];
	struct stat st;
	int r, fails = 0;
	size_t i;

	r = fb_parse(argc, argv, &o);
	if (r >= 0)
		return r;
	if (stat(o.dir, &st) || !S_ISDIR(st.st_mode) || access(o.dir, W_OK)) {
		log_err("--dir %s: not a writable directory", o.dir);
		return 2;
	}
	buf = mmap(NULL, o.bs, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		log_err("cannot allocate a %llu-byte buffer",
			(unsigned long long)o.bs);
		return 1;
	}
	fb_fill(buf, o.bs);
	io_install_signals();
	if (o.csv)
		printf("path,run,bs,bytes,mode,seconds,mib_per_s,cpu_usr_pct,"
		       "cpu_sys_pct,ctx,fsync_seconds,content,error\n");
	else if (!o.json)
		printf("filebench: %s per path, bs %s, %s, end fsync counted, "
		       "%u run%s, dir %s (%s)\n%-14s %8s %-18s %6s %6s %7s %8s  "
		       "%s\n", opt_fmt_size(o.size, a, sizeof(a)),
		       opt_fmt_size(o.bs, b, sizeof(b)),
		       o.rewrite ? "rewriting an existing file" :
				   "a new file each run", o.repeat,
		       o.repeat > 1 ? "s" : "", o.dir, fb_fstype(o.dir), "path",
		       "MiB/s", " [min..max]", "usr%", "sys%", "ctx", "fsync s",
		       "content");
	for (i = 0; i < FB_NPATHS && !io_stop_signal; i++)
		if (fb_selected(&o, fb_paths[i].name))
			fails += fb_path_run(&fb_paths[i], &o, buf);
	munmap(buf, o.bs);
	if (io_stop_signal) {
		log_err("interrupted by %s", strsignal(io_stop_signal));
		return 1;
	}
	return fails ? 1 : 0;
}
