// SPDX-License-Identifier: MIT
/*
 * `dnd probe`: prints what this kernel and process can do (table or one JSON
 * object), or with --require answers yes/no for scripts: exit 0 or 77.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd_probe.h"
#include "core/json.h"
#include "core/log.h"
#include "xfer/method.h"
#include "probe/probe.h"

#define PROBE_COLS 79

struct probe_opts {
	bool json;
	char *require; /* comma list, owned; NULL: full report */
};

static const struct option probe_longopts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "require", required_argument, NULL, 'r' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Prints s wrapped at PROBE_COLS, every line indented by ind spaces. */
static void wrap(int ind, const char *s)
{
	int width = PROBE_COLS - ind;

	while (*s) {
		int n = (int)strlen(s), cut = n;

		if (n > width) {
			for (cut = width; cut > 0 && s[cut] != ' '; cut--)
				;
			if (cut == 0)
				cut = width;
		}
		printf("%*s%.*s\n", ind, "", cut, s);
		s += cut;
		while (*s == ' ')
			s++;
	}
}

static void probe_usage(void)
{
	const struct dnd_method *const *m;
	const struct probe_feature *p;
	char line[512];
	size_t off = 0;

	printf("usage: dnd probe [--json] [--require NAME[,NAME...]]\n\n"
	       "Reports what this kernel and this process can do: kernel and "
	       "pipe limits,\neach method's usability, io_uring opcodes, zero "
	       "copy, and seed 004's kernel\nbehaviours checked live over "
	       "loopback TCP (each check is bounded to ~1 s).\n\n"
	       "  -j, --json            print one JSON object instead of the "
	       "table\n"
	       "  -r, --require LIST    check only these names: exit 0 when "
	       "all are present,\n"
	       "                        77 when any is missing (which and "
	       "why on stderr)\n  -h, --help            this text\n\n");
	for (m = method_all(); *m && off < sizeof(line); m++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s",
					off ? ", "
					    : "Names for --require: the "
					      "methods (",
					(*m)->name);
	if (off < sizeof(line))
		snprintf(line + off, sizeof(line) - off, "), and:");
	wrap(0, line);
	for (p = probe_features(); p->name; p++)
		printf("  %-21s %s\n", p->name, p->what);
	printf("\nExit: 0 done, 2 usage error or unknown name, 77 a required "
	       "name is missing.\n");
}

static void text_kernel(const struct probe_kernel *k)
{
	printf("kernel    %s, page size %ld, running as uid %u\n", k->release,
	       k->page_size, (unsigned int)geteuid());
	printf("pipes     a new pipe holds %lld bytes; F_SETPIPE_SZ granted up "
	       "to %lld\n",
	       k->pipe_default, k->pipe_largest);
	printf("          pipe-max-size %lld (this process %s exceed it)\n",
	       k->pipe_max_size,
	       k->pipe_beyond_max ? "CAN, with CAP_SYS_RESOURCE," : "cannot");
	printf("          pipe-user-pages-soft %lld, pipe-user-pages-hard "
	       "%lld%s\n",
	       k->pipe_user_pages_soft, k->pipe_user_pages_hard,
	       k->pipe_user_pages_hard == 0 ? " (no limit)" : "");
}

static void text_methods(void)
{
	const struct dnd_method *const *m;
	char why[256];
	int w = 0;

	for (m = method_all(); *m; m++)
		if ((int)strlen((*m)->name) > w)
			w = (int)strlen((*m)->name);
	printf("\nmethods (dnd send|recv -m NAME; --require NAME)\n");
	for (m = method_all(); *m; m++) {
		int e = method_probe(*m, why, sizeof(why));

		printf("  %-*s %-7s %s%s%s\n", w, (*m)->name,
		       e ? "NO" : "usable", (*m)->send ? "send" : "",
		       (*m)->send && (*m)->recv ? ", " : "",
		       (*m)->recv ? "recv" : "");
		if (why[0])
			wrap(w + 3, why);
	}
}

