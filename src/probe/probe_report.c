// SPDX-License-Identifier: MIT
/*
 * `dnd probe`'s answers: the full report (a table or one JSON object) and
 * the yes/no of --require for scripts (exit 0 or 77).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "core/log.h"
#include "probe/probe.h"
#include "probe/probe_report.h"
#include "xfer/method.h"

#define PROBE_COLS 79

/* Prints s wrapped at PROBE_COLS, every line indented by ind spaces. */
static void probe_wrap(int ind, const char *s)
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

static void probe_text_kernel(const struct probe_kernel *k)
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

static void probe_text_methods(void)
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
			probe_wrap(w + 3, why);
	}
}

static void probe_text_uring(const struct probe_uring *u)
{
	char line[512];
	size_t off = 0;

	printf("\nio_uring (IORING_REGISTER_PROBE)\n");
	probe_wrap(2, u->why);
	if (u->err)
		return;
	for (int i = 0; i < u->nops && off < sizeof(line); i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					"%s%s %s", i ? ", " : "", u->op[i].name,
					u->op[i].ok ? "yes" : "NO");
	probe_wrap(2, line);
}

/* One block per feature (relay == false) or per splice-relay behaviour. */
static void probe_text_features(const struct probe_result *res, bool relay)
{
	const struct probe_feature *f;
	int i;

	if (relay)
		printf("\nsplice behaviours the relay relies on, from "
		       "HAProxy's 2009 netdev thread (live over loopback, "
		       "TCP_MAXSEG 1448 as on Ethernet)\n");
	else
		printf("\nfeatures (dnd probe --require NAME)\n");
	for (f = probe_features(), i = 0; f->name; f++, i++) {
		if (!(f->flags & DND_PF_SPLICE_RELAY) != !relay)
			continue;
		printf("  %-4s %-20s %s\n",
		       relay ? (res[i].err ? "FAIL" : "pass")
			    : (res[i].err ? "NO" : "yes"),
		       f->name, f->what);
		probe_wrap(7, res[i].why);
	}
}

static void probe_json_ll(struct json *j, const char *key, long long v)
{
	if (v < 0)
		json_str(j, key, NULL);
	else
		json_i64(j, key, v);
}

static void probe_json_kernel(struct json *j, const struct probe_kernel *k)
{
	/* "machine": json_begin_doc() writes "kernel", the release. */
	json_obj_begin(j, "machine");
	json_str(j, "release", k->release);
	json_i64(j, "page_size_bytes", k->page_size);
	probe_json_ll(j, "pipe_max_bytes", k->pipe_max_size);
	probe_json_ll(j, "pipe_user_pages_soft", k->pipe_user_pages_soft);
	probe_json_ll(j, "pipe_user_pages_hard", k->pipe_user_pages_hard);
	probe_json_ll(j, "pipe_default_bytes", k->pipe_default);
	probe_json_ll(j, "pipe_largest_bytes", k->pipe_largest);
	json_bool(j, "pipe_beyond_max", k->pipe_beyond_max);
	probe_json_ll(j, "io_uring_disabled", k->io_uring_disabled);
	json_u64(j, "euid", geteuid());
	json_obj_end(j);
}

static void probe_json_methods(struct json *j)
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

static void probe_json_uring(struct json *j, const struct probe_uring *u)
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

static void probe_json_result(struct json *j, const struct probe_feature *f,
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

static void probe_json_features(struct json *j, const struct probe_result *res,
			  bool relay)
{
	const struct probe_feature *f;
	int i;

	json_obj_begin(j, relay ? "splice_relay" : "features");
	for (f = probe_features(), i = 0; f->name; f++, i++)
		if (!(f->flags & DND_PF_SPLICE_RELAY) == !relay)
			probe_json_result(j, f, &res[i], relay ? "pass" : "present");
	json_obj_end(j);
}

int probe_report(bool json)
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
	if (json) {
		json_begin_doc(&j, stdout, "probe");
		json_str(&j, "command", "probe");
		probe_json_kernel(&j, &k);
		probe_json_methods(&j);
		probe_json_uring(&j, &u);
		probe_json_features(&j, res, false);
		probe_json_features(&j, res, true);
		json_end(&j);
	} else {
		probe_text_kernel(&k);
		probe_text_methods();
		probe_text_uring(&u);
		probe_text_features(res, false);
		probe_text_features(res, true);
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
int probe_require(const char *req)
{
	char *list = strdup(req), *tok, *save = NULL, names[1024];
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
