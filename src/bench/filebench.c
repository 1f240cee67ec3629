// SPDX-License-Identifier: MIT
/*
 * dnd filebench: the fio job of the 2006 thread (write() vs splice() into a
 * file) grown into every file path dnd has. Each path is a method's file half
 * (its put hook, the same code the receivers run) driven by xfer_land,
 * timed from the first write to the end of the final fsync (fio's
 * end_fsync=1), on a new file or rewriting an existing one. Content is
 * checked afterwards.
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

#include "bench/filebench.h"
#include "cli/opts.h"
#include "core/csv.h"
#include "core/io.h"
#include "core/json.h"
#include "core/log.h"
#include "core/stats.h"
#include "xfer/method.h"
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

/* One timed run of one path. */
struct fb_run {
	double seconds, fsync_s, usr_pct, sys_pct, mibps, mbps;
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

/* fb_stamp's shape for the driver's xfer_land. */
static void fb_stamp_piece(unsigned char *buf, size_t n, uint64_t i, void *arg)
{
	fb_stamp(buf, n, i);
}

/* Writes o->size bytes through the path's put hook (the driver's
 * xfer_land), then fsyncs; fills run with the timing. */
static int fb_write(struct dnd_xfer *x, unsigned char *buf,
		    const struct fb_opts *o, struct fb_run *run)
{
	struct dnd_sample a, b;
	struct dnd_cost c;
	double f0;
	int r;

	stats_sample(&a);
	r = xfer_land(x, o->size, buf, fb_stamp_piece, NULL);
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
	run->mbps = c.wall > 0 ? (double)x->done / c.wall / 1e6 : 0;
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
			 x && x->err_op[0] ? x->err_op : "write",
			 strerror(-err));
}

/* One run of one path into `file`. 0, or -errno with run->error set. */
static int fb_run_one(const struct fb_path *p, const struct dnd_method *m,
		      const char *file, const struct fb_opts *o,
		      unsigned char *buf, struct fb_run *run)
{
	int flags = O_RDWR | O_CLOEXEC | (p->direct ? O_DIRECT : 0);
	const struct xfer_cfg c = {
		.m = m,
		.ep = DND_EP_FILE,
		.fmode = S_IFREG,
		.bsz = o->bs,
		.splice_flags = p->splice_flags,
	};
	struct xfer t = { 0 };
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
	r = xfer_open(&t, &c, 1);
	if (!r) {
		xfer_stream(&t, 0, -1, fd, 0, XFER_LENGTH, o->size);
		r = xfer_setup(&t);
	}
	if (!r)
		r = fb_write(&t.st[0], buf, o, run);
	if (r)
		fb_error(run, p, t.st ? &t.st[0] : NULL, r);
	xfer_close(&t);
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
	return stats_median(v, n, NULL, NULL);
}

