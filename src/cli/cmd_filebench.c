// SPDX-License-Identifier: MIT
/* dnd filebench's command line; the bench itself is src/bench/filebench.c. */
#include <sys/stat.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/filebench.h"
#include "cli/cmd_filebench.h"
#include "cli/opts.h"
#include "core/log.h"

static void fb_usage(FILE *f)
{
	fprintf(f, "usage: dnd filebench [options]\n\n"
		"Times every way dnd puts data into a file, from the first write "
		"to the end\nof the final fsync (fio's end_fsync=1), then reads "
		"the file back to check it.\n\n"
		"  --bs SIZE        bytes per call (default 64Ki)\n"
		"  --size SIZE      bytes per run (default 8Gi, about 10 s a path "
		"on this disk)\n"
		"  --fresh          a new file each run (default)\n"
		"  --rewrite        overwrite an existing file of the same size "
		"in place\n"
		"  --repeat N       runs per path (default 1): median [min..max]\n"
		"  --dir PATH       where the files go (default .)\n"
		"  --paths LIST     comma list of paths to run (default all)\n"
		"  --no-verify      skip the read-back content check\n"
		"  --keep           leave the files (.dnd-filebench.*) in place\n"
		"  --json, --csv    one line per run instead of the table\n\n"
		"Paths:\n");
	filebench_list(f);
}

static int fb_parse(int argc, char **argv, struct fb_opts *o)
{
	static const struct option lo[] = {
		{ "bs", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "fresh", no_argument, NULL, 'f' },
		{ "rewrite", no_argument, NULL, 'r' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "dir", required_argument, NULL, 'd' },
		{ "paths", required_argument, NULL, 'p' },
		{ "no-verify", no_argument, NULL, 'V' },
		{ "keep", no_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, bad = 0;

	*o = (struct fb_opts){ .bs = 65536, .size = 8ULL << 30, .repeat = 1,
			       .verify = true, .dir = "." };
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'b':
		case 's':
			if (opt_parse_size(optarg, &v) || !v ||
			    v > (c == 'b' ? 1ULL << 30 : 1ULL << 50)) {
				log_err("--%s '%s': give a size from 1 to %s, "
					"e.g. 64Ki or 4Gi", c == 'b' ? "bs" : "size",
					optarg, c == 'b' ? "1Gi" : "1Pi");
				bad++;
			} else if (c == 'b') {
				o->bs = v;
			} else {
				o->size = v;
			}
			break;
		case 'f':
		case 'r':
			o->rewrite = c == 'r';
			break;
		case 'n':
			if (opt_parse_uint(optarg, 64, &v) || !v) {
				log_err("--repeat '%s': give 1 to 64", optarg);
				bad++;
			}
			o->repeat = (unsigned int)v;
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'p':
			snprintf(o->only, sizeof(o->only), ",%s,", optarg);
			break;
		case 'V':
			o->verify = false;
			break;
		case 'k':
			o->keep = true;
			break;
		case 'j':
		case 'c':
			*(c == 'j' ? &o->json : &o->csv) = true;
			break;
		case 'h':
			fb_usage(stdout);
			return 0;
		case ':':
			log_err("%s needs a value", argv[optind - 1]);
			bad++;
			break;
		default:
			log_err("unknown option '%s'", argv[optind - 1]);
			bad++;
		}
	}
	if (optind < argc) {
		log_err("filebench takes no file argument ('%s'); use --dir",
			argv[optind]);
		bad++;
	}
	if (o->json && o->csv) {
		log_err("--json and --csv conflict; choose one");
		bad++;
	}
	for (char *p = o->only + 1; *o->only && *p; p = strchr(p, ',') + 1) {
		size_t len = (size_t)(strchr(p, ',') - p);

		if (len && !filebench_known(p, len)) {
			log_err("--paths: unknown path '%.*s'; see 'dnd filebench "
				"--help'", (int)len, p);
			bad++;
		}
	}
	if (bad)
		log_err("see 'dnd filebench --help'");
	return bad ? 2 : -1;
}

int cmd_filebench(int argc, char **argv)
{
	struct fb_opts o;
	struct stat st;
	int r;

	r = fb_parse(argc, argv, &o);
	if (r >= 0)
		return r;
	if (stat(o.dir, &st) || !S_ISDIR(st.st_mode) || access(o.dir, W_OK)) {
		log_err("--dir %s: not a writable directory", o.dir);
		return 2;
	}
	return filebench_run(&o);
}
