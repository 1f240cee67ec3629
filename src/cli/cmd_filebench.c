// SPDX-License-Identifier: MIT
/* dnd filebench's command line; the bench itself is src/bench/filebench.c. */
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/filebench.h"
#include "cli/cmd_filebench.h"
#include "cli/opt_parse.h"
#include "cli/opts.h"
#include "core/log.h"

/* --paths: each name checked, kept as ",a,b," for the bench to select. */
static int fb_set_paths(void *obj, const struct opt_def *d, const char *opt,
			const char *arg)
{
	struct fb_opts *o = obj;
	int bad = 0;

	snprintf(o->only, sizeof(o->only), ",%s,", arg);
	for (char *p = o->only + 1; *p; p = strchr(p, ',') + 1) {
		size_t len = (size_t)(strchr(p, ',') - p);

		if (len && !filebench_known(p, len)) {
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
	  .group = "What is written", .def = "all", .metavar = "LIST",
	  .help = "comma list of the paths to run (listed below)" },
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

static const struct opt_part fb_parts[] = {
	{ fb_table, 0 },
	{ NULL, 0 },
};

static void fb_help_paths(FILE *f)
{
	fprintf(f, "\nPaths:\n");
	filebench_list(f);
}

/* Whether --dir has room for what the runs write; adds to st->bad. */
static void fb_check_room(struct opt_state *st, const struct fb_opts *o)
{
	uint64_t need = filebench_need(o), room;
	char a[32], b[32];
	struct statvfs vs;

	if (statvfs(o->dir, &vs))
		return;		/* the runs themselves will say what is wrong */
	room = (uint64_t)vs.f_bavail * vs.f_frsize;
	if (room >= need)
		return;
	log_err("--dir %s has %.1f %s free; the runs need %s (--size %s%s): "
		"give a smaller --size or another --dir", o->dir,
		(double)room / (room >> 30 ? 1 << 30 : 1 << 20),
		room >> 30 ? "GiB" : "MiB", opt_fmt_size(need, a, sizeof(a)),
		opt_fmt_size(o->size, b, sizeof(b)), o->keep ?
		" for each path, kept with --keep" : "");
	st->bad++;
}

/* Words that are not options, --json with --csv, the directory. */
static void fb_check(struct opt_state *st, void *obj)
{
	const struct fb_opts *o = obj;
	struct stat sb;

	if (st->nargs) {
		log_err("filebench takes no file argument ('%s'); use --dir",
			st->args[0]);
		st->bad++;
	}
	if (o->json && o->csv) {
		log_err("--json and --csv conflict; choose one");
		st->bad++;
	}
	if (stat(o->dir, &sb) || !S_ISDIR(sb.st_mode) || access(o->dir, W_OK)) {
		log_err("--dir %s: not a writable directory", o->dir);
		st->bad++;
	} else {
		fb_check_room(st, o);
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
	.help_more = fb_help_paths,
	.check = fb_check,
};

int cmd_filebench(int argc, char **argv)
{
	struct fb_opts o = { .bs = 65536, .size = 8ULL << 30, .repeat = 1,
			     .verify = true, .dir = "." };
	struct opt_state st;
	int r = opt_parse(&fb_cmd, &o, argc, argv, &st);

	return r >= 0 ? r : filebench_run(&o);
}