static void fb_emit_json(const struct fb_path *p, unsigned int i,
			 const struct fb_run *run, const struct fb_opts *o,
			 const char *why)
{
	struct json j;

	json_begin_doc(&j, stdout, "filebench_run");
	json_str(&j, "path", p->name);
	json_str(&j, "what", p->what);
	json_u64(&j, "run", i);
	json_u64(&j, "bs_bytes", o->bs);
	json_u64(&j, "bytes", o->size);
	json_str(&j, "mode", o->rewrite ? "rewrite" : "fresh");
	json_bool(&j, "ok", !why && !run->error[0]);
	json_str(&j, "error", why ? why : run->error[0] ? run->error : NULL);
	if (!why && !run->error[0]) {
		json_f64(&j, "seconds", run->seconds);
		json_f64(&j, "mb_per_s", run->mbps);
		json_f64(&j, "mib_per_s", run->mibps);
		json_f64(&j, "cpu_user_pct", run->usr_pct);
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
	bool ok = !err[0];
	struct csv_row r;

	csv_row_begin(&r, stdout);
	csv_str(&r, p->name);
	csv_u64(&r, i);
	csv_u64(&r, o->bs);
	csv_u64(&r, o->size);
	csv_str(&r, o->rewrite ? "rewrite" : "fresh");
	csv_f64(&r, ok, run->seconds);
	csv_f64(&r, ok, run->mbps);
	csv_f64(&r, ok, run->mibps);
	csv_f64(&r, ok, run->usr_pct);
	csv_f64(&r, ok, run->sys_pct);
	if (ok)
		csv_i64(&r, run->ctx);
	else
		csv_empty(&r, 1);
	csv_f64(&r, ok, run->fsync_s);
	csv_str(&r, ok ? run->content : NULL);
	csv_str(&r, ok ? NULL : err);
	csv_row_end(&r);
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
	double mb[64], mib[64], usr[64], sys[64], fs[64], ctx[64], lo, hi;
	unsigned int i;

	if (err) {
		printf("%-14s %s\n", p->name, err);
		return;
	}
	for (i = 0; i < n; i++) {
		mb[i] = runs[i].mbps;
		mib[i] = runs[i].mibps;
		usr[i] = runs[i].usr_pct;
		sys[i] = runs[i].sys_pct;
		fs[i] = runs[i].fsync_s;
		ctx[i] = (double)runs[i].ctx;
	}
	lo = hi = mb[0];
	for (i = 1; i < n; i++) {
		lo = mb[i] < lo ? mb[i] : lo;
		hi = mb[i] > hi ? mb[i] : hi;
	}
	/* MB/s first, as everywhere; MiB/s beside it, for --bs 64Ki. */
	printf("%-14s %8.1f [%7.1f..%7.1f] %8.1f %6.1f %6.1f %7.0f %8.3f  %s\n",
	       p->name, fb_median(mb, n), lo, hi, fb_median(mib, n),
	       fb_median(usr, n),
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

static bool fb_selected(const struct fb_opts *o, const char *name)
{
	char key[64];

	if (!o->only[0])
		return true;
	snprintf(key, sizeof(key), ",%s,", name);
	return strstr(o->only, key) != NULL;
}

uint64_t filebench_need(const struct fb_opts *o)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < FB_NPATHS; i++)
		n += fb_selected(o, fb_paths[i].name);
	return o->size * (o->keep ? n : !!n);
}

void filebench_list(FILE *f)
{
	size_t i;

	for (i = 0; i < FB_NPATHS; i++)
		fprintf(f, "  %-14s %s\n", fb_paths[i].name, fb_paths[i].what);
}

bool filebench_known(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < FB_NPATHS; i++)
		if (strlen(fb_paths[i].name) == len &&
		    !strncmp(fb_paths[i].name, name, len))
			return true;
	return false;
}

/* Every selected path; o is checked (cmd_filebench). 0, or 1 if one failed. */
int filebench_run(const struct fb_opts *o)
{
	unsigned char *buf;
	char a[32], b[32];
	int fails = 0;
	size_t i;

	buf = mmap(NULL, o->bs, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		log_err("cannot allocate a %llu-byte buffer",
			(unsigned long long)o->bs);
		return 1;
	}
	fb_fill(buf, o->bs);
	io_install_signals();
	if (o->csv)
		printf("path,run,bs_bytes,bytes,mode,seconds,mb_per_s,mib_per_s,"
		       "cpu_user_pct,cpu_sys_pct,ctx,fsync_seconds,content,"
		       "error\n");
	else if (!o->json)
		printf("filebench: %s per path, bs %s, %s, end fsync counted, "
		       "%u run%s, dir %s (%s)\n%-14s %8s %-18s %8s %6s %6s %7s "
		       "%8s  %s\n", opt_fmt_size(o->size, a, sizeof(a)),
		       opt_fmt_size(o->bs, b, sizeof(b)),
		       o->rewrite ? "rewriting an existing file" :
				   "a new file each run", o->repeat,
		       o->repeat > 1 ? "s" : "", o->dir, fb_fstype(o->dir), "path",
		       "MB/s", " [min..max]", "MiB/s", "usr%", "sys%", "ctx",
		       "fsync s",
		       "content");
	for (i = 0; i < FB_NPATHS && !io_stop_signal; i++)
		if (fb_selected(o, fb_paths[i].name))
			fails += fb_path_run(&fb_paths[i], o, buf);
	munmap(buf, o->bs);
	if (io_stop_signal) {
		log_err("interrupted by %s", strsignal(io_stop_signal));
		return 1;
	}
	return fails ? 1 : 0;
}