static void text_uring(const struct probe_uring *u)
{
	char line[512];
	size_t off = 0;

	printf("\nio_uring (IORING_REGISTER_PROBE)\n");
	wrap(2, u->why);
	if (u->err)
		return;
	for (int i = 0; i < u->nops && off < sizeof(line); i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					"%s%s %s", i ? ", " : "", u->op[i].name,
					u->op[i].ok ? "yes" : "NO");
	wrap(2, line);
}

/* One block per feature (seed == false) or per seed behaviour. */
static void text_features(const struct probe_result *res, bool seed)
{
	const struct probe_feature *f;
	int i;

	if (seed)
		printf("\nseed 004 behaviours (live over loopback, "
		       "TCP_MAXSEG 1448 as on Ethernet)\n");
	else
		printf("\nfeatures (dnd probe --require NAME)\n");
	for (f = probe_features(), i = 0; f->name; f++, i++) {
		if (!(f->flags & DND_PF_SEED) != !seed)
			continue;
		printf("  %-4s %-20s %s\n",
		       seed ? (res[i].err ? "FAIL" : "pass")
			    : (res[i].err ? "NO" : "yes"),
		       f->name, f->what);
		wrap(7, res[i].why);
	}
}

static void json_ll(struct json *j, const char *key, long long v)
{
	if (v < 0)
		json_str(j, key, NULL);
	else
		json_i64(j, key, v);
}

static void json_kernel(struct json *j, const struct probe_kernel *k)
{
	/* "machine": json_begin_doc() writes "kernel", the release. */
	json_obj_begin(j, "machine");
	json_str(j, "release", k->release);
	json_i64(j, "page_size_bytes", k->page_size);
	json_ll(j, "pipe_max_bytes", k->pipe_max_size);
	json_ll(j, "pipe_user_pages_soft", k->pipe_user_pages_soft);
	json_ll(j, "pipe_user_pages_hard", k->pipe_user_pages_hard);
	json_ll(j, "pipe_default_bytes", k->pipe_default);
	json_ll(j, "pipe_largest_bytes", k->pipe_largest);
	json_bool(j, "pipe_beyond_max", k->pipe_beyond_max);
	json_ll(j, "io_uring_disabled", k->io_uring_disabled);
	json_u64(j, "euid", geteuid());
	json_obj_end(j);
}

