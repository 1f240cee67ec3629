// SPDX-License-Identifier: MIT
/*
 * Command line of `dnd probe`: the full report, or --require NAME,... for
 * scripts; the checks and the report live in src/probe/.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_probe.h"
#include "cli/opt_help.h"
#include "cli/opt_parse.h"
#include "core/log.h"
#include "probe/probe.h"
#include "probe/probe_report.h"
#include "xfer/method.h"

struct probe_opts {
	bool json;
	char *require;		/* comma list, owned; NULL: full report */
};

/* --require, as often as given: the lists add up. */
static int probe_set_require(void *obj, const struct opt_def *d,
			     const char *opt, const char *arg)
{
	struct probe_opts *o = obj;
	size_t have = o->require ? strlen(o->require) : 0;
	char *s = arg[0] ? realloc(o->require, have + strlen(arg) + 2) : NULL;

	if (!s) {
		log_err("%s needs a name list, e.g. --require "
			"splice,msg-zerocopy", opt);
		return 1;
	}
	if (have)
		s[have++] = ',';
	strcpy(s + have, arg);
	o->require = s;
	return 0;
}

static const struct opt_def probe_table[] = {
	{ .name = "json", .letter = 'j', .type = DND_OPT_FLAG,
	  .group = "Options", .help = "print one JSON object instead of the "
	  "table", .off = offsetof(struct probe_opts, json),
	  .width = sizeof(bool) },
	{ .name = "require", .letter = 'r', .type = DND_OPT_CALL,
	  .set = probe_set_require, .metavar = "LIST", .group = "Options",
	  .help = "check only these names: exit 0 when all are present, 77 "
	  "when any is missing (which and why on stderr)" },
	{ .name = NULL },
};

/* The names --require knows, after the options. */
static void probe_help_names(FILE *f)
{
	const struct dnd_method *const *m;
	const struct probe_feature *p;
	char line[512];
	size_t off = 0;

	for (m = method_all(); *m && off < sizeof(line); m++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s",
					off ? ", " : "Names for --require: the "
					"methods (", (*m)->name);
	if (off < sizeof(line))
		snprintf(line + off, sizeof(line) - off, "), and:");
	fputc('\n', f);
	opt_wrap(f, 0, 0, line);
	for (p = probe_features(); p->name; p++)
		fprintf(f, "  %-21s %s\n", p->name, p->what);
}

static const struct opt_part probe_parts[] = {
	{ probe_table, 0 },
	{ NULL, 0 },
};

/* --json with --require, and words that are not options. */
static void probe_check(struct opt_state *st, void *obj)
{
	const struct probe_opts *o = obj;

	if (o->json && o->require) {
		log_err("--json and --require do not mix: --require answers "
			"with its exit code; drop one");
		st->bad++;
	}
	if (st->nargs) {
		log_err("probe takes no argument ('%s'); give names with "
			"--require", st->args[0]);
		st->bad++;
	}
}

static const struct opt_cmd probe_cmd = {
	.name = "probe",
	.usage = "dnd probe [--json] [--require NAME[,NAME...]]",
	.about = "Reports what this kernel and this process can do: kernel "
		 "and pipe limits, each method's usability, io_uring opcodes, "
		 "zero copy, and the splice behaviours the relay relies on, "
		 "checked live over loopback TCP (each check is bounded to "
		 "about 1 s).",
	.notes = "Exit: 0 done, 2 usage error or unknown name, 77 a required "
		 "name is missing.",
	.parts = probe_parts,
	.help_more = probe_help_names,
	.check = probe_check,
};

int cmd_probe(int argc, char **argv)
{
	struct probe_opts o = { 0 };
	struct opt_state st;
	int rc;

	rc = opt_parse(&probe_cmd, &o, argc, argv, &st);
	if (rc < 0)
		rc = o.require ? probe_require(o.require) :
				 probe_report(o.json);
	free(o.require);
	return rc;
}