static void json_methods(struct json *j)
{
	const struct dnd_method *const *m;
	char why[256];

	json_arr_begin(j, "methods");
	for (m = method_all(); *m; m++) {
		int e = method_probe(*m, why, sizeof(why));

		json_obj_begin(j, NULL);
		json_str(j, "name", (*m)->name);
		json_bool(j, "usable", !e);
		json_bool(j, "send", (*m)->send);
		json_bool(j, "recv", (*m)->recv);
		json_str(j, "why", why[0] ? why : NULL);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_uring(struct json *j, const struct probe_uring *u)
{
	json_obj_begin(j, "io_uring");
	json_bool(j, "built", u->built);
	json_bool(j, "usable", !u->err);
	json_str(j, "why", u->why);
	json_i64(j, "last_op", u->last_op);
	json_obj_begin(j, "opcodes");
	for (int i = 0; i < u->nops; i++)
		json_bool(j, u->op[i].name, u->op[i].ok);
	json_obj_end(j);
	json_obj_end(j);
}

static void json_result(struct json *j, const struct probe_feature *f,
			const struct probe_result *r, const char *okkey)
{
	json_obj_begin(j, f->name);
	json_bool(j, okkey, !r->err);
	json_i64(j, "errno", -r->err);
	json_str(j, "why", r->why);
	for (int i = 0; i < DND_PROBE_NVAL && f->keys[i]; i++)
		if (r->val[i] == DND_PROBE_UNSET)
			json_str(j, f->keys[i], NULL);
		else
			json_i64(j, f->keys[i], r->val[i]);
	json_obj_end(j);
}

static void json_features(struct json *j, const struct probe_result *res,
			  bool seed)
{
	const struct probe_feature *f;
	int i;

	json_obj_begin(j, seed ? "seed004" : "features");
	for (f = probe_features(), i = 0; f->name; f++, i++)
		if (!(f->flags & DND_PF_SEED) == !seed)
			json_result(j, f, &res[i], seed ? "pass" : "present");
	json_obj_end(j);
}

static int probe_report(const struct probe_opts *o)
{
	const struct probe_feature *f;
	struct probe_result *res;
	struct probe_kernel k;
	struct probe_uring u;
	struct json j;
	size_t n = 0;

	for (f = probe_features(); f->name; f++)
		n++;
	res = calloc(n, sizeof(*res));
	if (!res) {
		log_err("out of memory");
		return 1;
	}
	probe_kernel(&k);
	probe_uring(&u);
	for (f = probe_features(), n = 0; f->name; f++, n++)
		probe_run(f, &res[n]);
	if (o->json) {
		json_begin_doc(&j, stdout, "probe");
		json_str(&j, "command", "probe");
		json_kernel(&j, &k);
		json_methods(&j);
		json_uring(&j, &u);
		json_features(&j, res, false);
		json_features(&j, res, true);
		json_end(&j);
	} else {
		text_kernel(&k);
		text_methods();
		text_uring(&u);
		text_features(res, false);
		text_features(res, true);
	}
	free(res);
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	log_err("cannot write the report to stdout");
	return 1;
}

struct probe_req {
	const char *name;
	int err;
	char why[320];
};

/* Checks every name; the present ones go to stdout first and the missing
 * ones last, to stderr, so a caller's `tail -n1` shows a reason. */
static int probe_check_all(struct probe_req *q, int n)
{
	int missing = 0;

	for (int i = 0; i < n; i++) {
		q[i].err = probe_feature(q[i].name, q[i].why, sizeof(q[i].why));
		if (!q[i].err)
			printf("%s: yes: %s\n", q[i].name, q[i].why);
	}
	fflush(stdout);
	for (int i = 0; i < n; i++)
		if (q[i].err) {
			log_err("%s is missing: %s", q[i].name, q[i].why);
			missing++;
		}
	return missing ? 77 : 0;
}

/* Every name must be known (exit 2 otherwise) before any is checked. */
static int probe_require(const struct probe_opts *o)
{
	char *list = strdup(o->require), *tok, *save = NULL, names[1024];
	struct probe_req *q = NULL;
	int bad = 0, n = 0, rc = 1;

	if (list)
		q = calloc(strlen(list) / 2 + 1, sizeof(*q));
	if (!q) {
		log_err("out of memory");
		goto out;
	}
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		q[n++].name = tok;
		if (!probe_feature_find(tok) && !method_find(tok)) {
			log_err("--require: unknown name '%s'; known: %s", tok,
				probe_names(names, sizeof(names)));
			bad++;
		}
	}
	if (!n)
		log_err("--require needs at least one name; known: %s",
			probe_names(names, sizeof(names)));
	rc = bad || !n ? 2 : probe_check_all(q, n);
out:
	free(q);
	free(list);
	return rc;
}

/* Appends a --require argument to the list; 0 or -ENOMEM. */
static int probe_add(struct probe_opts *o, const char *arg)
{
	size_t have = o->require ? strlen(o->require) : 0;
	char *s = realloc(o->require, have + strlen(arg) + 2);

	if (!s)
		return -ENOMEM;
	if (have)
		s[have++] = ',';
	strcpy(s + have, arg);
	o->require = s;
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	struct probe_opts o = { 0 };
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jr:h", probe_longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'j':
			o.json = true;
			break;
		case 'r':
			if (!optarg[0] || probe_add(&o, optarg)) {
				log_err("--require needs a name list, e.g. "
					"--require splice,msg-zerocopy");
				free(o.require);
				return 2;
			}
			break;
		case 'h':
			probe_usage();
			free(o.require);
			return 0;
		default:
			log_err("see 'dnd probe --help'");
			free(o.require);
			return 2;
		}
	}
	if (o.json && o.require) {
		log_err("--json and --require do not mix: --require answers "
			"with its exit code; drop one");
		free(o.require);
		return 2;
	}
	if (optind < argc) {
		log_err("probe takes no argument ('%s'); give names with "
			"--require",
			argv[optind]);
		free(o.require);
		return 2;
	}
	rc = o.require ? probe_require(&o) : probe_report(&o);
	free(o.require);
	return rc;
}
